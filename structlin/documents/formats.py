"""Readers of the generic formats of labelled documents, which hold any corpus: one-folder-per-class
trees and their tar/zip archives (read member by member, never unpacked), and the line formats TSV
(no quoting), CSV (RFC 4180 quoting), fastText and SVMlight. They share nothing with NLTK: a file or
stream of the user's is all they read, decoded by :mod:`structlin.documents.base` and, for folder
trees of Usenet posts, stripped by :mod:`structlin.documents.usenet`. JSON Lines (and a JSON array of objects)
are read by keys named as a TSV header's columns.
"""

from __future__ import annotations

import decimal
import itertools
import json
import math
import os
import re
import reprlib
import stat
import tarfile
import warnings
import zipfile
from collections.abc import Callable, Collection, Iterator
from typing import IO

import numpy as np

from structlin.documents.base import Document, Source
from structlin.documents.usenet import _strip_parts, strip_usenet
from structlin.errors import CorpusFormatError, CorpusNotFoundError, OptionValueError
from structlin.readers import (CSV_DELIMITERS, DAMAGED, check_encoding, csv_rows, damaged, decode,
                               has_lone_surrogate, open_text, source_name, split_rows)

# --- One folder per class: trees and archives ----------------------------------------------------

# Archive suffixes and how to open them ("zip", or a tarfile mode).
_ARCHIVES = {
    ".tar.gz": "r:gz", ".tgz": "r:gz", ".tar": "r:", ".tar.bz2": "r:bz2", ".tbz2": "r:bz2",
    ".tar.xz": "r:xz", ".txz": "r:xz", ".zip": "zip",
}
ARCHIVE_SUFFIXES = tuple(_ARCHIVES)
_BLOCK = tarfile.BLOCKSIZE
_ZIP_DAMAGED = (*DAMAGED, NotImplementedError)  # zipfile: NotImplementedError = an unknown version or compression
_ABSOLUTE = re.compile(r"[/\\]|[A-Za-z]:")  # a member path from the root, or from a drive


def read_folders(
    path: Source, *, encoding: str = "utf-8", errors: str = "strict", strip=(), subset: str | None = None
) -> Iterator[Document]:
    """Read a one-folder-per-class tree: ``path/[subset/]<label>/<file>``, one document per file.

    ``path`` is a directory or an archive (``.tar.gz``, ``.tgz``, ``.tar``, ``.tar.bz2``, ``.tar.xz``,
    ``.zip``; another name is recognised by its content) read member by member, never unpacked.
    ``subset`` picks a top-level folder (e.g. ``"20news-bydate-train"``); the label is the first path
    component below it (or below the root), and the document is any file below that label folder,
    nested folders included. Files are read in sorted path order, so a tree and any archive of it give
    the same documents in the same order.  Hidden entries (a name starting with ``.``: ``.git``, ``.DS_Store``,
    macOS's ``._*`` companions) and the ``__MACOSX`` folder that macOS adds to a zip are not documents: they are
    skipped, with one warning saying how many and which.  A file outside a label folder is an error; so is a symbolic
    link (it could reach outside the tree, or give a file twice), and an archive member whose path is
    absolute, has a ``..`` component or comes twice.  A label folder without files gives a warning naming
    it: that label has no document.

    Files are decoded with ``encoding`` and ``errors`` (as ``bytes.decode``); with ``errors="strict"``
    an undecodable byte is an error located by file (``ARCHIVE:MEMBER``) and line, and so is a NUL
    character (a binary file) whatever ``errors``. ``strip`` names parts of Usenet posts to remove
    (see :func:`strip_usenet`). ``Document.source`` is the file path, or ``ARCHIVE:MEMBER``. A damaged
    archive is an error naming it (and the member, when known); the integrity of a compressed tar
    archive (its CRC) is checked before the first document.
    """
    parts = _strip_parts(strip)
    check_encoding(encoding, errors)
    prefix: tuple[str, ...] = ()
    if subset is not None:
        prefix = tuple(p for p in str(subset).split("/") if p not in ("", "."))
        if not prefix or ".." in prefix:
            raise OptionValueError(f"invalid subset {subset!r} (expected a folder name, or None)")
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
        text = decode(data, encoding, source, errors=errors)
        yield Document(strip_usenet(text, parts) if parts else text, label, source)


def _layout(prefix: tuple[str, ...]) -> str:
    return "/".join([*prefix, "<label>", "<file>"])


def _link_error(source: str, target: str | None = None) -> CorpusFormatError:
    to = f" to {target}" if target else ""
    return CorpusFormatError(source, None, f"a symbolic link{to}: links are not followed (expected regular files in "
                             "folders; copy the file in instead)")


def _tree_files(root: str, prefix: tuple[str, ...]) -> Iterator[tuple[str, str, bytes]]:
    """``(label, path, bytes)`` of every file of a folder tree, in sorted order."""
    hidden: list[str] = []
    if not prefix:
        entries = _entries(root, hidden)
        if len(entries) == 1 and entries[0].is_dir() and all(inner.is_dir() for inner in _entries(entries[0].path)):
            prefix = (entries[0].name,)  # the one folder holding the label folders (a tree unpacked from an archive)
    base = os.path.join(root, *prefix)
    if prefix and not os.path.isdir(base):
        tops = sorted(entry.name for entry in _entries(root) if entry.is_dir())
        raise CorpusFormatError(
            root, None, f"no folder {'/'.join(prefix)!r} (expected one of the top-level folders: {', '.join(tops)})"
        )
    labels = _entries(base, hidden if prefix else None)  # without a prefix, the root's were counted above
    for entry in labels:
        if not entry.is_dir():
            raise CorpusFormatError(
                entry.path, None, f"a file outside any label folder (expected {_layout(prefix)} below {root})"
            )
    for entry in labels:
        paths = list(folder_files(entry.path, hidden))
        if not paths:
            _warn_empty_label(entry.path, entry.name)
        for path in paths:
            with open(path, "rb") as file:
                yield entry.name, path, file.read()
    _warn_hidden(root, hidden)


def _warn_empty_label(folder: str, label: str) -> None:
    warnings.warn(f"{folder}: label folder {label!r} holds no files, so no document has that label")


def _is_hidden(name: str) -> bool:
    """Whether a folder entry is not data: hidden (``.git``, ``.DS_Store``, ``._x``) or macOS's ``__MACOSX``."""
    return name.startswith(".") or name == "__MACOSX"


def _warn_hidden(where: str, hidden: list[str]) -> None:
    """One warning for the hidden entries skipped below ``where``."""
    if hidden:
        shown = ", ".join(hidden[:3]) + (", …" if len(hidden) > 3 else "")
        warnings.warn(f"{where}: {len(hidden)} hidden entr{'y' if len(hidden) == 1 else 'ies'} skipped, not read "
                      f"as documents ({shown})")


def _entries(directory: str, hidden: list[str] | None = None) -> list[os.DirEntry]:
    """The entries of a folder that are data, in sorted order (the hidden ones' paths added to ``hidden``); a
    symbolic link among them is an error."""
    with os.scandir(directory) as entries:
        ordered = sorted(entries, key=lambda entry: entry.name)
    if hidden is not None:
        hidden.extend(entry.path for entry in ordered if _is_hidden(entry.name))
    ordered = [entry for entry in ordered if not _is_hidden(entry.name)]
    for entry in ordered:
        if entry.is_symlink():
            raise _link_error(entry.path, os.readlink(entry.path))
    return ordered


def folder_files(directory: str, hidden: list[str] | None = None) -> Iterator[str]:
    """The files below ``directory``, in sorted order; a symbolic link or a special file (a FIFO, a device) among
    them is an error, as in a folder tree of labelled documents.  Hidden entries are skipped (see
    :func:`read_folders`): added to ``hidden``, or, without it, said in one warning at the end."""
    own = hidden is None
    hidden = [] if own else hidden
    for entry in _entries(directory, hidden):
        if entry.is_dir():
            yield from folder_files(entry.path, hidden)
        elif entry.is_file():
            yield entry.path
        else:
            raise CorpusFormatError(entry.path, None, "neither a regular file nor a folder (expected files in folders)")
    if own:
        _warn_hidden(directory, hidden)


def _archive_files(archive: str, prefix: tuple[str, ...]) -> Iterator[tuple[str, str, bytes]]:
    """``(label, ARCHIVE:MEMBER, bytes)`` of every file of an archive, in sorted order."""
    mode = next((mode for suffix, mode in _ARCHIVES.items() if archive.lower().endswith(suffix)), None)
    if mode is None:  # recognise the archive by its content
        mode = "zip" if zipfile.is_zipfile(archive) else "r:*"
    if mode == "zip":
        return _zip_files(archive, prefix)
    return _tar_files(archive, prefix, mode)


def _member_path(archive: str, name: str) -> tuple[str, ...]:
    """The components of an archive member's path. An absolute path or a ``..`` component is an error:
    it names no file of the tree (``../x`` or ``/etc/x`` would make labels ``..`` or ``etc``)."""
    path = tuple(p for p in name.split("/") if p not in ("", "."))
    if _ABSOLUTE.match(name) or ".." in path:
        raise CorpusFormatError(f"{archive}:{name}", None, "a member path outside the archive's tree: absolute or "
                                "with a '..' component (expected a relative path such as <label>/<file>)")
    return path


def _wrapper(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The one folder that holds the whole tree, as an archive of a folder tree has it (``corpus/<label>/<file>``):
    its name as the prefix of the label folders, when every file lies in a folder inside it; else ``()``."""
    tops = {path[0] for path in paths}
    return (tops.pop(),) if len(tops) == 1 and paths and all(len(path) > 2 for path in paths) else ()


def _select(archive: str, names: list[tuple[object, str]], prefix: tuple[str, ...],
            folders: list[str]) -> list[tuple[str, object, str]]:
    """Keep the members below ``prefix`` (without one, below the one folder holding every file: :func:`_wrapper`)
    and sort them by path: ``(label, member, name)`` triples.  A label folder among the archive's ``folders``
    (member names) without a file below it gives a warning."""
    chosen = []
    tops = set()
    seen = set()
    paths, hidden = [], []
    for member, name in names:
        path = _member_path(archive, name)
        (hidden if any(map(_is_hidden, path)) else paths).append((member, name, path))
    _warn_hidden(archive, [name for _, name, _ in hidden])
    if not prefix:
        prefix = _wrapper([path for _, _, path in paths])
    for member, name, path in paths:
        if path in seen:
            raise CorpusFormatError(f"{archive}:{name}", None, "a member given twice (expected each file once)")
        seen.add(path)
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
    below = [path[len(prefix)] for path in (_member_path(archive, name) for name in folders)
             if len(path) > len(prefix) and path[: len(prefix)] == prefix and not any(map(_is_hidden, path))]
    for label in sorted(set(below) - {relative[0] for relative, _, _ in chosen}):
        _warn_empty_label(f"{archive}:{'/'.join((*prefix, label))}", label)
    return [(relative[0], member, name) for relative, member, name in chosen]


def _zip_files(archive: str, prefix: tuple[str, ...]) -> Iterator[tuple[str, str, bytes]]:
    try:
        file = zipfile.ZipFile(archive)
    except _ZIP_DAMAGED as err:
        raise damaged(archive, err, "a zip archive") from None
    with file:
        _check_zip_directory(file, archive)
        members, folders = [], []
        for info in file.infolist():
            if stat.S_ISLNK(info.external_attr >> 16):
                raise _link_error(f"{archive}:{info.filename}")
            if info.is_dir():
                folders.append(info.filename)
            else:
                members.append((info, info.filename))
        for label, info, name in _select(archive, members, prefix, folders):
            source = f"{archive}:{name}"
            if info.flag_bits & 0x1:
                raise CorpusFormatError(source, None, "encrypted member (expected an unencrypted zip archive)")
            try:
                data = file.read(info)
            except _ZIP_DAMAGED as err:
                raise damaged(source, err, "an intact zip member") from None
            yield label, source, data


def _check_zip_directory(file: zipfile.ZipFile, archive: str) -> None:
    """Check that the zip's central directory lists as many members as its end record says: zipfile does
    not, so a damaged length field there hides the members after it without a word."""
    try:
        end = zipfile._EndRecData(file.fp)  # zipfile's own reading of the end record (zip64 included)
    except _ZIP_DAMAGED as err:
        raise damaged(archive, err, "a zip archive") from None
    listed, total = len(file.infolist()), end[zipfile._ECD_ENTRIES_TOTAL] if end else None
    if listed != total:
        raise damaged(archive, f"its directory lists {listed} members, its end record {total}",
                      "an intact zip archive")


def _tar_files(archive: str, prefix: tuple[str, ...], mode: str) -> Iterator[tuple[str, str, bytes]]:
    """The files of a tar archive in sorted order, read in two passes over a compressed stream.

    The first pass reads every header and the rest of the stream (so that the gzip/bz2/xz checksum
    is verified before any document is given); the second reads the chosen members in archive order
    and keeps those that arrive before their turn until it comes (none when the archive is sorted).
    """
    try:
        tar = tarfile.open(archive, mode)
    except DAMAGED as err:
        raise damaged(archive, err, "a tar archive") from None
    with tar:
        try:
            members = tar.getmembers()
            _check_tar_end(tar, archive, members)
        except CorpusFormatError:
            raise
        except DAMAGED as err:
            after = f" after member {tar.members[-1].name}" if tar.members else ""
            raise damaged(archive, f"{err}{after}", "a complete tar archive") from None
        files, folders = [], []
        for member in members:
            if member.issym():
                raise _link_error(f"{archive}:{member.name}", member.linkname)
            if member.isreg() or member.islnk():
                files.append((member, member.name))
            elif member.isdir():
                folders.append(member.name)
            else:
                raise CorpusFormatError(
                    f"{archive}:{member.name}", None, "neither a regular file nor a folder (expected files in folders)"
                )
        ordered = _select(archive, files, prefix, folders)
        turn = {id(member): rank for rank, (_, member, _) in enumerate(ordered)}
        waiting: dict[int, bytes] = {}
        due = 0
        for member, name in files:
            if id(member) not in turn:
                continue
            try:
                data = tar.extractfile(member).read()
            except (*DAMAGED, KeyError, AttributeError) as err:
                raise damaged(f"{archive}:{name}", err, "an intact tar member") from None
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
        raise damaged(archive, f"{problem}{after}", "a complete tar archive")
    while chunk := stream.read(1 << 20):
        if chunk.count(0) != len(chunk):
            raise damaged(archive, f"data after the end-of-archive marker{after}", "a single tar archive")


# --- Line formats: TSV/CSV, fastText, SVMlight ---------------------------------------------------------


#: Header names that mark the label column and the text column, in order of preference (matched
#: case-insensitively): they choose the columns of a TSV/CSV file with a header row, and detect that row.
LABEL_NAMES = ("label", "labels", "class", "category", "target", "sentiment", "polarity", "gold_label", "topic",
               "intent")
TEXT_NAMES = ("text", "sentence", "review", "document", "content", "body", "tweet", "comment", "question",
              "utterance", "message")
_COLUMN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
#: A header name of words, as spreadsheets and data frames write them ("Review Text", "gold label", "text_a").
_SPACED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*(?: [A-Za-z0-9_.-]+){0,3}")

#: A column of a TSV/CSV file: an index counted from 0, a header name, or None (chosen by the reader).
Column = int | str | None


def read_tsv(
    path: Source | IO,
    *,
    label_column: Column = None,
    text_column: Column = None,
    header: bool | None = None,
    encoding: str = "UTF-8",
    labels: Collection[str] = (),
) -> TableDocuments:
    """Read one document per line of a tab-separated file (IANA TSV), as pandas and fastText users expect.

    A field is exactly the text between two tabs: there is no quote processing, so a text may start
    with ``"`` or hold unbalanced quotes, but cannot hold a tab or a line break (use :func:`read_csv`).

    Columns: ``label_column`` and ``text_column`` are indices counted from 0, or header names. Left
    unset, each is the first column whose header name is one of :data:`LABEL_NAMES` (resp.
    :data:`TEXT_NAMES`), so GLUE SST-2's ``sentence<TAB>label`` works; without a header row, by what the first rows
    hold (:func:`_columns_by_content`: the text is the column of clearly the most words, the label column 0 if it can
    be one, else the first that can, so ``text<TAB>label`` and ``id<TAB>label<TAB>text`` rows work; ``by_content`` says
    so); else the label is column 0 and the text column 1 (or the other of the two when the other role has it).
    Further columns are ignored.

    Header: ``header=True`` takes the first row as column names, ``False`` as data, and ``None`` (the
    default) detects it; a name given as a column declares a header. The rule: the first row is a
    header when every field is a name (a letter or ``_``, then letters, digits, ``_``, ``.`` or ``-``),
    no two alike, and either one of them is a label name and another a text name, or the field in the
    label column (the one given, else the one with a label name, else 0) is never a label of the rows
    below while some label of theirs repeats (the whole file is then read before the first document).  Anything else (a label
    with a sentence, a number) keeps the row as data; and if a header detected by its names then
    occurs as a label, that is an error asking to state ``header``. ``labels``: labels the rows are known to use (a
    model's, when its test data is read); a first row whose label field is one of them is data, not a header. The
    result's ``header``, ``label_column`` and ``text_column`` say what was decided.

    Rows: a label is stripped of surrounding whitespace and must not be empty; a text is kept as it is.
    Line ends (``\n``, ``\r\n``) and a leading byte order mark are removed. A blank line (whitespace
    only, no delimiter) is skipped; every other row must have as many fields as the first row. Any error (a wrong
    number of fields, an empty label, a column index out of range, a name not in the header) is a
    :class:`~structlin.errors.CorpusFormatError` naming the file and line. ``Document.line`` is the row's line.
    """
    return TableDocuments(path, "\t", False, label_column, text_column, header, encoding, labels)


def read_csv(
    path: Source | IO,
    *,
    label_column: Column = None,
    text_column: Column = None,
    header: bool | None = None,
    delimiter: str | None = None,
    encoding: str = "UTF-8",
    labels: Collection[str] = (),
) -> TableDocuments:
    """Read one document per row of a comma-separated file (RFC 4180).

    A field may be quoted: a quoted field holds delimiters, line breaks and doubled quotes (``""`` for
    ``"``), so a row may span lines (``Document.line`` is its first); a quote inside an unquoted field
    is kept as it is, and a badly quoted field is an error. ``delimiter`` is the one-character separator; None
    (the default) takes the first of :data:`~structlin.readers.CSV_DELIMITERS` (a comma, a semicolon, a tab, a bar)
    that splits the first rows alike (:func:`~structlin.readers.sniffed_delimiter`): a spreadsheet saved as CSV where
    the decimal mark is a comma separates its fields by semicolons.  The result's ``delimiter`` says which.  Columns,
    header, labels, blank lines and errors: as :func:`read_tsv`.
    """
    if delimiter is not None and (not (isinstance(delimiter, str) and len(delimiter) == 1) or delimiter in '"\r\n'):
        raise OptionValueError(f"delimiter must be one character other than a quote or line break, not {delimiter!r}")
    return TableDocuments(path, delimiter, True, label_column, text_column, header, encoding, labels)


_KINDS = {"\t": "tab-separated", ",": "comma-separated", ";": "semicolon-separated", "|": "bar-separated"}


class TableDocuments(Iterator[Document]):
    """The documents of a TSV or CSV file (see :func:`read_tsv`), read as they are asked for.

    Once the first document has been read (or the file found empty), ``header`` holds the header row's
    names (``None``: the first row was data), ``label_column``/``text_column`` the column indices
    used, ``by_content`` whether the rows' contents chose them and ``delimiter`` the delimiter (one a CSV file is
    read with, :func:`~structlin.readers.sniffed_delimiter`, when none was given), so that a caller can say what was
    decided.
    """

    def __init__(self, path: Source | IO, delimiter: str | None, quoted: bool, label_column: Column,
                 text_column: Column, header: bool | None, encoding: str, labels: Collection[str] = ()):
        if header not in (True, False, None):
            raise OptionValueError(f"header must be True, False or None (detect), not {header!r}")
        for role, column in (("label", label_column), ("text", text_column)):
            if isinstance(column, str) and header is False:
                raise OptionValueError(f"the {role} column {column!r} is a name: it needs a header row, "
                                       "not header=False")
            if not (column is None or isinstance(column, str) or type(column) is int and column >= 0):
                raise OptionValueError(f"the {role} column must be an index counted from 0 or a header name, "
                                       f"not {column!r}")
        if label_column is not None and label_column == text_column:
            raise OptionValueError(f"the label and text columns are the same column ({label_column!r})")
        check_encoding(encoding)
        self.name = source_name(path)
        self.header: tuple[str, ...] | None = None
        self.label_column: int | None = None
        self.text_column: int | None = None
        self.by_content = False  # whether the columns were chosen by their contents (:func:`_columns_by_content`)
        self.delimiter, self._sniffed = delimiter, delimiter is None
        self._known_labels = frozenset(map(str, labels))  # as a file writes them (a model's may be numbers)
        self._documents = self._read(path, quoted, label_column, text_column, header, encoding)

    def __next__(self) -> Document:
        return next(self._documents)

    @property
    def kind(self) -> str:
        """How the fields are separated, in words: ``tab-separated``, ``semicolon-separated`` ..."""
        return _KINDS.get(self.delimiter, f"{self.delimiter!r}-separated")

    def _read(self, path, quoted, label_column, text_column, header, encoding) -> Iterator[Document]:
        with open_text(path, encoding) as lines:
            if quoted:
                self.delimiter, rows = csv_rows(lines, self.name, self.delimiter)
            else:
                rows = split_rows(lines, self.delimiter)
            kind = self.kind
            first = next(rows, None)
            if first is None:
                return
            start, fields = first
            names = tuple(field.strip() for field in fields)
            named = isinstance(label_column, str) or isinstance(text_column, str)
            detected = header is None and not named and _looks_like_header(names)
            if header is None and not named and (detected or _all_names(names)):
                try:
                    column = _label_index(names, label_column)
                except OptionValueError as err:
                    raise CorpusFormatError(self.name, start, str(err)) from None
                if column < len(names) and names[column] in self._known_labels:
                    detected = False  # a row whose label field is a label the data is known to use is data
                elif not detected:  # a row of names, but not the known ones: do the rows below use it as a label?
                    rows = list(rows)
                    if label_column is None:  # judged by the label column the rows' contents would choose
                        column = _defaults(*_columns_by_content(
                            [f for _, f in rows[:CONTENT_SAMPLE] if len(f) == len(fields)], len(fields),
                            self._known_labels, None, text_column))[0]
                    detected = _unused_as_label(names, rows, column)
            if header or named or detected:
                self.header = names
            else:
                rows = itertools.chain([first], rows)
                if label_column is None or text_column is None:  # no names to go by: the columns' contents
                    sample = list(itertools.islice(rows, CONTENT_SAMPLE))
                    rows = itertools.chain(sample, rows)
                    chosen = _columns_by_content([f for _, f in sample if len(f) == len(fields)], len(fields),
                                                 self._known_labels, label_column, text_column)
                    self.by_content = _defaults(*chosen) != _defaults(label_column, text_column)
                    label_column, text_column = chosen
            label, text = self._columns(label_column, text_column, fields, start, kind, quoted)
            self.label_column, self.text_column = label, text
            width = len(fields)
            for number, fields in rows:
                if len(fields) != width:
                    hint = "; a TSV field cannot hold a tab" if not quoted and len(fields) > width else ""
                    raise CorpusFormatError(
                        self.name, number, f"found {len(fields)} {kind} fields, expected {width} as on line {start} "
                        f"(label in column {label}, text in column {text}, counted from 0{hint})",
                    )
                value = fields[label].strip()
                if not value:
                    raise CorpusFormatError(
                        self.name, number, f"empty label (expected a label in column {label}, counted from 0)"
                    )
                if detected and value == names[label]:
                    raise CorpusFormatError(
                        self.name, number,
                        f"label {value!r} is also the name of column {label} on line {start}, which was taken for a "
                        f"header row (expected the header's names not to be labels; state whether line {start} is "
                        "a header: header=True/False, --header/--no-header)",
                    )
                yield Document(fields[text], value, self.name, number)

    def _columns(self, label_column: Column, text_column: Column, first: list[str], line: int, kind: str,
                 quoted: bool) -> tuple[int, int]:
        """The label and text column indices (see :func:`read_tsv`), checked against the first row."""
        names, width = self.header, len(first)
        if names is not None:
            where = f"the header row names columns {', '.join(f'{k} {name!r}' for k, name in enumerate(names))}"
        else:
            fields = f"{width} {kind} fields: columns 0 to" if width > 1 else f"1 {kind} field: column"
            where = f"the first row has {fields} {width - 1}"
        where += ", counted from 0"
        label, text = (self._given(role, column, where, line) for role, column in
                       (("label", label_column), ("text", text_column)))
        if names is not None:
            try:
                label = _known_column(names, LABEL_NAMES, text) if label is None else label
                text = _known_column(names, TEXT_NAMES, label) if text is None else text
            except OptionValueError as err:
                raise CorpusFormatError(self.name, line, str(err)) from None
        label, text = _defaults(label, text)
        if label == text:
            raise CorpusFormatError(self.name, line, f"the label and the text are both column {label} ({where})")
        for role, index in (("label", label), ("text", text)):
            if index >= width:
                hint = ""
                if not quoted and width == 1 and "," in first[0]:
                    hint = "; a comma-separated file is read as CSV (format csv)"
                elif quoted and width == 1 and self._sniffed:
                    hint = (f"; no delimiter among {' '.join(map(repr, CSV_DELIMITERS))} splits the first rows alike: "
                            "--delimiter names the file's")
                raise CorpusFormatError(self.name, line, f"no {role} column {index} ({where}{hint})")
        return label, text

    def _given(self, role: str, column: Column, where: str, line: int) -> int | None:
        """The index of a column the caller gave, by index or header name (None: not given): the name as it is, else
        without regard to case, as a header row is recognised."""
        if not isinstance(column, str):
            return column
        found = [index for index, name in enumerate(self.header) if name == column] or [
            index for index, name in enumerate(self.header) if name.casefold() == column.casefold()]
        if not found:
            raise CorpusFormatError(self.name, line, f"no {role} column named {column!r} in the header row ({where})")
        if len(found) > 1:
            raise CorpusFormatError(self.name, line, _ambiguous(self.header, found))
        return found[0]


def _all_names(names: tuple[str, ...]) -> bool:
    """Whether every field of a row is a column name (identifier-like), no two alike."""
    lowered = [name.casefold() for name in names]
    return all(_COLUMN_NAME.fullmatch(name) for name in names) and len(set(lowered)) == len(lowered)


def _name_words(name: str) -> set[str]:
    """The words of a column name, lowercased: ``"Review Text"`` and ``"review_text"`` give {review, text}."""
    return set(re.split(r"[ _.-]+", name.casefold())) - {""}


#: The rows of a file without a header row that :func:`_columns_by_content` looks at, and the fewest it judges by.
CONTENT_SAMPLE = 1000
CONTENT_MIN_ROWS = 20


def _defaults(label: int | None, text: int | None) -> tuple[int, int]:
    """The label and text columns, the defaults filling a role left None: label 0 and text 1, or the other of the
    two when the other role has one of them."""
    label = (1 if text == 0 else 0) if label is None else label
    return label, (0 if label == 1 else 1) if text is None else text


def _columns_by_content(rows: list[list[str]], width: int, known: frozenset = frozenset(), label: int | None = None,
                        text: int | None = None) -> tuple[int | None, int | None]:
    """The label and text columns of a file without a header row (``label``/``text``: the one given, if any), by
    what its first rows hold; None leaves a role to the defaults (label 0, text 1, or the other of the two).

    With ``known`` labels (a model's, reading its test data), the column of which most values are known labels, at
    least half, is the label column however few the rows.  From :data:`CONTENT_MIN_ROWS` rows on (or with one column
    given, or however few the rows when of two columns one holds sentences and the other single words:
    :func:`_sentences_beside_codes`): the text column is the column of the most words per field when it has more than
    one and half as many again as any other (a sentence among codes and numbers: GLUE CoLA's ``source, label, mark,
    sentence``, or ``text<TAB>label`` rows); the label column is column 0 if it can be one (not the text, no empty
    field, at least two values and some repeated: not a constant, not ids), else the first other column that can.  Of
    two columns without a column of words, the one of half as many distinct values or fewer is the label
    (``Mary<TAB>female``).  A file read right by the defaults (label 0, text 1) is read so still."""
    if width < 2 or not rows:
        return label, text
    columns = [[field.strip() for field in column] for column in zip(*rows)]
    if label is None and known:
        share = [sum(value in known for value in column) / len(rows) if j != text else 0.0
                 for j, column in enumerate(columns)]
        best = max(range(width), key=lambda j: (share[j], -j))
        if share[best] >= 0.5 and share.count(share[best]) == 1:
            label = best
    words = [sum(len(value.split()) for value in column) / len(rows) for column in columns]
    few = len(rows) < CONTENT_MIN_ROWS and not _sentences_beside_codes(columns, words)
    if few and (label is None) == (text is None):
        return label, text
    distinct = [len(set(column)) for column in columns]
    if text is None:
        ranked = sorted((j for j in range(width) if j != label), key=lambda j: -words[j])
        if words[ranked[0]] > 1 and (len(ranked) == 1 or words[ranked[0]] >= 1.5 * words[ranked[1]]):
            text = ranked[0]
    if label is None and text is None and width == 2 and 2 * distinct[1] <= distinct[0]:
        return 1, 0
    if label is None and text is not None:
        can = [j for j in range(width) if j != text and all(columns[j]) and 2 <= distinct[j] < len(rows)]
        label = can[0] if can else None
    return label, text


def _sentences_beside_codes(columns: list[list[str]], words: list[float]) -> bool:
    """Whether of two columns one holds two words a field or more on average and the other single words: a
    ``text<TAB>label`` file plain however few its rows."""
    text = max(range(len(columns)), key=lambda j: words[j])
    return len(columns) == 2 and words[text] >= 2 and all(len(value.split()) <= 1 for value in columns[1 - text])


def _looks_like_header(names: tuple[str, ...]) -> bool:
    """Whether a first row is a header row by its names (:func:`read_tsv`): every field a name of up to four
    words or empty (pandas writes its index column without a name), one a known label name and one a known text
    name ("label", "Review Text")."""
    words = [_name_words(name) for name in names]
    return (all(_SPACED_NAME.fullmatch(name) for name in names if name) and any(w & set(LABEL_NAMES) for w in words)
            and any(w & set(TEXT_NAMES) for w in words))


def _label_index(names: tuple[str, ...], label_column: Column) -> int:
    """The label column a first row of names is judged by: the one given by index, else the one with a label
    name, else 0."""
    return label_column if isinstance(label_column, int) else _known_column(names, LABEL_NAMES, None) or 0


def _unused_as_label(names: tuple[str, ...], rows: list[tuple[int, list[str]]], column: int) -> bool:
    """Whether a first row of names is a header by its use (:func:`read_tsv`): its field in the label
    ``column`` is no label of the ``rows`` below, while some label of theirs repeats."""
    if column >= len(names):
        return False
    labels = [fields[column].strip() for _, fields in rows if len(fields) > column]
    return names[column] not in labels and len(set(labels)) < len(labels)


def _known_column(names: tuple[str, ...], known: tuple[str, ...], taken: int | None) -> int | None:
    """The column (but ``taken``) named by the most preferred of the ``known`` names, if any: a name equal to it,
    else a name of which it is a word ("Review Text").  Two columns of that name are refused: which is meant?"""
    lowered = [name.casefold() for name in names]
    for matches in (lambda name, wanted: name == wanted, lambda name, wanted: wanted in _name_words(name)):
        for wanted in known:
            found = [index for index, name in enumerate(lowered) if matches(name, wanted) and index != taken]
            if len(found) > 1:
                raise OptionValueError(_ambiguous(names, found))
            if found:
                return found[0]
    return None


def _ambiguous(names: tuple[str, ...], columns: list[int]) -> str:
    """What is wrong with a header name that names several columns (alike, or each holding the same known word)."""
    where = " and ".join(f"{index} {names[index]!r}" for index in columns)
    return (f"the header row's columns {where} could each be the one meant: give the column by its index, counted "
            "from 0 (--label-column / --text-column)")


_LABEL = "__label__"


def read_jsonl(path: Source | IO, *, label_column: str | None = None, text_column: str | None = None,
               encoding: str = "UTF-8") -> JsonDocuments:
    """Read one document per JSON object: JSON Lines (an object per line, as pandas' ``to_json(lines=True)`` and
    Hugging Face's datasets write them), or a file that is one JSON array of objects.

    Keys: ``label_column`` and ``text_column`` name them; left unset, each is the first key of the first object
    that :data:`LABEL_NAMES` (resp. :data:`TEXT_NAMES`) names, as for a TSV header (``{"sentence": …, "label":
    0}``).  Further keys are ignored.  A label is a string (stripped, not empty), a number or true/false, read as
    the text JSON gives it (``0``, ``1.5``, ``true``; a whole number as an integer, ``1.0`` as ``1``), so that it
    matches the same label in a TSV file and in a file of integers; a text
    is a string.  Blank lines are skipped.  A line that is no JSON object, an object without one of the two keys,
    or a value of another type is a :class:`~structlin.errors.CorpusFormatError` naming the file and line (an
    array's element: the line it starts on).  The result's ``label_column`` and ``text_column`` say what was used.
    """
    for role, key in (("label", label_column), ("text", text_column)):
        if key is not None and not isinstance(key, str):
            raise OptionValueError(f"the {role} key of a JSON object is a name, not {key!r}")
    if label_column is not None and label_column == text_column:
        raise OptionValueError(f"the label and text keys are the same key ({label_column!r})")
    check_encoding(encoding)
    return JsonDocuments(path, label_column, text_column, encoding)


class _KeyTwice(Exception):
    """A JSON object that gives one key twice (``json.loads`` would keep the last value without a word)."""


def _object_once(pairs: list) -> dict:
    """A JSON object from its ``(key, value)`` pairs, each key once (``json.loads``'s ``object_pairs_hook``)."""
    record = {}
    for key, value in pairs:
        if key in record:
            raise _KeyTwice(key)
        record[key] = value
    return record


#: JSON's whitespace (RFC 8259), skipped around a value.
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
#: Objects built key by key: a key given twice is an error (``json.loads`` would keep the last value).
_JSON_DECODER = json.JSONDecoder(object_pairs_hook=_object_once)


def _json_at(text: str, index: int, name: str, line_of: Callable[[int], int], expected: str) -> tuple[object, int]:
    """The JSON value that starts at ``text[index]`` and the offset after it; anything it cannot be read as (a
    syntax error, a key given twice, nesting deeper than Python's recursion) is one line of ``name``, at the line
    ``line_of(offset)`` of the offset concerned."""
    try:
        return _JSON_DECODER.raw_decode(text, index)
    except json.JSONDecodeError as err:
        raise _json_error(text, err.pos, name, line_of, err.msg, expected) from None
    except _KeyTwice as err:
        raise CorpusFormatError(name, line_of(index), f"an object gives the key {err.args[0]!r} twice (expected each "
                                "key once)") from None
    except RecursionError:
        raise CorpusFormatError(name, line_of(index), f"JSON nested too deeply to read (expected {expected})") from None
    except ValueError as err:  # a value Python will not make, e.g. an integer of more than 4,300 digits
        reason = str(err).split(";")[0]  # not Python's advice to the programmer that follows
        raise CorpusFormatError(name, line_of(index), f"a JSON value that cannot be read: {reason} (expected "
                                f"{expected})") from None


def _json_error(text: str, offset: int, name: str, line_of: Callable[[int], int], what: str,
                expected: str) -> CorpusFormatError:
    """A syntax error at ``offset`` of ``text``, located by line and column."""
    column = offset - text.rfind("\n", 0, offset)
    return CorpusFormatError(name, line_of(offset), f"invalid JSON: {what} at column {column} (expected {expected})")


def _json_line(text: str, name: str, number: int) -> object:
    """The one JSON value of the line ``number`` of ``name``, ``text`` (:func:`_json_at`'s errors)."""
    expected = "one JSON object per line"
    value, end = _json_at(text, _JSON_SPACE.match(text).end(), name, lambda offset: number, expected)
    end = _JSON_SPACE.match(text, end).end()
    if end < len(text):
        raise _json_error(text, end, name, lambda offset: number, "Extra data", expected)
    return value


def _array_records(name: str, first: tuple[int, str], lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, object]]:
    """``(line, value)`` of every element of a JSON array that starts on the numbered line ``first`` and goes on
    over ``lines`` (blank lines left out), each element's line the one it starts on; errors as
    :func:`_json_at`'s.  One pass over the text: elements decoded in place, lines counted from the element
    before."""
    start, pieces, last = first[0], [first[1]], first[0]
    for number, line in lines:
        pieces.append("\n" * (number - last) + line)  # the blank lines left out, back as line breaks
        last = number
    text, expected = "".join(pieces), "a JSON array of objects"
    counted = [0, start]  # an offset and its line: the line of a later offset counts the breaks between them

    def line_of(offset: int) -> int:
        counted[1] += text.count("\n", counted[0], offset)
        counted[0] = offset
        return counted[1]

    index = _JSON_SPACE.match(text, text.index("[") + 1).end()
    if text.startswith("]", index):
        index += 1
    else:
        while True:
            value, end = _json_at(text, index, name, line_of, expected)
            yield line_of(index), value
            index = _JSON_SPACE.match(text, end).end()
            if text.startswith("]", index):
                index += 1
                break
            if not text.startswith(",", index):
                raise _json_error(text, index, name, line_of, "Expecting ',' delimiter or ']'", expected)
            index = _JSON_SPACE.match(text, index + 1).end()
    index = _JSON_SPACE.match(text, index).end()
    if index < len(text):
        raise _json_error(text, index, name, line_of, "Extra data after the array", expected)


class JsonDocuments(Iterator[Document]):
    """The documents of a JSON Lines file or JSON array (see :func:`read_jsonl`), read as they are asked for;
    after the first, ``label_column`` and ``text_column`` hold the keys used."""

    def __init__(self, path: Source | IO, label_key: str | None, text_key: str | None, encoding: str):
        self.name = source_name(path)
        self.label_column, self.text_column = label_key, text_key
        self._documents = self._read(path, encoding)

    def __next__(self) -> Document:
        return next(self._documents)

    def _read(self, path, encoding: str) -> Iterator[Document]:
        with open_text(path, encoding) as lines:
            lines = ((number, text) for number, text in lines if text.strip())
            first = next(lines, None)
            if first is None:
                return
            if first[1].lstrip().startswith("["):  # one JSON array of objects, each located by its first line
                located = _array_records(self.name, first, lines)
            else:
                located = ((number, _json_line(text, self.name, number)) for number, text in
                           itertools.chain([first], lines))
            for number, record in located:
                yield self._document(number, record)

    def _document(self, number: int, record) -> Document:
        if not isinstance(record, dict):
            raise CorpusFormatError(self.name, number, f"a JSON {type(record).__name__}, not an object (expected "
                                    "{\"label\": …, \"text\": …})")
        if self.label_column is None or self.text_column is None:
            self._choose_keys(number, tuple(record))
        for role, key in (("label", self.label_column), ("text", self.text_column)):
            if key not in record:
                raise CorpusFormatError(self.name, number, f"no {role} key {key!r} (the object's keys: "
                                        f"{', '.join(map(repr, record)) or 'none'})")
        label, text = record[self.label_column], record[self.text_column]
        if isinstance(label, str):
            label = label.strip()
        elif isinstance(label, (bool, int, float)) and math.isfinite(label):
            # a whole number written 1.0 (a float column: pandas's when it has a gap) is the label 1 of other files
            label = json.dumps(int(label) if isinstance(label, float) and label.is_integer() else label)
        else:
            raise CorpusFormatError(self.name, number, f"label {label!r} under {self.label_column!r} (expected a string, "
                                    "a number or true/false)")
        if not label:
            raise CorpusFormatError(self.name, number, f"empty label under {self.label_column!r}")
        if has_lone_surrogate(label):  # no model file can hold it; the text can, as an undecodable byte's escape
            raise CorpusFormatError(self.name, number, f"label {label!r} under {self.label_column!r} holds a lone "
                                    "surrogate (a \\ud800-\\udfff escape without its pair): expected text")
        if not isinstance(text, str):
            raise CorpusFormatError(self.name, number, f"text {reprlib.repr(text)} under {self.text_column!r} "
                                    "(expected a string)")
        return Document(text, label, self.name, number)

    def _choose_keys(self, number: int, keys: tuple[str, ...]) -> None:
        """The label and text keys not given, by the names of the first object's keys (as a TSV header's)."""
        try:
            index = {key: k for k, key in enumerate(keys)}
            if self.label_column is None:
                found = _known_column(keys, LABEL_NAMES, index.get(self.text_column))
                self.label_column = None if found is None else keys[found]
            if self.text_column is None:
                found = _known_column(keys, TEXT_NAMES, index.get(self.label_column))
                self.text_column = None if found is None else keys[found]
        except OptionValueError as err:
            raise CorpusFormatError(self.name, number, str(err)) from None
        for role, key, known in (("label", self.label_column, LABEL_NAMES), ("text", self.text_column, TEXT_NAMES)):
            if key is None:
                raise CorpusFormatError(self.name, number, f"no key of the object ({', '.join(map(repr, keys))}) names "
                                        f"the {role} (expected one of {', '.join(known)}; or name it: "
                                        f"{role}_column, --{role}-column)")


def read_fasttext(path: Source | IO, *, encoding: str = "UTF-8") -> Iterator[Document]:
    """Read fastText's supervised format: ``__label__X text`` per line, one label per line.

    The text is the rest of the line, stripped of surrounding whitespace (it may be empty). A line
    that does not start with ``__label__``, or with an empty label, is an error; so is a line with a
    second ``__label__`` token anywhere, since multi-label input is not supported. Empty lines are
    skipped.
    """
    check_encoding(encoding)
    return _read_fasttext(path, encoding)


def _read_fasttext(path, encoding: str) -> Iterator[Document]:
    name = source_name(path)
    with open_text(path, encoding) as lines:
        for number, line in lines:
            tokens = line.split()
            if not tokens:
                continue
            if not tokens[0].startswith(_LABEL):
                other = next((f"; a {kind} file needs --format {fmt}" for kind, fmt, mark in
                              (("tab-separated", "tsv", "\t"), ("comma-separated", "csv", ",")) if mark in line), "")
                raise CorpusFormatError(
                    name, number, f"no label: the line starts with {tokens[0]!r} (expected fastText's "
                                  f"'{_LABEL}<label> <text>'{other})"
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


_INDEX = re.compile(r"[0-9]{1,18}")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LARGEST = float(np.finfo(np.float32).max)  # feature values are stored as 32-bit floats


def read_svmlight(path: Source | IO, *, encoding: str = "UTF-8") -> Iterator[Document]:
    """Read SVMlight / LIBSVM lines ``label index:value index:value ... [# comment]``.

    ``Document.text`` is ``{index: value}`` (indices as written, values as floats), ``Document.label``
    the label: a number in one spelling (:func:`_number_label`: ``+1``, ``1.0`` and ``1`` are one label, ``"1"``),
    anything else as written. An index must be a non-negative integer (at most 18 digits)
    given once per line, a value a decimal number that stays finite as a 32-bit float (the type
    feature values are stored in: ``1e39`` would become infinity); anything else, a token without
    ``:``, a line without a label or with several (LIBSVM's multi-label ``1,2``) is an error. Blank lines and
    comment lines (``#``) are skipped; ``qid:`` is not supported.
    """
    check_encoding(encoding)
    return _read_svmlight(path, encoding)


def _read_svmlight(path, encoding: str) -> Iterator[Document]:
    name = source_name(path)
    with open_text(path, encoding) as lines:
        for number, line in lines:
            parsed = svmlight_line(line, name, number, labelled=True)
            if parsed is not None:
                yield Document(parsed[1], parsed[0], name, number)


def svmlight_line(line: str, name: str, number: int, *, labelled: bool) -> tuple[str | None, dict[int, float]] | None:
    """The label and ``{index: value}`` features of SVMlight line ``number`` of ``name`` (None: a blank or comment
    line).  ``labelled``: the line must start with its label; else the label is optional (None when absent), as in
    lines given to be classified."""
    tokens = line.split("#", 1)[0].split()
    if not tokens:
        return None
    label = tokens[0] if ":" not in tokens[0] else None
    if label is None and labelled:
        raise CorpusFormatError(
            name, number, f"no label: the line starts with {tokens[0]!r} (expected 'label index:value ...')"
        )
    if label is not None and "," in label:  # LIBSVM's multi-label datasets write the labels of a line as 1,2,5
        raise CorpusFormatError(name, number, f"labels {label!r}: multi-label input is not supported "
                                "(expected one label per line)")
    values: dict[int, float] = {}
    for token in tokens[label is not None:]:
        index, value = _svmlight_feature(token, name, number)
        if index in values:
            raise CorpusFormatError(name, number, f"index {index} repeated (expected each index once per line)")
        values[index] = value
    return (None if label is None else _number_label(label)), values


def _number_label(label: str) -> str:
    """An SVMlight label in one spelling when it is a number (SVMlight writes ``+1``, others ``1`` or ``1.0``: one
    class), the decimal's shortest (``"1"``, ``"-1"``, ``"0.5"``, ``"1000"`` for ``1e3``); else as written."""
    if not _NUMBER.fullmatch(label):
        return label
    number = decimal.Decimal(label).normalize()
    return str(int(number)) if number == number.to_integral_value() and number.adjusted() < 19 else str(number)


def _svmlight_feature(token: str, name: str, number: int) -> tuple[int, float]:
    """The index and value of an ``index:value`` token of line ``number``."""
    index, colon, value = token.partition(":")
    if not colon:
        raise CorpusFormatError(name, number, f"feature {token!r} has no ':' (expected index:value)")
    if index == "qid":
        raise CorpusFormatError(name, number, f"{token!r}: query ids are not supported (expected index:value)")
    if not _INDEX.fullmatch(index):
        raise CorpusFormatError(
            name, number, f"index {index!r} of feature {token!r} is not a non-negative integer "
            "(expected index:value with an integer index of at most 18 digits)",
        )
    if not _NUMBER.fullmatch(value):
        raise CorpusFormatError(
            name, number, f"value {value!r} of feature {token!r} is not a number "
            "(expected index:value with a decimal value such as 0.5 or 1e-3)",
        )
    number_value = float(value)
    if not abs(number_value) <= _LARGEST:
        raise CorpusFormatError(
            name, number, f"value {value!r} of feature {token!r} is out of range: it would be stored as "
            f"infinity (expected a magnitude of at most {_LARGEST:.4g}, the largest 32-bit float)",
        )
    return int(index), number_value
