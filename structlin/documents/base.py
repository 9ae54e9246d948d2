"""The shared ground of the document readers: the :class:`Document` type every reader yields, the
decoding of files and streams into numbered lines (or one whole text) with errors located by line,
and what a damaged archive raises and how it is reported. They live apart from the readers because
both the generic formats (:mod:`structlin.documents.formats`) and the NLTK corpus readers
(:mod:`structlin.documents.nltk_corpora`) decode files and read archive members the same way.
"""

from __future__ import annotations

import codecs
import gzip
import io
import lzma
import os
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from structlin.errors import CorpusFormatError
from structlin.readers import open_binary, open_text

Source = str | os.PathLike
NumberedLines = Iterator[tuple[int, str]]


@dataclass
class Document:
    """One labelled instance for a classifier."""

    text: str | tuple[str, ...] | dict[int, float]  # raw text; a tuple of fields (ppattach); features (svmlight)
    label: str | None
    source: str | None = None  # file path, or "ARCHIVE:MEMBER"
    line: int | None = None  # 1-based line in the source, where meaningful


# --- Decoding ----------------------------------------------------------------------------------------


def _check_codec(encoding: str, errors: str = "strict") -> None:
    """Reject an unknown encoding or error handler at once."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f"unknown encoding {encoding!r}") from None
    try:
        codecs.lookup_error(errors)
    except LookupError:
        raise ValueError(f"unknown errors handler {errors!r}; accepted: strict, replace, ignore, ...") from None


def _decode(data: bytes, encoding: str, errors: str, source: str) -> str:
    """Decode a whole file; a decoding error is located by the line and column of its first bad byte."""
    try:
        text = data.decode(encoding, errors)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise CorpusFormatError(
            source, line,
            f"invalid {encoding}: byte {data[err.start]:#04x} at position {column} of the line "
            f"(expected {encoding} text; pass another encoding, e.g. encoding='latin-1', or errors='replace')",
        ) from None
    return text.removeprefix("\ufeff")


def _ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` reads ASCII letters and line ends as ASCII does (so bytes split into lines)."""
    try:
        return b"a\r\n".decode(encoding) == "a\r\n"
    except UnicodeDecodeError:
        return False


def _decoded_lines(stream: IO, name: str, encoding: str) -> NumberedLines:
    """Number, decode and strip the lines of an open binary (or text) stream, as ``open_text`` does."""
    number = 0
    try:
        if isinstance(stream, io.TextIOBase) or not _ascii_compatible(encoding):
            text = stream if isinstance(stream, io.TextIOBase) else io.TextIOWrapper(stream, encoding, newline="")
            try:
                for number, line in enumerate(text, 1):
                    yield number, (line.removeprefix("\ufeff") if number == 1 else line).rstrip("\r\n")
            except UnicodeDecodeError as err:  # decoded ahead of the lines: no exact place
                raise CorpusFormatError(name, None, f"invalid {encoding} after line {number}: {err}") from None
            return
        for number, raw in enumerate(stream, 1):
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as err:
                raise CorpusFormatError(
                    name, number,
                    f"invalid {encoding}: byte {raw[err.start]:#04x} at position {err.start + 1} of the line "
                    f"(expected {encoding} text)",
                ) from None
            yield number, (line.removeprefix("\ufeff") if number == 1 else line).rstrip("\r\n")
    except (EOFError, zlib.error, gzip.BadGzipFile, zipfile.BadZipFile) as err:
        raise CorpusFormatError(
            name, number + 1, f"corrupt compressed data: {err} (expected a complete, intact file)"
        ) from None


def _name(source: Source | IO) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


@contextmanager
def _open_lines(source: Source | IO, encoding: str) -> Iterator[NumberedLines]:
    """Numbered lines of a file in ``encoding``: :func:`structlin.readers.open_text` for UTF-8."""
    if codecs.lookup(encoding).name == "utf-8":
        with open_text(source) as lines:
            yield lines
        return
    name = _name(source)
    if not isinstance(source, (str, os.PathLike)):
        yield _decoded_lines(source, name, encoding)
        return
    with open_binary(name) as file:
        yield _decoded_lines(file, name, encoding)


# --- Damaged archives --------------------------------------------------------------------------------

# What reading a damaged archive raises (OSError: bz2 and gzip report bad data as OSError subclasses).
_DAMAGED = (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, OSError)


def _damaged(source: str, err: BaseException, what: str) -> CorpusFormatError:
    message = " ".join(str(err).split()) or type(err).__name__
    return CorpusFormatError(source, None, f"damaged or truncated archive: {message} (expected {what})")
