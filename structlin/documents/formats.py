"""Readers of the generic formats of labelled documents, which hold any corpus: one-folder-per-class
trees and their tar/zip archives (read member by member, never unpacked), and the line formats
TSV/CSV, fastText and SVMlight. They share nothing with NLTK: a file or stream of the user's is all
they read, decoded by :mod:`structlin.documents.base` and, for folder trees of Usenet posts,
stripped by :mod:`structlin.documents.usenet`.
"""

from __future__ import annotations

import csv
import os
import re
import tarfile
import zipfile
from collections.abc import Iterator
from typing import IO

from structlin.documents.base import (
    _DAMAGED,
    Document,
    Source,
    _check_codec,
    _damaged,
    _decode,
    _name,
    _open_lines,
)
from structlin.documents.usenet import _strip_parts, strip_usenet
from structlin.errors import CorpusFormatError, CorpusNotFoundError
from structlin.readers import open_text

# --- One folder per class: trees and archives ----------------------------------------------------

# Archive suffixes and how to open them ("zip", or a tarfile mode).
_ARCHIVES = {
    ".tar.gz": "r:gz", ".tgz": "r:gz", ".tar": "r:", ".tar.bz2": "r:bz2", ".tbz2": "r:bz2",
    ".tar.xz": "r:xz", ".txz": "r:xz", ".zip": "zip",
}
ARCHIVE_SUFFIXES = tuple(_ARCHIVES)
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
