"""Corpus readers: CoNLL-U, CoNLL column files, word<TAB>tag files, word/TAG lines, plain text, NLTK corpora.

Every file reader streams: it yields one :class:`Sentence` at a time and never holds more than one
sentence block in memory. Files ending in ``.gz`` are decompressed transparently. Lines are decoded
from UTF-8 one by one, so malformed input (invalid UTF-8, a NUL character, a damaged ``.gz`` file
included) raises :class:`~structlin.errors.CorpusFormatError` located as ``PATH:LINE`` (lines
counted from 1), and a missing file raises :class:`~structlin.errors.CorpusNotFoundError`. Readers
are generators: nothing is opened (and no file error is raised) before the first sentence is asked
for; invalid options raise :class:`~structlin.errors.OptionValueError` (a ``ValueError``) at once.

This module also holds the decoding that every reader of the library (the document readers of
:mod:`structlin.documents` included) goes through: :func:`open_text`, :func:`numbered_lines` and
:func:`decode`; :func:`line_batches` gives the lines of a pipe as they arrive, decoded the same way.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import itertools
import lzma
import os
import re
import reprlib
import tarfile
import zipfile
import zlib
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import IO, Union
from collections.abc import Iterable, Iterator, Sequence

from structlin.errors import CorpusFormatError, CorpusNotFoundError, OptionValueError, UnknownNameError

Source = Union[str, os.PathLike]
NumberedLines = Iterator[tuple[int, str]]


@dataclass
class Sentence:
    """One sentence: its tokens, their gold tags (``None`` for untagged text) and where it came from.

    ``columns`` keeps every column of a CoNLL column file (one list per token, the fields named by
    ``column_names``) so that other columns (e.g. a POS column for chunking) stay available as
    features; ``conllu_lines`` keeps the raw lines of a CoNLL-U sentence block so that a tagged copy
    can be written with only one column replaced.
    """

    words: list[str]
    tags: list[str] | None = None
    sent_id: str | None = None
    comments: list[str] = field(default_factory=list)
    path: str | None = None
    line: int | None = None
    columns: list[list[str]] | None = None
    conllu_lines: list[str] | None = None
    conllu_word_lines: list[int] | None = None
    column_names: tuple[str, ...] | None = None

    def fields(self, names: Sequence[str]) -> list[tuple[str, ...]]:
        """Every token as the tuple of its ``names`` columns (``word`` is the token itself); a column
        the sentence lacks raises :class:`CorpusFormatError` naming the file and line."""
        available = self.column_names or ()
        missing = [n for n in names if n != "word" and n not in available]
        if missing:
            have = ", ".join(available) if available else "the words only"
            raise CorpusFormatError(self.path or "input", self.line, f"the feature set reads column(s) "
                                    f"{', '.join(missing)}, but this sentence has {have}")
        index = [None if n == "word" else available.index(n) for n in names]
        return [tuple(word if k is None else row[k] for k in index) for word, row in
                zip(self.words, self.columns or [()] * len(self.words))]


# --- Reading lines ---------------------------------------------------------------------------------
#
# Every reader turns bytes into text here: the line readers through open_text (or numbered_lines for a
# stream they opened), whole files through decode. So an undecodable byte, a NUL character, a UTF-16
# file without a byte order mark and a damaged gzip stream are refused the same way by every reader.

_LINE_END = re.compile(r"\r\n|\r|\n")
_BOMS = {  # the codecs whose byte order only a byte order mark tells: the BOMs and the codecs they mean
    "utf-16": {codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be"},
    "utf-32": {codecs.BOM_UTF32_LE: "utf-32-le", codecs.BOM_UTF32_BE: "utf-32-be"},
}
# What reading a damaged archive or compressed file raises (bz2 and gzip report bad data as OSError).
DAMAGED = (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, OSError)


def source_name(source: Source | IO) -> str:
    """The name to report for a path or an open file."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def check_encoding(encoding: str, errors: str = "strict") -> None:
    """Refuse at once an encoding Python does not know or that is no text encoding (e.g. ``base64``),
    and an unknown ``errors`` handler, with :class:`~structlin.errors.OptionValueError`."""
    try:
        text = codecs.lookup(encoding)._is_text_encoding
    except (LookupError, TypeError):
        text = None
    if not text:
        problem = "unknown encoding" if text is None else "not a text encoding:"
        raise OptionValueError(f"{problem} {encoding!r} (expected a text encoding such as utf-8, latin-1, cp1252 "
                               "or utf-16)")
    try:
        codecs.lookup_error(errors)
    except (LookupError, TypeError):
        raise OptionValueError(f"unknown errors handler {errors!r}; accepted: strict, replace, ignore, ...") from None


def damaged(source: str, err: BaseException | str, what: str) -> CorpusFormatError:
    """The error for a damaged or truncated archive or compressed file (``what``: what was expected)."""
    message = " ".join(str(err).split()) or type(err).__name__
    return CorpusFormatError(source, None, f"damaged or truncated archive: {message} (expected {what})")


def _place(text: str, index: int) -> tuple[int, int]:
    """The line (counted from 0) and column (from 1) of ``text[index]``."""
    ends = list(_LINE_END.finditer(text, 0, index))
    return len(ends), index - (ends[-1].end() if ends else 0) + 1


def _byte_order(data: bytes, encoding: str, name: str) -> tuple[str, int]:
    """The codec to decode ``data`` (the start of a file) with, and the length of the byte order mark
    to skip: ``utf-16`` and ``utf-32`` need one to tell the byte order."""
    boms = _BOMS.get(codecs.lookup(encoding).name)
    if not boms or not data:
        return encoding, 0
    for bom, codec in boms.items():
        if data.startswith(bom):
            return codec, len(bom)
    raise CorpusFormatError(name, 1, f"no byte order mark: {encoding!r} needs one to tell the byte order (expected "
                            f"the file to start with one, or the encoding {encoding}-le or {encoding}-be)")


def decode(data: bytes, encoding: str, name: str, *, errors: str = "strict", line: int = 1,
           fixed: str | None = None) -> str:
    """Decode ``data``, the bytes of a whole file (``line=1``) or of its line ``line``.

    An undecodable byte or a NUL character is a :class:`~structlin.errors.CorpusFormatError` located
    by line and column, which suggests ``--encoding`` unless the file's encoding is ``fixed`` (what to say instead,
    e.g. "a clusters file is UTF-8 text"); the byte order mark at the start of a file is removed.
    """
    encoding = _marked(data[:4], encoding, name) if line == 1 else encoding
    codec, skip = _byte_order(data, encoding, name) if line == 1 else (encoding, 0)
    body = data[skip:]
    try:
        text = body.decode(codec, errors)
    except UnicodeDecodeError as err:
        before = body[:err.start].decode(codec, "replace")
        down, column = _place(before, len(before))
        wide = line == 1 and err.start == 0 and body[:2] in (b"\xff\xfe", b"\xfe\xff")
        hint = (f"; {fixed}" if fixed else "; it starts with a UTF-16 byte order mark: read it as utf-16 (--encoding "
                "utf-16) or convert it to UTF-8" if wide else "; a file in another encoding: say which, e.g. "
                "--encoding latin-1")
        raise CorpusFormatError(
            name, line + down, f"invalid {encoding}: byte {err.object[err.start]:#04x} at position {column} of the "
            f"line (expected {encoding} text{hint})",
        ) from None
    except UnicodeError as err:  # a codec that fails as a whole (punycode), without a place
        raise CorpusFormatError(name, line, f"invalid {encoding}: {err} (expected {encoding} text)") from None
    return checked_text(text.removeprefix("\ufeff") if line == 1 else text, name, line)


def checked_text(text: str, name: str, line: int = 1) -> str:
    """``text`` (which begins line ``line``), refused if it holds a NUL character (never in text)."""
    if "\0" in text:
        down, column = _place(text, text.index("\0"))
        raise CorpusFormatError(name, line + down, f"NUL character at position {column} of the line (expected text; "
                                "a binary or damaged file?)")
    return text


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate code point (an undecodable byte escaped, or JSON's ``\\ud800``
    escape without its pair), which UTF-8 cannot encode."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _declared(stream: IO, encoding: str, name: str) -> str:
    """:func:`_marked` for the start of a binary stream, peeked at, not consumed (one that can do neither, or a text
    stream, is read as asked)."""
    if isinstance(stream, io.TextIOBase):
        return encoding
    if hasattr(stream, "peek"):
        return _marked(stream.peek(4)[:4], encoding, name)
    if not (isinstance(stream, io.IOBase) and stream.seekable()):  # a stream of lines (one already begun) as it is
        return encoding
    at = stream.tell()
    head = stream.read(4)
    stream.seek(at)
    return _marked(head, encoding, name)


def _marked(head: bytes, encoding: str, name: str) -> str:
    """``encoding``, or when it is UTF-8 and ``head`` (a file's first bytes) a UTF-32 or UTF-16 byte order mark (never
    UTF-8: Excel's "Unicode text" and Windows tools write them), the encoding the mark declares.  A UTF-8 mark in a
    file read in another encoding is refused: the file is UTF-8 (Excel's "CSV UTF-8"), and read as, say, latin-1
    every accent would be garbled."""
    if codecs.lookup(encoding).name not in ("utf-8", "utf-8-sig"):
        if head.startswith(codecs.BOM_UTF8):
            raise CorpusFormatError(name, 1, f"the file starts with a UTF-8 byte order mark: it is UTF-8 text, not "
                                    f"{encoding} (read it as UTF-8, the default: --encoding utf-8)")
        return encoding
    return next((codec for codec, boms in reversed(_BOMS.items()) if head.startswith(tuple(boms))), encoding)


def _ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` reads ASCII letters and line ends as ASCII does (so bytes split into lines)."""
    try:
        return b"a\r\n".decode(encoding) == "a\r\n"
    except UnicodeError:
        return False


def numbered_lines(stream: IO, name: str, encoding: str = "UTF-8", fixed: str | None = None) -> NumberedLines:
    """Number, decode and check the lines of an open binary (or text) stream: see :func:`open_text`.

    ``\\n``, ``\\r\\n`` and a lone ``\\r`` (old Mac files) end a line, as Python's universal newlines.  A byte
    order mark (U+FEFF) is dropped where it begins a line: the first, or a later one where files that each began
    with one were joined (``cat a.tsv b.tsv``); inside a line it stays text.
    """
    number = 0
    try:
        encoding = _declared(stream, encoding, name)  # peeks: a damaged gzip stream raises here already
        if isinstance(stream, io.TextIOBase) or not _ascii_compatible(encoding):
            # A text stream decodes itself, ahead of its lines (no exact place for its errors); UTF-16
            # and the like are decoded whole.
            chunks = (stream if isinstance(stream, io.TextIOBase) else
                      [decode(stream.read(), encoding, name, fixed=fixed)])
            for chunk in chunks:
                lines = _LINE_END.split(chunk)
                for text in lines[:-1] if not lines[-1] else lines:
                    number += 1
                    yield number, checked_text(text.removeprefix("\ufeff"), name, number)
            return
        for chunk in stream:  # decoded line by line, so that errors have their place
            for line in chunk.splitlines():  # at \n, \r\n and \r only, unlike str.splitlines
                number += 1
                try:
                    text = line.decode(encoding)
                except UnicodeDecodeError:
                    text = decode(line, encoding, name, line=number, fixed=fixed)  # raises the error, located
                if "\0" in text:
                    checked_text(text, name, number)  # raises
                yield number, text.removeprefix("\ufeff")
    except UnicodeError as err:  # a decoding error without its place, or a codec that fails as a whole (punycode)
        raise CorpusFormatError(name, None, f"invalid {encoding} after line {number}: {err} (expected {encoding} "
                                "text)") from None
    except (EOFError, zlib.error, gzip.BadGzipFile, zipfile.BadZipFile) as err:
        kind = "gzip" if name.endswith(".gz") else "compressed"
        raise damaged(name, f"corrupt {kind} data after line {number}: {err}", f"an intact {kind} file") from None


@contextmanager
def open_text(source: Source | IO, encoding: str = "UTF-8", fixed: str | None = None) -> Iterator[NumberedLines]:
    """Open a corpus file (``.gz`` transparently) or wrap an open file; give its numbered lines.

    The context value iterates over ``(line_number, text)`` pairs, numbered from 1, without their
    line ends (``\\n``, ``\\r\\n`` or a lone ``\\r``) and without a leading byte order mark. Paths and
    binary files are decoded (:func:`decode`) line by line, so an invalid byte is reported with its
    line number; a text file object (e.g. ``sys.stdin``) decodes itself, so its decoding errors
    cannot be placed exactly. A NUL character is an error, and so is a damaged ``.gz`` file: when a
    format error comes up while reading one, the whole file is checked first, so that damage is
    reported as such rather than as the garbage it produced. An already-open file is not closed.
    An unknown ``encoding`` is an :class:`~structlin.errors.OptionValueError` (:func:`check_encoding`); ``fixed``
    says what an undecodable byte breaks when no option can change the encoding (:func:`decode`).
    """
    check_encoding(encoding)
    if isinstance(source, bytes):  # a path in bytes, as open() takes one
        source = os.fsdecode(source)
    if not isinstance(source, (str, os.PathLike)) and not hasattr(source, "read"):
        raise TypeError(f"expected a path or an open file, got {reprlib.repr(source)} ({type(source).__name__})")
    name = source_name(source)
    if not isinstance(source, (str, os.PathLike)):
        yield numbered_lines(source, name, encoding, fixed)
        return
    with _opened(name) as file:
        yield numbered_lines(file, name, encoding, fixed)


@contextmanager
def _opened(name: str) -> Iterator[IO[bytes]]:
    """:func:`open_binary`; a format error in a ``.gz`` file has the whole file checked first (:func:`open_text`)."""
    with open_binary(name) as file:
        try:
            yield file
        except CorpusFormatError:
            if name.endswith(".gz"):
                _check_gzip(name)
            else:
                _check_not_compressed(name)
            raise


#: The first bytes of compressed files and archives, which a text reader only sees as undecodable or NUL bytes.
_COMPRESSED = {b"\x1f\x8b": ("a gzip-compressed file", "name it *.gz to have it read as it is, or gunzip it"),
               b"BZh": ("a bzip2-compressed file", "bunzip2 it first"),
               b"\xfd7zXZ\x00": ("an xz-compressed file", "unxz it first"),
               b"\x28\xb5\x2f\xfd": ("a zstd-compressed file", "unzstd it first"),
               b"PK\x03\x04": ("a zip archive", "unzip it first"),
               b"7z\xbc\xaf\x27\x1c": ("a 7-Zip archive", "extract it first")}


def _check_not_compressed(name: str) -> None:
    """Refuse a file that a reader found not to be text when it starts as a compressed file or archive does: the
    error then says so, not which byte could not be decoded."""
    try:
        with open(name, "rb") as file:
            start = file.read(6)
    except OSError:
        return
    for magic, (what, advice) in _COMPRESSED.items():
        if start.startswith(magic):
            raise CorpusFormatError(name, None, f"{what}, not text ({advice})")


def _check_gzip(name: str) -> None:
    """Read a whole gzip file, so that its damage (if any) is reported (its CRC is checked at the end)."""
    try:
        with gzip.open(name, "rb") as file:
            while file.read(1 << 20):
                pass
    except DAMAGED as err:
        raise damaged(name, f"corrupt gzip data: {err}", "an intact gzip file") from None


def open_binary(name: str) -> IO[bytes]:
    """Open a corpus file for reading bytes (``.gz`` transparently); a missing file raises
    :class:`~structlin.errors.CorpusNotFoundError`, a folder :class:`~structlin.errors.CorpusFormatError`."""
    opener = gzip.open if name.endswith(".gz") else open
    try:
        return opener(name, "rb")
    except FileNotFoundError:
        raise CorpusNotFoundError(f"corpus file not found: {name}") from None
    except IsADirectoryError:
        raise CorpusFormatError(name, None, "a folder (expected a file)") from None


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # control characters but the tab


def _refuse_control_characters(text: str, name: str, number: int) -> None:
    """Refuse a line holding a control character other than the tab: no token holds one."""
    if control := _CONTROL.search(text):
        raise CorpusFormatError(name, number, f"control character U+{ord(control[0]):04X} at position "
                                f"{control.start() + 1} of the line (expected tokens without control characters)")


def _blocks(lines: NumberedLines, name: str, *, need_final_blank: bool):
    """Group numbered lines into blocks (lists of ``(number, text)``) separated by blank lines.

    Any number of blank (or whitespace-only) lines separates two blocks. With ``need_final_blank``
    the last block must be followed by a blank line too. A control character other than the tab is
    an error: no token holds one.
    """
    block: list[tuple[int, str]] = []
    for number, text in _controls_refused(lines, name):
        if text.strip():
            block.append((number, text))
        elif block:
            yield block
            block = []
    if block:
        yield block  # its lines' own errors (not CoNLL-U at all) come first
        if need_final_blank:
            raise CorpusFormatError(
                name, block[-1][0], "file ends mid-sentence (expected a blank line after the last token)"
            )


# --- CoNLL-U -------------------------------------------------------------------------------------

#: The tag columns a CoNLL-U file can be read by, and their field index.
CONLLU_COLUMNS = {"upos": 3, "xpos": 4}
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_NODE_ID = re.compile(r"(0|[1-9][0-9]*)\.[1-9][0-9]*")


def _conllu_column(column: str) -> int:
    """The 0-based index of a CoNLL-U tag column given by name."""
    if column not in CONLLU_COLUMNS:
        raise OptionValueError(f"unknown CoNLL-U column {column!r}; accepted: {', '.join(CONLLU_COLUMNS)}")
    return CONLLU_COLUMNS[column]


def _check_field(name: str, number: int, value: str, what: str, expected: str, *, tag: bool = False) -> None:
    """Refuse a token's word or (``tag``) tag that is empty or, for a tag, holds whitespace: ``what``
    names it and ``expected`` says what was expected instead."""
    if not value.strip():
        raise CorpusFormatError(name, number, f"empty {what} (expected {expected})")
    if tag and value.split() != [value]:
        text = "; a line of several words in the tag's place: labelled texts? a classifier reads them" if len(
            value.split()) > 2 else ""
        raise CorpusFormatError(name, number, f"{what} {value!r} holds whitespace (expected {expected} without "
                                f"spaces{text})")


def read_conllu(path: Source, *, column: str = "upos", require_tags: bool = True,
                encoding: str = "UTF-8") -> Iterator[Sentence]:
    """Read the sentences of a CoNLL-U file, tagged with its ``upos`` or ``xpos`` column.

    Multiword-token lines (``3-4``) and empty nodes (``5.1``) are not tokens but stay in
    ``Sentence.conllu_lines``, so that :func:`write_conllu` can reproduce the file. Comment lines
    before the tokens go to ``Sentence.comments``; ``# sent_id = X`` sets ``Sentence.sent_id``.
    With ``require_tags`` an underscore (no tag) in the chosen column is an error. A word form or
    tag with a control character, a tag with whitespace and a multiword range past the last word
    are errors too. ``encoding``: the file's text encoding (CoNLL-U's is UTF-8).
    """
    index = _conllu_column(column)
    check_encoding(encoding)
    return _read_conllu(path, index, column.upper(), require_tags, encoding)


def _read_conllu(path: Source, index: int, label: str, require_tags: bool, encoding: str) -> Iterator[Sentence]:
    name = source_name(path)
    with open_text(path, encoding) as lines:
        for block in _blocks(lines, name, need_final_blank=True):
            yield _conllu_sentence(block, name, index, label, require_tags)


def _conllu_sentence(block, name: str, index: int, label: str, require_tags: bool) -> Sentence:
    """Parse one CoNLL-U sentence block (see :func:`read_conllu`)."""
    comments: list[str] = []
    words: list[str] = []
    tags: list[str] = []
    word_lines: list[int] = []
    ranges: list[tuple[int, int]] = []  # (last word, line) of each multiword token
    sent_id = None
    for i, (number, text) in enumerate(block):
        if text.startswith("#"):
            if len(comments) < i:
                raise CorpusFormatError(
                    name, number, "comment after a token line (expected comments only before the tokens)"
                )
            comments.append(text)
            key, equals, value = text[1:].partition("=")
            if equals and key.strip() == "sent_id":
                sent_id = value.strip()
            continue
        fields = text.split("\t")
        if len(fields) != 10:
            raise CorpusFormatError(name, number, f"expected 10 tab-separated columns, found {len(fields)}")
        if fields[0] != str(len(words) + 1):
            last = _check_non_word_id(fields[0], len(words), ranges[-1][0] if ranges else 0, name, number)
            if last is not None:
                ranges.append((last, number))
            continue
        tag = fields[index]
        _check_field(name, number, fields[1], "FORM", "a word form in column 2")
        if require_tags and tag == "_":
            raise CorpusFormatError(name, number, f"empty {label} tag (expected a tag in column {index + 1})")
        _check_field(name, number, tag, f"{label} tag", f"a tag in column {index + 1}", tag=True)
        words.append(fields[1])
        tags.append(tag)
        word_lines.append(i)
    if not words:
        raise CorpusFormatError(
            name, block[0][0], "sentence without word lines (expected at least one line with an integer ID)"
        )
    for last, number in ranges:
        if last > len(words):
            raise CorpusFormatError(name, number, f"multiword token range ends at word {last}, after the last word "
                                    f"of the sentence (expected a range within words 1-{len(words)})")
    return Sentence(
        words, tags, sent_id=sent_id, comments=comments, path=name, line=block[0][0],
        conllu_lines=[text for _, text in block], conllu_word_lines=word_lines,
    )


def _check_non_word_id(token_id: str, count: int, covered: int, name: str, number: int) -> int | None:
    """Accept a multiword range (giving its last word) or an empty node ID after ``count`` words,
    the last multiword token ending at word ``covered``; reject any other ID."""
    if match := _RANGE_ID.fullmatch(token_id):
        first, last = int(match[1]), int(match[2])
        overlap = f", after the range ending at word {covered}" if first <= covered else ""
        if first != count + 1 or last <= first or overlap:
            raise CorpusFormatError(name, number, f"invalid multiword token range {token_id} (expected "
                                    f"{count + 1}-N with N > {count + 1}{overlap})")
        return last
    if match := _EMPTY_NODE_ID.fullmatch(token_id):
        if int(match[1]) != count:
            raise CorpusFormatError(
                name, number, f"empty node {token_id} out of place (expected {count}.N after word {count})"
            )
        return None
    if token_id.isascii() and token_id.isdigit():
        raise CorpusFormatError(name, number, f"word ID {token_id} out of order (expected {count + 1})")
    raise CorpusFormatError(
        name, number,
        f"invalid ID {token_id!r} (expected an integer word ID, a range like 1-2 or an empty node like 1.1)",
    )


def write_conllu(
    sentences: Iterable[Sentence], tags: Iterable[Sequence[str]], out: IO[str], *, column: str = "upos"
) -> None:
    """Write CoNLL-U sentences read by :func:`read_conllu` with one tag column replaced.

    ``tags`` holds one tag list per sentence. Every other byte of each block is written as read, and
    each block is followed by one blank line, so a well-formed input file (``\\n`` line ends, one
    blank line after each sentence) is reproduced exactly apart from the chosen column.
    """
    index = _conllu_column(column)
    missing = object()
    for number, (sentence, new_tags) in enumerate(zip_longest(sentences, tags, fillvalue=missing), 1):
        if sentence is missing:
            raise ValueError(f"more tag lists than sentences: tag list {number} has no sentence")
        where = f"sentence {sentence.sent_id!r}" if sentence.sent_id else f"sentence {number}"
        if new_tags is missing:
            raise ValueError(f"fewer tag lists than sentences: no tags for {where}")
        if sentence.conllu_lines is None or sentence.conllu_word_lines is None:
            raise ValueError(f"{where} has no CoNLL-U lines (expected a Sentence from read_conllu)")
        new_tags = list(new_tags)
        if len(new_tags) != len(sentence.conllu_word_lines):
            raise ValueError(f"{where} has {len(sentence.conllu_word_lines)} words but {len(new_tags)} tags")
        lines = list(sentence.conllu_lines)
        for i, tag in zip(sentence.conllu_word_lines, new_tags):
            if not tag or any(c.isspace() for c in tag):
                raise ValueError(f"{where}: invalid tag {tag!r} (expected a non-empty tag without whitespace)")
            fields = lines[i].split("\t")
            fields[index] = tag
            lines[i] = "\t".join(fields)
        out.write("\n".join(lines) + "\n\n")


# --- Column files, word<TAB>tag files, plain text ----------------------------------------------------


DOCSTART = "-DOCSTART-"  # CoNLL-2003's document boundary, a line alone between blank lines
#: Names a header row gives a word column and a tag column (a spreadsheet's or pandas' export): a first line whose
#: word field is one of the first and tag field one of the second is a header, not a token.
_WORD_NAMES = frozenset({"word", "words", "token", "tokens", "form", "text"})
_TAG_NAMES = frozenset({"tag", "tags", "pos", "upos", "xpos", "label", "labels", "ner", "chunk", "iob", "bio"})
#: A table's sentence column: ``Sentence #``, ``sentence_id``, ``sent_id``, ``Sentence``, ``sentence no``.
_SENTENCE_NAME = re.compile(r"sent(ence)?[\s_#-]*(id|no|num|number)?")
_SPACES_AND_TABS = re.compile(r"[ \t]+")


def read_columns(
    path: Source, *, columns: Sequence[str], word: str = "word", tag: str | None = None, sep: str | None = None,
    encoding: str = "UTF-8",
) -> Iterator[Sentence]:
    """Read a CoNLL-style column file: one token per line, a blank line after each sentence.

    ``columns`` names the fields of a line (e.g. ``("word", "pos", "chunk")``); ``word`` and ``tag``
    name the token and tag columns (``tag=None``: untagged). Fields are separated by spaces and tabs
    (``sep=None``) or by ``sep``. ``Sentence.columns`` keeps all fields. A ``-DOCSTART-`` line alone
    between blank lines marks a document boundary and is skipped; inside a sentence it is an error.
    A tag must be one field without whitespace. The last sentence need not be followed by a blank line.
    ``encoding``: the file's text encoding (CoNLL-2002's files are Latin-1).
    """
    if isinstance(columns, str):  # as the command line's --columns gives them
        columns = columns.split(",")
    columns = tuple(columns) if isinstance(columns, Iterable) else columns
    if not isinstance(columns, tuple) or not all(isinstance(name, str) for name in columns):
        raise OptionValueError(f"columns: expected column names (strings, e.g. word,pos,chunk), got "
                               f"{reprlib.repr(columns)}")
    if not columns or not all(columns):
        raise OptionValueError(f"column names {', '.join(columns) or '(none)'}: expected non-empty names, "
                               "e.g. word,pos,chunk")
    duplicates = sorted({name for name in columns if columns.count(name) > 1})
    if duplicates:
        raise OptionValueError(f"duplicate column name(s) {', '.join(duplicates)} in {', '.join(columns)} "
                               "(expected each column named once)")
    for role, column in (("word", word), ("tag", tag)):
        if column is not None and column not in columns:
            raise OptionValueError(f"{role} column {column!r} is not among the columns; accepted: {', '.join(columns)}")
    if tag == word:
        raise OptionValueError(f"the tag column {tag!r} is the word column (expected another column for the tags)")
    tag_index = None if tag is None else columns.index(tag)
    check_encoding(encoding)
    return _read_columns(path, columns, columns.index(word), tag_index, sep, encoding)


def _read_columns(
    path: Source, columns: tuple[str, ...], word_index: int, tag_index: int | None, sep: str | None, encoding: str
) -> Iterator[Sentence]:
    name = source_name(path)
    kind = "whitespace-separated" if sep is None else "tab-separated" if sep == "\t" else f"{sep!r}-separated"
    expected = f"expected {len(columns)} {kind} columns ({', '.join(columns)})"
    if sep is None:
        split = lambda text: _SPACES_AND_TABS.split(text.strip(" \t"))  # noqa: E731
    else:  # spaces around a field (a tag typed "NOUN ") are no part of it
        split = lambda text: [field.strip(" ") for field in text.split(sep)]  # noqa: E731
    with open_text(path, encoding) as lines:
        for block in _blocks(lines, name, need_final_blank=False):
            rows = [(number, split(text)) for number, text in block]
            if len(rows) == 1 and rows[0][1][0] == DOCSTART:
                continue
            for (number, fields), (_, text) in zip(rows, block):
                if number == 1 and tag_index is not None and _is_header(fields, word_index, tag_index):
                    raise CorpusFormatError(name, number, f"a header row ({', '.join(fields)}), not a token (expected "
                                            "tokens from the first line: remove the header, the columns are "
                                            f"{', '.join(columns)})")
                if fields[0] == DOCSTART:
                    raise CorpusFormatError(name, number, f"{DOCSTART} inside a sentence (expected it alone between "
                                            "blank lines, as a document boundary)")
                try:
                    if len(fields) != len(columns):
                        raise CorpusFormatError(name, number, f"{expected}, found {len(fields)}")
                    _check_field(name, number, fields[word_index], "word", f"a value in column {columns[word_index]!r}")
                    if tag_index is not None:
                        _check_field(name, number, fields[tag_index], "tag",
                                     f"a value in column {columns[tag_index]!r}", tag=True)
                except CorpusFormatError as err:  # said with the layout the line has instead, if it is a known one
                    raise CorpusFormatError(name, number, err.message + _layout_hint(text, columns, sep)) from None
            yield Sentence(
                words=[fields[word_index] for _, fields in rows],
                tags=None if tag_index is None else [fields[tag_index] for _, fields in rows],
                path=name, line=block[0][0], columns=[fields for _, fields in rows], column_names=columns,
            )


def _is_header(fields: list[str], word_index: int, tag_index: int) -> bool:
    """Whether a first line's ``fields`` name the columns: its word field a word column's name, its tag field a tag
    column's (:data:`_WORD_NAMES`, :data:`_TAG_NAMES`, in any case)."""
    return (max(word_index, tag_index) < len(fields) and fields[word_index].lower() in _WORD_NAMES
            and fields[tag_index].lower() in _TAG_NAMES)


#: A feature of an SVMlight line, ``index:value`` (or ``qid:N``).
_SVMLIGHT_FEATURE = re.compile(r"(?:[0-9]+|qid):[-+0-9.eE]+")


def _layout_hint(text: str, columns: tuple[str, ...], sep: str | None) -> str:
    """The layout a line that is not one of ``columns`` (separated by ``sep``) has instead, as the format to read it
    with: ``word/TAG`` tokens (``--format slash``), or the columns separated by spaces; else nothing."""
    tokens = text.split()
    if len(tokens) > 1 and all(_SVMLIGHT_FEATURE.fullmatch(token) for token in tokens[1:]):
        return "; the line looks like SVMlight's label index:value ...: documents, --format svmlight"
    if len(tokens) > 1 and all("/" in token.strip("/") for token in tokens):
        return "; the line looks like word/TAG tokens, a sentence per line: --format slash"
    if sep is not None and len(tokens) == len(columns):
        return f"; its fields are separated by spaces: --format columns --columns {','.join(columns)}"
    if sep is not None and sep not in text and len(columns) < len(tokens) <= 12:  # CoNLL-2000's "word POS chunk"
        names = ",".join(["word", *(f"c{k}" for k in range(2, len(tokens))), "tag"])
        return (f"; its {len(tokens)} fields are separated by spaces: --format columns --columns {names} (a name for "
                f"each; --column names the tags' column)")
    return ""


def read_word_tag(path: Source, encoding: str = "UTF-8") -> Iterator[Sentence]:
    """Read ``word<TAB>tag`` lines (a word may contain spaces, a tag not), a blank line after each sentence.

    This is :func:`read_columns` with the columns ``("word", "tag")`` separated by one tab.
    """
    return read_columns(path, columns=("word", "tag"), tag="tag", sep="\t", encoding=encoding)


def read_slash_tags(path: Source, encoding: str = "UTF-8") -> Iterator[Sentence]:
    """Read ``word/TAG`` tokens, a sentence per line, tokens separated by whitespace (NLTK's tagged corpus format,
    as in its Brown corpus, and ``structlin tag``'s text output).

    A token's tag follows its last ``/`` (``1/2/CD`` is the word ``1/2``), so a word may hold slashes and a tag may
    not. Blank lines are skipped. A token without a slash, or with an empty word or tag, is an error naming its
    place in the line.
    """
    check_encoding(encoding)
    return _read_slash_tags(path, encoding)


def _read_slash_tags(path: Source, encoding: str) -> Iterator[Sentence]:
    name = source_name(path)
    with open_text(path, encoding) as lines:
        for block in _blocks(lines, name, need_final_blank=False):
            for number, text in block:
                words, tags = [], []
                for place, token in enumerate(text.split(), 1):
                    word, slash, tag = token.rpartition("/")
                    if not (slash and word and tag):
                        raise CorpusFormatError(name, number, f"token {place} {token!r} is not word/TAG (expected "
                                                "a word, a slash and a tag; the tag follows the last slash)")
                    words.append(word)
                    tags.append(tag)
                yield Sentence(words=words, tags=tags, path=name, line=number)


# --- rows of TSV and CSV tables (tagged tables here, documents in structlin.documents) ------------------


def split_rows(lines, delimiter: str, *, blank: bool = False) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` of every non-blank line of numbered ``lines``, split at each delimiter (no quote
    processing: IANA TSV); with ``blank``, ``(line, [])`` for a blank one too."""
    for number, line in lines:
        if line.strip() or delimiter in line:
            yield number, line.split(delimiter)
        elif blank:
            yield number, []


#: The longest CSV field read, in characters: a whole book fits (the csv module's default, 131,072, is a long
#: review); beyond it a quote left open is more likely than a text, and reading stops there.
CSV_FIELD_LIMIT = 2**24


def quoted_rows(lines, delimiter: str, name: str, *, blank: bool = False) -> Iterator[tuple[int, list[str]]]:
    """``(first line, fields)`` of every non-blank row of RFC 4180 text in numbered ``lines`` (of the file ``name``),
    with the csv module; with ``blank``, ``(line, [])`` for a blank one too.  A quote left open, or a field longer
    than :data:`CSV_FIELD_LIMIT`, is a :class:`~structlin.errors.CorpusFormatError` located where it begins."""
    row_lines: list[tuple[int, str]] = []  # the lines of the row being read, for an error's place

    def fed():
        for number, text in lines:
            row_lines.append((number, text))
            yield text + "\n"

    rows = csv.reader(fed(), delimiter=delimiter, strict=True)
    while True:
        start = rows.line_num + 1
        row_lines.clear()
        default = csv.field_size_limit(CSV_FIELD_LIMIT)  # the csv module's limit is process-wide: ours while reading
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as err:
            raise _quoting_error(name, start, err, row_lines, lines, delimiter) from None
        finally:
            csv.field_size_limit(default)
        if len(row) > 1 or row and row[0].strip():
            yield start, row
        elif blank:
            yield start, []


_QUOTED_FIELD = re.compile(r'"(?:[^"]|"")*"(?!")')  # a quoted field, up to its closing quote
_CLOSING_QUOTE = re.compile(r'(?:[^"]|"")*"(?!")')  # the rest of one, from inside it


def _quoting_error(name: str, start: int, err: csv.Error, row_lines, rest, delimiter: str) -> CorpusFormatError:
    """The error of a row (its ``row_lines``, from line ``start``) that the csv module refused.  A quote left
    open is located where it opens: the csv module reads on to the end of the file or to its field size limit,
    and then the ``rest`` of the lines says whether the quote closes at all."""
    opened = _open_quote(row_lines, delimiter)
    limit = f"the limit of {CSV_FIELD_LIMIT:,} characters"
    if opened is not None:
        closed = next((number for number, text in rest if _CLOSING_QUOTE.match(text + "\n")), None)
        if closed is None:
            return CorpusFormatError(name, opened, "badly quoted field: unexpected end of data: the quote opening a "
                                     "field on this line is never closed (expected a closing quote; a quote inside "
                                     "a quoted field is doubled)")
        return CorpusFormatError(name, opened, f"the field quoted from this line to line {closed} is longer than "
                                 f"{limit}")
    if str(err).startswith("field larger than field limit"):
        return CorpusFormatError(name, start, f"a field longer than {limit}")
    return CorpusFormatError(name, start, f"badly quoted field: {err} (expected a quoted field to end with a quote "
                             "followed by the delimiter or the end of the line, and a quote inside it doubled)")


#: The delimiters of a CSV file none is given for, in the order they are tried (:func:`sniffed_delimiter`): RFC
#: 4180's comma, then the semicolon (spreadsheets where the decimal mark is a comma), the tab and the bar.
CSV_DELIMITERS = (",", ";", "\t", "|")
#: How much of a CSV file's beginning chooses its delimiter: rows, and the lines they may take.
_SNIFF_ROWS, _SNIFF_LINES = 20, 1000
#: A first line that declares a CSV file's delimiter, as Excel reads and some exports write it (``sep=;``).
_DECLARED_DELIMITER = re.compile(r"sep=([^\"\r\n])")


def sniffed_delimiter(lines: list[tuple[int, str]], name: str) -> str:
    """The delimiter of a CSV file whose first numbered ``lines`` these are: the first of :data:`CSV_DELIMITERS` that
    splits each of its first rows (quoting as RFC 4180 says) into the same number of fields, two or more; a comma when
    none does (the reading then says what is wrong)."""
    for delimiter in CSV_DELIMITERS:
        widths = set()
        try:
            for _, fields in itertools.islice(quoted_rows(iter(lines), delimiter, name), _SNIFF_ROWS):
                widths.add(len(fields))
        except CorpusFormatError:
            pass  # a quote this delimiter leaves open (or the sample cuts): the rows before it tell
        if len(widths) == 1 and min(widths) >= 2:
            return delimiter
    return ","


def csv_rows(lines, name: str, delimiter: str | None = None, *, blank: bool = False) -> tuple[str, Iterator]:
    """The delimiter and the :func:`quoted_rows` of a CSV file's numbered ``lines`` (of the file ``name``): the
    ``delimiter`` given, else the one a first line ``sep=X`` declares (Excel's way, not a row), else the one its first
    lines split alike by (:func:`sniffed_delimiter`), read from the start."""
    sample = list(itertools.islice(lines, _SNIFF_LINES))
    declared = _DECLARED_DELIMITER.fullmatch(sample[0][1]) if sample else None
    if delimiter is None:
        delimiter = declared.group(1) if declared else sniffed_delimiter(sample, name)
    rows = quoted_rows(itertools.chain(sample, lines), delimiter, name, blank=blank)
    if declared:
        next(rows)  # the declaration, read as a row so that the rows below keep their line numbers
    return delimiter, rows


def _open_quote(row_lines: list[tuple[int, str]], delimiter: str) -> int | None:
    """The line where a quoted field still open at the end of ``row_lines`` (one row's) begins, or None."""
    text = "".join(line + "\n" for _, line in row_lines)
    field_end = re.compile(f"[{re.escape(delimiter)}\n]")
    at = 0
    while at < len(text):
        if text[at] == '"':
            quoted = _QUOTED_FIELD.match(text, at)
            if quoted is None:
                return row_lines[text.count("\n", 0, at)][0]
            at = quoted.end()
        end = field_end.search(text, at)
        at = end.end() if end else len(text)
    return None


def read_tagged_table(path: Source, *, sep: str, column: str | None = None,
                      encoding: str = "UTF-8") -> Iterator[Sentence]:
    """Read a table of tokens with a header row: a token per row, ``sep``-separated (``"\\t"``: IANA TSV, no quoting;
    ``","``: RFC 4180 CSV, whose delimiter may be another that splits its first rows alike,
    :func:`sniffed_delimiter`), as spreadsheets and pandas export them (e.g. ``Sentence #,Word,POS,Tag``).

    The header names the columns: the words are the first column named as :data:`_WORD_NAMES` names a word column,
    the tags the column named ``column`` (in any case), else the last one named as a tag column (:data:`_TAG_NAMES`),
    and a column whose name holds ``sent`` (``Sentence #``, ``sent_id``) marks the sentences: a value in it, other
    than the current sentence's, begins a new one (a value seen before, after other sentences, is an error: the rows
    of a sentence come together), an empty one continues it. A blank row ends a sentence too.
    """
    check_encoding(encoding)
    return _read_tagged_table(path, sep, column, encoding)


def is_token_table(path: Source, sep: str, encoding: str = "UTF-8") -> bool:
    """Whether the TSV or CSV file ``path`` is a table of tokens (:func:`read_tagged_table`) rather than one of
    labelled documents: its header row names a word column other than ``text`` (which a table of documents also
    has), such as ``Word`` or ``token``."""
    with open_text(path, encoding) as lines:
        rows = csv_rows(lines, source_name(path))[1] if sep == "," else split_rows(lines, sep)
        header = next(rows, (0, []))[1]
    return any(field.strip().lower() in _WORD_NAMES - {"text"} for field in header)


def _read_tagged_table(path: Source, sep: str, column: str | None, encoding: str) -> Iterator[Sentence]:
    name = source_name(path)
    with open_text(path, encoding) as lines:
        lines = _controls_refused(lines, name)
        rows = csv_rows(lines, name, blank=True)[1] if sep == "," else split_rows(lines, sep, blank=True)
        header, word_index, tag_index, sentence_index = None, 0, 0, None
        words: list[str] = []
        tags: list[str] = []
        first = current = None
        begun: dict[str, int] = {}  # the line each sentence id began at
        for number, fields in rows:
            fields = [field.strip() for field in fields] if any(field.strip() for field in fields) else []
            if header is None:
                if fields:
                    header = fields
                    word_index, tag_index, sentence_index = _table_columns(name, number, header, column)
                continue
            if fields and len(fields) != len(header):
                raise CorpusFormatError(name, number, f"expected {len(header)} fields ({', '.join(header)}), found "
                                        f"{len(fields)}")
            starts = bool(fields) and sentence_index is not None and fields[sentence_index] not in ("", current)
            if words and (not fields or starts):
                yield _table_sentence(words, tags, name, first, header[word_index])
                words, tags = [], []
            if not fields:
                continue
            if starts:
                current = fields[sentence_index]
                if current in begun:
                    raise CorpusFormatError(name, number, f"sentence {current!r} again, after other sentences (it "
                                            f"began on line {begun[current]}; expected the rows of a sentence together)")
                begun[current] = number
            _check_field(name, number, fields[word_index], "word", f"a value in column {header[word_index]!r}")
            _check_field(name, number, fields[tag_index], "tag", f"a value in column {header[tag_index]!r}", tag=True)
            first = number if not words else first
            words.append(fields[word_index])
            tags.append(fields[tag_index])
        if words:
            yield _table_sentence(words, tags, name, first, header[word_index])


def _table_sentence(words: list[str], tags: list[str], name: str, line: int, word_column: str) -> Sentence:
    """A sentence of a table of tokens; refused when every one of its two or more words holds a space: the rows are
    then texts, and the table one of labelled documents (``label,text``), whose header names a word column too."""
    if len(words) > 1 and all(any(c.isspace() for c in word) for word in words):
        raise CorpusFormatError(name, line, f"every {word_column!r} value of the sentence from this row on holds "
                                "spaces (expected a token per row): a table of labelled texts is read by "
                                "`structlin train classifier`, or with --format tsv/csv by `corpus stats`")
    return Sentence(words=words, tags=tags, path=name, line=line)


def _controls_refused(lines: NumberedLines, name: str) -> NumberedLines:
    """``lines``, each refused if it holds a control character (:func:`_refuse_control_characters`)."""
    for number, text in lines:
        _refuse_control_characters(text, name, number)
        yield number, text


def _table_columns(name: str, number: int, header: list[str], column: str | None) -> tuple[int, int, int | None]:
    """The word, tag and sentence columns a table's ``header`` row names (:func:`read_tagged_table`)."""
    lower = [field.lower() for field in header]
    word = next((k for k, field in enumerate(lower) if field in _WORD_NAMES), None)
    if column is not None:
        tag = lower.index(column.lower()) if column.lower() in lower else None
    else:
        tag = max((k for k, field in enumerate(lower) if field in _TAG_NAMES), default=None)
    sentence = next((k for k, field in enumerate(lower) if _SENTENCE_NAME.fullmatch(field)), None)
    tabs = "; its fields are separated by tabs: --format tsv" if len(header) == 1 and "\t" in header[0] else ""
    for role, index, expected in (("word", word, f"one of {', '.join(sorted(_WORD_NAMES))}"),
                                  ("tag", tag, repr(column) if column else f"one of {', '.join(sorted(_TAG_NAMES))}")):
        if index is None:
            raise CorpusFormatError(name, number, f"the header row ({', '.join(header)}) names no {role} column "
                                    f"(expected a column named {expected}; the first row of a table names its "
                                    f"columns){tabs}")
        if lower.count(lower[index]) > 1:
            raise CorpusFormatError(name, number, f"the header row ({', '.join(header)}) names two {role} columns "
                                    f"{header[index]!r} (expected each column named once)")
    if tag == word:
        raise CorpusFormatError(name, number, f"the tag column {header[tag]!r} is the word column (expected another "
                                "column for the tags)")
    return word, tag, sentence


def read_text(source: Source | IO, encoding: str = "UTF-8") -> Iterator[Sentence]:
    """Read tokenized text, one sentence per line, tokens separated by whitespace; no tags.

    ``source`` is a path or an open file (e.g. ``sys.stdin``). An empty line gives an empty sentence,
    so that output written sentence by sentence stays aligned with the input lines.
    """
    check_encoding(encoding)
    return _read_text(source, encoding)


def _read_text(source: Source | IO, encoding: str) -> Iterator[Sentence]:
    name = source_name(source)
    with open_text(source, encoding) as lines:
        for number, text in lines:
            yield Sentence(words=text.split(), path=name, line=number)


def line_batches(source: Source | IO[bytes], encoding: str = "UTF-8", *,
                 size: int = 1 << 16) -> Iterator[list[tuple[int, str]]]:
    """The numbered lines of a file or binary stream, as :func:`open_text` gives them (decoded by the same
    rules), in lists: the complete lines of one read of at most ``size`` bytes.

    A read of a pipe or a terminal returns what is there, so a caller that handles each list before asking
    for the next answers every line as soon as it arrives (``producer | structlin tag``), and still handles
    a file in big batches.  An encoding that is not ASCII-compatible (UTF-16) is decoded whole, in one list.
    """
    name = source_name(source)
    with _opened(name) if isinstance(source, (str, os.PathLike)) else nullcontext(source) as stream:
        ready = _ReadyLines(stream, name, size)
        with open_text(ready, encoding) as lines:
            batch = []
            for number, text in lines:
                batch.append((number, text))
                if number == ready.count:  # the last line read so far: the next one may not be there yet
                    yield batch
                    batch = []
            if batch:
                yield batch


class _ReadyLines:
    """A binary stream as the complete lines each read of it returns (``read1``: up to ``size`` bytes, and no
    more than a pipe holds), in chunks for :func:`numbered_lines`; ``count`` is how many lines they held so far.

    An unfinished line waits for the rest of it, and so does a ``\\r`` that ends a read: it may be the first half of
    a ``\\r\\n``.
    """

    def __init__(self, stream: IO[bytes], name: str, size: int):
        self.stream, self.name, self.size, self.count = stream, name, size, 0

    def read(self) -> bytes:
        """All the rest: what :func:`numbered_lines` decodes whole."""
        return self.stream.read()

    def __iter__(self) -> Iterator[bytes]:
        unfinished: list[bytes] = []
        while chunk := self.stream.read1(self.size):
            end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r", 0, len(chunk) - 1)) + 1
            if not end:
                unfinished.append(chunk)
                continue
            lines = b"".join([*unfinished, chunk[:end]])
            unfinished = [chunk[end:]]
            self.count += len(lines.splitlines())
            yield lines
        rest = b"".join(unfinished)
        if rest:
            self.count += 1
            yield rest


# --- NLTK corpora ----------------------------------------------------------------------------------

# The tagset of each well-known NLTK tagged corpus, as named by nltk.tag.mapping.
_NLTK_SOURCE_TAGSETS = {"treebank": "en-ptb", "brown": "en-brown", "conll2000": "en-ptb", "masc_tagged": "en-ptb"}
_NLTK_TAGSETS = ("universal",)


def read_nltk(
    corpus,
    *,
    tagset: str | None = None,
    source_tagset: str | None = None,
    fileids=None,
    drop_traces: bool = False,
) -> Iterator[Sentence]:
    """Read the tagged sentences of an NLTK corpus reader, or of one named in ``nltk.corpus``.

    ``corpus`` is anything with a ``tagged_sents()`` method (e.g. ``nltk.corpus.treebank``) or its
    name (``"treebank"``, ``"brown"``, ``"conll2000"`` ...). ``tagset="universal"`` maps the tags with
    ``nltk.tag.mapping.map_tag`` from ``source_tagset``, which defaults to the known tagset of
    treebank, brown, conll2000 and masc_tagged. Empty elements of the Penn Treebank (tag ``-NONE-``,
    words such as ``*-1``, ``0`` or ``*T*-1``) are kept as tokens unless ``drop_traces`` is set;
    they are dropped before mapping, which would turn their tag into ``X``. A token with an empty
    word or no tag is an error.
    """
    if tagset is not None and tagset not in _NLTK_TAGSETS:
        raise OptionValueError(f"unknown tagset {tagset!r}; accepted: {', '.join(_NLTK_TAGSETS)} (or None)")
    import nltk.corpus

    if isinstance(corpus, str):
        name, reader = corpus, _nltk_reader(corpus)
    else:
        name = next((n for n in _NLTK_SOURCE_TAGSETS if getattr(nltk.corpus, n, None) is corpus), None)
        reader = corpus
    source = source_tagset or _NLTK_SOURCE_TAGSETS.get(name)
    if tagset and not source:
        raise OptionValueError(f"the tagset of {reader!r} is not known; pass source_tagset= (e.g. 'en-ptb')")
    label = f"nltk:{name}" if name else type(reader).__name__
    return _read_nltk(reader, label, source if tagset else None, fileids, drop_traces)


def _nltk_reader(name: str):
    """The corpus reader called ``name`` in ``nltk.corpus``."""
    import nltk.corpus
    from nltk.corpus.reader.api import CorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    reader = getattr(nltk.corpus, name, None)
    if isinstance(reader, (LazyCorpusLoader, CorpusReader)):
        try:
            if hasattr(reader, "tagged_sents"):  # loads a lazy reader
                return reader
        except LookupError:
            raise CorpusNotFoundError(
                f"NLTK corpus {name!r} is not installed (run nltk.download({name!r}) or set NLTK_DATA)"
            ) from None
    raise UnknownNameError("NLTK corpus", name, _NLTK_SOURCE_TAGSETS)


def _read_nltk(reader, label: str, source: str | None, fileids, drop_traces: bool) -> Iterator[Sentence]:
    from nltk.tag.mapping import map_tag

    sents = reader.tagged_sents() if fileids is None else reader.tagged_sents(fileids)
    for number, pairs in enumerate(sents, 1):
        if drop_traces:
            pairs = [(word, tag) for word, tag in pairs if tag != "-NONE-"]
        for word, tag in pairs:
            if not word or not tag:
                problem = "empty word" if not word else f"token {word!r} has no tag"
                raise CorpusFormatError(label, None, f"sentence {number}: {problem} (expected a word and a tag)")
        yield Sentence(
            words=[word for word, _ in pairs],
            tags=[tag if source is None else map_tag(source, "universal", tag) for _, tag in pairs],
            path=label,
        )


# --- choosing a reader ---------------------------------------------------------------------------

FILE_FORMATS = ("conllu", "word-tag", "slash", "columns", "tsv", "csv", "text")


def guess_format(path: Source) -> str:
    """``conllu`` for ``*.conllu[.gz]`` files, ``csv`` for ``*.csv`` (in any case: ``.CONLLU``), ``word-tag``
    otherwise."""
    name = str(path).lower().removesuffix(".gz")
    return "conllu" if name.endswith(".conllu") else "csv" if name.endswith(".csv") else "word-tag"


def read_file(path: Source, *, format: str | None = None, column: str | None = None,
              columns: Sequence[str] | None = None, require_tags: bool = True,
              encoding: str | None = None) -> Iterator[Sentence]:
    """Read a corpus file in one of :data:`FILE_FORMATS` (guessed from the name when ``format`` is None).

    ``column`` is the tag column: ``upos`` (the default) or ``xpos`` of a CoNLL-U file, one of the
    ``columns`` (the names of a column file's columns; default: the last one), or a name in the header row of a
    ``tsv`` or ``csv`` table (:func:`read_tagged_table`). ``encoding``: the file's
    text encoding (default UTF-8). An option that does not apply to the format is refused, not ignored.
    """
    encoding = encoding or "UTF-8"
    format = format or guess_format(path)
    if format not in FILE_FORMATS:
        raise OptionValueError(f"unknown file format {format!r}; accepted: {', '.join(FILE_FORMATS)}")
    if columns is not None and format != "columns":
        raise OptionValueError(f"column names ({', '.join(columns)}) apply to the columns format; {path} is read as "
                               f"{format}")
    if column is not None and format not in ("conllu", "columns", "tsv", "csv"):
        raise OptionValueError(f"a tag column ({column}) applies to the conllu, columns, tsv and csv formats; {path} "
                               f"is read as {format}")
    if format == "conllu":
        return read_conllu(path, column=column or "upos", require_tags=require_tags, encoding=encoding)
    if format == "columns":
        if not columns:
            raise OptionValueError(f"the columns format needs the names of the columns of {path} (expected e.g. "
                                   "word,pos,chunk: --columns, or columns=)")
        return read_columns(path, columns=columns, tag=column or columns[-1], encoding=encoding)
    if format in ("tsv", "csv"):
        return read_tagged_table(path, sep="\t" if format == "tsv" else ",", column=column, encoding=encoding)
    read = {"word-tag": read_word_tag, "slash": read_slash_tags, "text": read_text}[format]
    return read(path, encoding)
