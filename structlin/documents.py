"""Readers of labelled documents for classifiers: folder trees and archives, TSV/CSV, fastText,
SVMlight, and the NLTK corpora movie_reviews (or any categorized corpus), qc, ppattach and names.

Every reader is a generator of :class:`Document` objects and streams: a folder tree or an archive is
read one file (member) at a time and never unpacked to disk, a line file one line at a time.
Invalid options raise ``ValueError`` at once; file errors come with the first document asked for.
Malformed input raises :class:`~structlin.errors.CorpusFormatError` located as ``PATH:LINE`` (lines
counted from 1) or ``ARCHIVE:MEMBER[:LINE]``, saying what was found and what was expected; a
missing path raises :class:`~structlin.errors.CorpusNotFoundError`. Nothing is skipped silently
except blank lines of line formats (and ``#`` comment lines of SVMlight), which hold no document.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import lzma
import os
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from structlin.errors import CorpusFormatError, CorpusNotFoundError, UnknownNameError
from structlin.readers import open_binary, open_text

__all__ = [
    "ARCHIVE_SUFFIXES", "STRIP_PARTS", "Document", "read_fasttext", "read_folders", "read_names",
    "read_nltk_categorized", "read_ppattach", "read_qc", "read_svmlight", "read_tsv", "strip_usenet",
]

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


# --- Usenet posts: headers, signatures, quotes ------------------------------------------------------

STRIP_PARTS = ("headers", "footers", "quotes")

# A quoted line, or one that introduces a quotation (scikit-learn's rule, applied to each line).
_QUOTE_LINE = re.compile(r"^(?:In article|Quoted from|\||>)|writes in|writes:|wrote:|says:|said:")


def _strip_parts(strip) -> frozenset[str]:
    """Check a ``strip`` option: one of, or a collection of, :data:`STRIP_PARTS`."""
    parts = (strip,) if isinstance(strip, str) else tuple(strip)
    for part in parts:
        if part not in STRIP_PARTS:
            raise ValueError(f"unknown strip value {part!r}; accepted: {', '.join(STRIP_PARTS)}")
    return frozenset(parts)


def strip_usenet(text: str, strip: Iterable[str] | str) -> str:
    """Remove the parts ``strip`` names from a Usenet post, as scikit-learn's ``fetch_20newsgroups(remove=)``.

    They are removed in this order, whatever the order given:

    * ``headers``: everything up to and including the first empty line (all of it if there is none);
    * ``footers``: the signature block: everything from the last line that is empty or made of
      hyphens only (``--``), in the text stripped of surrounding whitespace; unchanged when that line
      is the first one or there is none;
    * ``quotes``: every line that starts with ``>``, ``|``, ``In article`` or ``Quoted from``, or that
      contains ``writes:``, ``writes in``, ``wrote:``, ``says:`` or ``said:``.
    """
    parts = _strip_parts(strip)
    if "headers" in parts:
        blank = text.find("\n\n")
        text = "" if blank < 0 else text[blank + 2:]
    if "footers" in parts:
        lines = text.strip().split("\n")
        for number in range(len(lines) - 1, 0, -1):  # the first line never starts a signature
            if not lines[number].strip().strip("-"):
                text = "\n".join(lines[:number])
                break
    if "quotes" in parts:
        text = "\n".join(line for line in text.split("\n") if not _QUOTE_LINE.search(line))
    return text


# --- One folder per class: trees and archives ----------------------------------------------------

# Archive suffixes and how to open them ("zip", or a tarfile mode).
_ARCHIVES = {
    ".tar.gz": "r:gz", ".tgz": "r:gz", ".tar": "r:", ".tar.bz2": "r:bz2", ".tbz2": "r:bz2",
    ".tar.xz": "r:xz", ".txz": "r:xz", ".zip": "zip",
}
ARCHIVE_SUFFIXES = tuple(_ARCHIVES)
# What reading a damaged archive raises (OSError: bz2 and gzip report bad data as OSError subclasses).
_DAMAGED = (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, OSError)
_BLOCK = tarfile.BLOCKSIZE


def read_folders(
    path: Source, *, encoding: str = "utf-8", errors: str = "strict", strip=(), subset: str | None = None
) -> Iterator[Document]:
    """Read a one-folder-per-class tree: ``path/[subset/]<label>/<file>``, one document per file.

    ``path`` is a directory or an archive (``.tar.gz``, ``.tgz``, ``.tar``, ``.tar.bz2``, ``.tar.xz``,
    ``.zip``; another name is recognised by its content) read member by member, never unpacked.
    ``subset`` picks a top-level folder (e.g. ``"20news-bydate-train"``); the label is the first path
    component below it (or below the root), and the document is any file below that label folder,
    nested folders included. Files are read in sorted path order, so a tree and any archive of it give
    the same documents in the same order. A file outside a label folder is an error.

    Files are decoded with ``encoding`` and ``errors`` (as ``bytes.decode``); with ``errors="strict"``
    an undecodable byte is an error located by file (``ARCHIVE:MEMBER``) and line. ``strip`` names
    parts of Usenet posts to remove (see :func:`strip_usenet`). ``Document.source`` is the file path,
    or ``ARCHIVE:MEMBER``. A damaged archive is an error naming it (and the member, when known); the
    integrity of a compressed tar archive (its CRC) is checked before the first document.
    """
    parts = _strip_parts(strip)
    _check_codec(encoding, errors)
    prefix: tuple[str, ...] = ()
    if subset is not None:
        prefix = tuple(p for p in str(subset).split("/") if p not in ("", "."))
        if not prefix:
            raise ValueError(f"invalid subset {subset!r} (expected a folder name, or None)")
    return _read_folders(path, encoding, errors, parts, prefix)


def _read_folders(path: Source, encoding: str, errors: str, parts: frozenset[str],
                  prefix: tuple[str, ...]) -> Iterator[Document]:
    name = os.fspath(path)
    if os.path.isdir(name):
        files = _tree_files(name, prefix)
    elif os.path.isfile(name):
        files = _archive_files(name, prefix)
    else:
        raise CorpusNotFoundError(f"corpus not found: {name}")
    for label, source, data in files:
        text = _decode(data, encoding, errors, source)
        yield Document(strip_usenet(text, parts) if parts else text, label, source)


def _layout(prefix: tuple[str, ...]) -> str:
    return "/".join([*prefix, "<label>", "<file>"])


def _tree_files(root: str, prefix: tuple[str, ...]) -> Iterator[tuple[str, str, bytes]]:
    """``(label, path, bytes)`` of every file of a folder tree, in sorted order."""
    base = os.path.join(root, *prefix)
    if prefix and not os.path.isdir(base):
        tops = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
        raise CorpusFormatError(
            root, None, f"no folder {'/'.join(prefix)!r} (expected one of the top-level folders: {', '.join(tops)})"
        )
    with os.scandir(base) as entries:
        labels = sorted(entries, key=lambda entry: entry.name)
    for entry in labels:
        if not entry.is_dir():
            raise CorpusFormatError(
                entry.path, None, f"a file outside any label folder (expected {_layout(prefix)} below {root})"
            )
    for entry in labels:
        for path in _walk(entry.path):
            with open(path, "rb") as file:
                yield entry.name, path, file.read()


def _walk(directory: str) -> Iterator[str]:
    """The files below ``directory``, in sorted order."""
    with os.scandir(directory) as entries:
        ordered = sorted(entries, key=lambda entry: entry.name)
    for entry in ordered:
        if entry.is_dir():
            yield from _walk(entry.path)
        elif entry.is_file():
            yield entry.path
        else:
            raise CorpusFormatError(entry.path, None, "neither a regular file nor a folder (a broken link?)")


def _archive_files(archive: str, prefix: tuple[str, ...]) -> Iterator[tuple[str, str, bytes]]:
    """``(label, ARCHIVE:MEMBER, bytes)`` of every file of an archive, in sorted order."""
    mode = next((mode for suffix, mode in _ARCHIVES.items() if archive.lower().endswith(suffix)), None)
    if mode is None:  # recognise the archive by its content
        mode = "zip" if zipfile.is_zipfile(archive) else "r:*"
    if mode == "zip":
        return _zip_files(archive, prefix)
    return _tar_files(archive, prefix, mode)


def _damaged(source: str, err: BaseException, what: str) -> CorpusFormatError:
    message = " ".join(str(err).split()) or type(err).__name__
    return CorpusFormatError(source, None, f"damaged or truncated archive: {message} (expected {what})")


def _select(archive: str, names: list[tuple[object, str]], prefix: tuple[str, ...]) -> list[tuple[str, object, str]]:
    """Keep the members below ``prefix`` and sort them by path: ``(label, member, name)`` triples."""
    chosen = []
    tops = set()
    for member, name in names:
        path = tuple(p for p in name.split("/") if p not in ("", "."))
        tops.add(path[0] if path else "")
        if path[: len(prefix)] != prefix:
            continue
        relative = path[len(prefix):]
        if len(relative) < 2:
            raise CorpusFormatError(
                f"{archive}:{name}", None, f"a file outside any label folder (expected {_layout(prefix)})"
            )
        chosen.append((relative, member, name))
    if prefix and not chosen:
        raise CorpusFormatError(
            archive, None,
            f"no folder {'/'.join(prefix)!r} in the archive (expected one of its top-level folders: "
            f"{', '.join(sorted(tops))})",
        )
    chosen.sort(key=lambda item: item[0])
    return [(relative[0], member, name) for relative, member, name in chosen]


def _zip_files(archive: str, prefix: tuple[str, ...]) -> Iterator[tuple[str, str, bytes]]:
    try:
        file = zipfile.ZipFile(archive)
    except _DAMAGED as err:
        raise _damaged(archive, err, "a zip archive") from None
    with file:
        members = [(info, info.filename) for info in file.infolist() if not info.is_dir()]
        for label, info, name in _select(archive, members, prefix):
            source = f"{archive}:{name}"
            if info.flag_bits & 0x1:
                raise CorpusFormatError(source, None, "encrypted member (expected an unencrypted zip archive)")
            try:
                data = file.read(info)
            except (*_DAMAGED, NotImplementedError) as err:  # zipfile: NotImplementedError = unsupported compression
                raise _damaged(source, err, "an intact zip member") from None
            yield label, source, data


def _tar_files(archive: str, prefix: tuple[str, ...], mode: str) -> Iterator[tuple[str, str, bytes]]:
    """The files of a tar archive in sorted order, read in two passes over a compressed stream.

    The first pass reads every header and the rest of the stream (so that the gzip/bz2/xz checksum
    is verified before any document is given); the second reads the chosen members in archive order
    and keeps those that arrive before their turn until it comes (none when the archive is sorted).
    """
    try:
        tar = tarfile.open(archive, mode)
    except _DAMAGED as err:
        raise _damaged(archive, err, "a tar archive") from None
    with tar:
        try:
            members = tar.getmembers()
            _check_tar_end(tar, archive, members)
        except CorpusFormatError:
            raise
        except _DAMAGED as err:
            after = f" after member {tar.members[-1].name}" if tar.members else ""
            raise _damaged(archive, f"{err}{after}", "a complete tar archive") from None
        files = []
        for member in members:
            if member.isreg() or member.issym() or member.islnk():
                files.append((member, member.name))
            elif not member.isdir():
                raise CorpusFormatError(
                    f"{archive}:{member.name}", None, "neither a regular file nor a folder (expected files in folders)"
                )
        ordered = _select(archive, files, prefix)
        turn = {id(member): rank for rank, (_, member, _) in enumerate(ordered)}
        waiting: dict[int, bytes] = {}
        due = 0
        for member, name in files:
            if id(member) not in turn:
                continue
            try:
                data = tar.extractfile(member).read()
            except (*_DAMAGED, KeyError, AttributeError) as err:
                raise _damaged(f"{archive}:{name}", err, "an intact tar member") from None
            waiting[turn[id(member)]] = data
            while due in waiting:
                label, _, due_name = ordered[due]
                yield label, f"{archive}:{due_name}", waiting.pop(due)
                due += 1
            if due == len(ordered):
                break


def _check_tar_end(tar: tarfile.TarFile, archive: str, members: list[tarfile.TarInfo]) -> None:
    """Check that a tar archive ends with its end-of-archive marker and only zeros after it.

    ``tarfile`` stops without complaint at a damaged or truncated header after the first member;
    reading to the end also makes a compressed stream verify its checksum.
    """
    stream = tar.fileobj
    stream.seek(tar.offset)
    block = stream.read(_BLOCK)
    after = f" after member {members[-1].name}" if members else ""
    if len(block) < _BLOCK or block.count(0) != _BLOCK:
        problem = "ends without an end-of-archive marker" if not block else f"unreadable header at byte {tar.offset}"
        raise _damaged(archive, f"{problem}{after}", "a complete tar archive")
    while chunk := stream.read(1 << 20):
        if chunk.count(0) != len(chunk):
            raise _damaged(archive, f"data after the end-of-archive marker{after}", "a single tar archive")


# --- Line formats: TSV/CSV, fastText, SVMlight ---------------------------------------------------------


def read_tsv(
    path: Source | IO,
    *,
    label_column: int | str = 0,
    text_column: int | str = 1,
    delimiter: str = "\t",
    header: bool = False,
    encoding: str = "utf-8",
) -> Iterator[Document]:
    """Read one document per row of a delimited file (``delimiter=","`` for CSV), with the csv module.

    Columns are counted from 0; with ``header`` the first row names the columns and
    ``label_column``/``text_column`` may be names. Quoted fields (``"a, b"``, ``""`` for a quote) may
    hold the delimiter and line breaks; a badly quoted field, a row with too few columns or an empty
    label is an error naming the row's first line. Empty lines are skipped, an empty text is an empty
    document, and further columns are ignored. ``Document.line`` is the row's first line.
    """
    if not (isinstance(delimiter, str) and len(delimiter) == 1):
        raise ValueError(f"delimiter must be one character, not {delimiter!r}")
    for role, column in (("label_column", label_column), ("text_column", text_column)):
        if isinstance(column, str) and not header:
            raise ValueError(f"{role}={column!r} names a column: that needs header=True")
        if not isinstance(column, str) and not (isinstance(column, int) and column >= 0):
            raise ValueError(f"{role} must be a column index >= 0 or a header name, not {column!r}")
    if label_column == text_column:
        raise ValueError(f"label_column and text_column are the same column ({label_column!r})")
    _check_codec(encoding)
    return _read_tsv(path, label_column, text_column, delimiter, header, encoding)


def _read_tsv(path, label_column, text_column, delimiter, header, encoding) -> Iterator[Document]:
    name = _name(path)
    kind = {"\t": "tab-separated", ",": "comma-separated"}.get(delimiter, f"{delimiter!r}-separated")
    with _open_lines(path, encoding) as lines:
        rows = csv.reader((text + "\n" for _, text in lines), delimiter=delimiter, strict=True)
        columns = None if header else (label_column, text_column)
        while True:
            start = rows.line_num + 1
            try:
                row = next(rows)
            except StopIteration:
                return
            except csv.Error as err:
                raise CorpusFormatError(
                    name, start, f"badly quoted field: {err} (expected a quoted field to end with a quote "
                    "followed by the delimiter or the end of the line)",
                ) from None
            if not row:
                continue
            if columns is None:
                columns = tuple(_header_index(row, column, name, start) for column in (label_column, text_column))
                continue
            label_index, text_index = columns
            if len(row) <= max(columns):
                raise CorpusFormatError(
                    name, start,
                    f"expected at least {max(columns) + 1} {kind} columns (label in column {label_index}, "
                    f"text in column {text_index}, counted from 0), found {len(row)}",
                )
            if not row[label_index].strip():
                raise CorpusFormatError(
                    name, start, f"empty label (expected a label in column {label_index}, counted from 0)"
                )
            yield Document(row[text_index], row[label_index], name, start)


def _header_index(row: list[str], column: int | str, name: str, line: int) -> int:
    if not isinstance(column, str):
        return column
    if column not in row:
        raise CorpusFormatError(name, line, f"no column {column!r} in the header (expected one of {row})")
    return row.index(column)


_LABEL = "__label__"


def read_fasttext(path: Source | IO, *, encoding: str = "utf-8") -> Iterator[Document]:
    """Read fastText's supervised format: ``__label__X text`` per line, one label per line.

    The text is the rest of the line, stripped of surrounding whitespace (it may be empty). A line
    that does not start with ``__label__``, or with an empty label, is an error; so is a line with a
    second ``__label__`` token anywhere, since multi-label input is not supported. Empty lines are
    skipped.
    """
    _check_codec(encoding)
    return _read_fasttext(path, encoding)


def _read_fasttext(path, encoding: str) -> Iterator[Document]:
    name = _name(path)
    with _open_lines(path, encoding) as lines:
        for number, line in lines:
            tokens = line.split()
            if not tokens:
                continue
            if not tokens[0].startswith(_LABEL):
                raise CorpusFormatError(
                    name, number, f"no label: the line starts with {tokens[0]!r} (expected '{_LABEL}<label> <text>')"
                )
            labels = [token for token in tokens if token.startswith(_LABEL)]
            if len(labels) > 1:
                raise CorpusFormatError(
                    name, number,
                    f"{len(labels)} labels ({' '.join(labels)}): multi-label input is not supported "
                    f"(expected exactly one {_LABEL} label per line)",
                )
            label = tokens[0][len(_LABEL):]
            if not label:
                raise CorpusFormatError(name, number, f"empty label (expected '{_LABEL}<label>')")
            yield Document(line.lstrip()[len(tokens[0]):].strip(), label, name, number)


_INDEX = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def read_svmlight(path: Source | IO) -> Iterator[Document]:
    """Read SVMlight / LIBSVM lines ``label index:value index:value ... [# comment]``.

    ``Document.text`` is ``{index: value}`` (indices as written, values as floats), ``Document.label``
    the label as written (e.g. ``"+1"``). An index must be a non-negative integer given once per
    line, a value a finite decimal number; anything else, a token without ``:`` or a line without a
    label is an error. Blank lines and comment lines (``#``) are skipped; ``qid:`` is not supported.
    """
    return _read_svmlight(path)


def _read_svmlight(path) -> Iterator[Document]:
    name = _name(path)
    with open_text(path) as lines:
        for number, line in lines:
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            label, *features = tokens
            if ":" in label:
                raise CorpusFormatError(
                    name, number, f"no label: the line starts with {label!r} (expected 'label index:value ...')"
                )
            values: dict[int, float] = {}
            for token in features:
                index, colon, value = token.partition(":")
                if not colon:
                    raise CorpusFormatError(name, number, f"feature {token!r} has no ':' (expected index:value)")
                if index == "qid":
                    raise CorpusFormatError(
                        name, number, f"{token!r}: query ids are not supported (expected index:value)"
                    )
                if not _INDEX.fullmatch(index):
                    raise CorpusFormatError(
                        name, number, f"index {index!r} of feature {token!r} is not a non-negative integer "
                        "(expected index:value with an integer index)",
                    )
                if not _NUMBER.fullmatch(value):
                    raise CorpusFormatError(
                        name, number, f"value {value!r} of feature {token!r} is not a number "
                        "(expected index:value with a decimal value such as 0.5 or 1e-3)",
                    )
                if int(index) in values:
                    raise CorpusFormatError(
                        name, number, f"index {int(index)} repeated (expected each index once per line)"
                    )
                values[int(index)] = float(value)
            yield Document(values, label, name, number)


# --- NLTK corpora ------------------------------------------------------------------------------------


def _nltk_corpus(corpus) -> tuple[object, str]:
    """A corpus reader given by name in ``nltk.corpus`` (loaded) or as an object, and a name for it."""
    if not isinstance(corpus, str):
        return corpus, f"{type(corpus).__name__}({getattr(corpus, 'root', '')})"
    import nltk.corpus
    from nltk.corpus.reader.api import CorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    reader = getattr(nltk.corpus, corpus, None)
    if not isinstance(reader, (LazyCorpusLoader, CorpusReader)):
        known = [name for name in dir(nltk.corpus) if isinstance(getattr(nltk.corpus, name), LazyCorpusLoader)]
        raise UnknownNameError("NLTK corpus", corpus, known)
    try:
        reader.fileids()  # loads a lazy reader
    except LookupError:
        raise CorpusNotFoundError(
            f"NLTK corpus {corpus!r} is not installed (run nltk.download({corpus!r}) or set NLTK_DATA)"
        ) from None
    return reader, f"nltk:{corpus}"


def _check_fileid(reader, fileid: str, label: str) -> None:
    fileids = reader.fileids()
    if fileid not in fileids:
        raise UnknownNameError(f"file of {label}", fileid, fileids)


@contextmanager
def _nltk_files(reader) -> Iterator[Callable[[str], tuple[str, IO[bytes]]]]:
    """A function opening a file of an NLTK corpus reader as bytes: ``fileid -> (source, stream)``.

    ``source`` is ``ARCHIVE:MEMBER`` in a zipped corpus, else the file's path. Files are opened below
    the reader's root directly, a zip archive once for all: NLTK's own ``open`` checks every path
    against the data path and reopens the archive, a millisecond per file. Fileids come from the
    reader (and are checked against its fileids), so they stay below its root.
    """
    root = reader.root
    if hasattr(root, "zipfile") and hasattr(root, "entry"):  # nltk.data.ZipFilePathPointer
        prefix = root.entry + ("/" if root.entry and not root.entry.endswith("/") else "")
        with zipfile.ZipFile(root.zipfile.filename) as archive:
            yield _gunzipping(lambda fileid: (f"{archive.filename}:{prefix}{fileid}", archive.open(prefix + fileid)))
    elif hasattr(root, "path"):  # nltk.data.FileSystemPathPointer

        def open_path(fileid: str) -> tuple[str, IO[bytes]]:
            path = os.path.join(root.path, fileid)
            return path, open(path, "rb")  # the caller closes it

        yield _gunzipping(open_path)
    else:
        yield _gunzipping(lambda fileid: (str(reader.abspath(fileid)), reader.abspath(fileid).open()))


def _gunzipping(opener):
    """``opener`` decompressing ``.gz`` files, as NLTK's path pointers do."""

    def open_file(fileid: str) -> tuple[str, IO[bytes]]:
        source, stream = opener(fileid)
        return source, gzip.GzipFile(fileobj=stream) if fileid.endswith(".gz") else stream

    return open_file


@contextmanager
def _nltk_lines(reader, fileid: str) -> Iterator[tuple[str, NumberedLines]]:
    """The source name and the numbered lines of one file of an NLTK corpus, in the reader's encoding."""
    with _nltk_files(reader) as open_file:
        source, stream = open_file(fileid)
        with stream:
            yield source, _decoded_lines(stream, source, reader.encoding(fileid) or "utf-8")


def read_nltk_categorized(corpus="movie_reviews", *, fileids: Iterable[str] | None = None) -> Iterator[Document]:
    """One document per file of a categorized NLTK corpus, labelled with its category, by fileid.

    ``corpus`` is a name in ``nltk.corpus`` (``"movie_reviews"``) or a reader with ``categories()``.
    The text is the file's contents (as ``corpus.raw(fileid)``); a file with no or several
    categories is an error. ``fileids`` restricts the files.
    """
    reader, label = _nltk_corpus(corpus)
    if not callable(getattr(reader, "categories", None)):
        raise TypeError(
            f"{label} is not a categorized corpus (expected a reader with categories(), e.g. movie_reviews)"
        )
    chosen = None if fileids is None else list(fileids)
    for fileid in chosen or ():
        _check_fileid(reader, fileid, label)
    return _read_categorized(reader, chosen)


def _read_categorized(reader, fileids: list[str] | None) -> Iterator[Document]:
    with _nltk_files(reader) as open_file:
        for fileid in sorted(reader.fileids() if fileids is None else fileids):
            source, stream = open_file(fileid)
            with stream:
                categories = reader.categories([fileid])
                if len(categories) != 1:
                    raise CorpusFormatError(
                        source, None,
                        f"{len(categories)} categories ({', '.join(categories) or 'none'}) "
                        "(expected exactly one category per document)",
                    )
                try:
                    data = stream.read()
                except _DAMAGED as err:
                    raise _damaged(source, err, "an intact archive member") from None
            yield Document(_decode(data, reader.encoding(fileid) or "utf-8", "strict", source), categories[0], source)


_GRANULARITIES = ("coarse", "fine")


def read_qc(path_or_name="qc", *, fileid: str = "train.txt", granularity: str = "coarse",
            encoding: str | None = None) -> Iterator[Document]:
    """Read the TREC question classification data (NLTK's ``qc``): lines ``COARSE:fine question``.

    ``path_or_name`` is a name in ``nltk.corpus`` (``"qc"``, whose file ``fileid`` is read:
    ``train.txt`` or ``test.txt``), a corpus reader, or the path of one such file. The label is
    ``COARSE`` (``granularity="coarse"``) or ``COARSE:fine`` (``"fine"``); the text is the question.
    Files are decoded as the NLTK reader says (ISO-8859-2 for qc), or a file path with ``encoding``
    (default ISO-8859-2, as NLTK). A label without ``:`` or a line without a question is an error.
    """
    if granularity not in _GRANULARITIES:
        raise ValueError(f"unknown granularity {granularity!r}; accepted: {', '.join(_GRANULARITIES)}")
    if _is_path(path_or_name):
        encoding = encoding or "iso-8859-2"
        _check_codec(encoding)
        return _read_qc_lines(lambda: _named_lines(path_or_name, encoding), granularity == "fine")
    reader, label = _nltk_corpus(path_or_name)
    _check_fileid(reader, fileid, label)
    return _read_qc_lines(lambda: _nltk_lines(reader, fileid), granularity == "fine")


def _is_path(value) -> bool:
    """A path rather than a corpus name: path-like, an existing file, or with a separator or a dot."""
    if isinstance(value, os.PathLike):
        return True
    if not isinstance(value, str):
        return False
    return os.path.isfile(value) or "/" in value or os.sep in value or "." in value


@contextmanager
def _named_lines(path: Source, encoding: str) -> Iterator[tuple[str, NumberedLines]]:
    with _open_lines(path, encoding) as lines:
        yield _name(path), lines


def _read_qc_lines(opener, fine: bool) -> Iterator[Document]:
    with opener() as (source, lines):
        for number, line in lines:
            fields = line.split(None, 1)
            if not fields:
                continue
            label, question = fields[0], fields[1] if len(fields) > 1 else ""
            coarse, colon, detail = label.partition(":")
            if not (coarse and colon and detail):
                raise CorpusFormatError(
                    source, number, f"label {label!r} is not COARSE:fine (expected 'COARSE:fine question')"
                )
            question = question.strip()
            if not question:
                raise CorpusFormatError(source, number, "no question after the label (expected 'COARSE:fine question')")
            yield Document(question, label if fine else coarse, source, number)


_PP_FIELDS = ("sentence id", "verb", "noun1", "preposition", "noun2", "attachment")


def read_ppattach(fileid: str = "training", *, corpus="ppattach") -> Iterator[Document]:
    """Read NLTK's PP-attachment corpus: ``text = (verb, noun1, prep, noun2)``, ``label`` ``"V"`` or ``"N"``.

    ``fileid`` is ``training``, ``devset`` or ``test``; ``corpus`` a name in ``nltk.corpus`` or a
    reader. Each line ``sentence-id verb noun1 prep noun2 attachment`` is one document (the sentence
    id is dropped); another number of fields or another attachment is an error.
    """
    reader, label = _nltk_corpus(corpus)
    _check_fileid(reader, fileid, label)
    return _read_ppattach(reader, fileid)


def _read_ppattach(reader, fileid: str) -> Iterator[Document]:
    with _nltk_lines(reader, fileid) as (source, lines):
        for number, line in lines:
            fields = line.split()
            if not fields:
                continue
            if len(fields) != len(_PP_FIELDS):
                raise CorpusFormatError(
                    source, number,
                    f"expected {len(_PP_FIELDS)} whitespace-separated fields ({', '.join(_PP_FIELDS)}), "
                    f"found {len(fields)}",
                )
            if fields[5] not in ("V", "N"):
                raise CorpusFormatError(source, number, f"attachment {fields[5]!r} (expected V or N)")
            yield Document(tuple(fields[1:5]), fields[5], source, number)


def read_names(*, corpus="names", fileids: Iterable[str] = ("male.txt", "female.txt")) -> Iterator[Document]:
    """Read NLTK's names corpus: one document per name, labelled ``male`` or ``female``.

    Files are read in the order of ``fileids`` (male first), names in file order; the label is the
    file name without ``.txt``. Surrounding whitespace is stripped (``"Gale "`` in female.txt) and
    blank lines are skipped. 365 names are in both lists.
    """
    reader, label = _nltk_corpus(corpus)
    fileids = list(fileids)
    for fileid in fileids:
        _check_fileid(reader, fileid, label)
    return _read_names(reader, fileids)


def _read_names(reader, fileids: list[str]) -> Iterator[Document]:
    for fileid in fileids:
        label = fileid.removesuffix(".txt")
        with _nltk_lines(reader, fileid) as (source, lines):
            for number, line in lines:
                if line.strip():
                    yield Document(line.strip(), label, source, number)
