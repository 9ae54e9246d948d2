"""The corpus catalog: named corpora, where their files are found or downloaded from, their splits.

The catalog is a TOML file (``corpora/catalog.toml``, installed as ``structlin.corpora``; its header
documents the schema).  :func:`resolve` finds a corpus file locally or downloads it into the per-user
cache, checking its SHA-256; :func:`load_split` reads one split of a tagged corpus as
:class:`structlin.readers.Sentence` objects, :func:`load_documents` one split of a document corpus
(``kind = "documents"``: labelled documents for a classifier) as :class:`structlin.documents.Document`
objects.

A file is looked for, in this order, under

1. the data directory: ``data_dir`` or the ``STRUCTLIN_DATA`` environment variable;
2. each directory of NLTK's data path (``nltk.data.path``, which honours ``NLTK_DATA``);
3. the cache: ``cache_dir``, ``STRUCTLIN_CACHE``, ``$XDG_CACHE_HOME/structlin`` or ``~/.cache/structlin``;

each joined with the file's relative path (for an NLTK archive ``corpora/<id>.zip`` the unzipped
folder ``corpora/<id>/`` is accepted too, and for a ``folders`` archive such as ``x/x.tar.gz`` the
unpacked folder ``x/x/``).  A download goes to a temporary file beside its target and
is moved into place only once its SHA-256 is the catalog's ``sha256``, so the cache never holds a
partial or unchecked file.

Local copies.  A file in the data directory was put there by hand, so it is checked before use: its
SHA-256 must be the catalog's ``sha256`` or one of the split's ``local_sha256``, the checksums of
known re-packs holding the same data in other bytes (such as an archive re-compressed elsewhere);
any other raises :class:`LocalCopyError`, one line naming the path, both checksums and the URL.
Unpacked folders cannot be checked and are used as they are, as are the files in NLTK's data path
(NLTK's downloader checks them against its own index, which may list another release).  When a
file is missing and cannot be downloaded, the error says where to save it by hand.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import importlib.resources
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.client import HTTPException
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Iterator

from tqdm import tqdm

from structlin.errors import (ChecksumError, CorpusFormatError, CorpusNotFoundError, LocalCopyError, StructlinError,
                              SplitNeededError, UnknownNameError, UnknownOptionError)

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from structlin.documents import Document
    from structlin.readers import Sentence

__all__ = [
    "Catalog", "CorpusEntry", "CorpusKindError", "CorpusName", "LocalCopyError", "NltkReaderSpec", "Split",
    "is_corpus_name", "load_documents", "load_split", "resolve",
]

FORMATS = ("conllu", "nltk", "folders")
KINDS = ("tagged", "documents")
# How an ``nltk`` document corpus makes documents (the structlin.documents reader it is read with).
DOCUMENT_READERS = ("categorized", "qc", "ppattach", "names")
# The reader options load_documents passes on, by folders format or document reader.
_DOCUMENT_OPTIONS = {"folders": ("strip",), "categorized": (), "qc": ("granularity",), "ppattach": (), "names": ()}
TIMEOUT = 60  # seconds without data before a download gives up
_CHUNK = 1 << 16

_ENTRY_KEYS = {"kind", "format", "description", "licence", "column", "encoding", "path", "url", "sha256",
               "local_sha256", "splits", "nltk"}
_SPLIT_KEYS = {"path", "url", "sha256", "local_sha256", "fileids", "fraction", "subset"}
_NLTK_KEYS = {"reader", "documents", "root", "fileids", "tagset", "columns", "options"}
_MISSING = object()


@dataclass
class Split:
    """One split of a corpus: its file (relative path, URL, SHA-256) and which part of it to keep."""

    name: str
    path: str
    url: str
    sha256: str
    fileids: tuple[str, ...] | None = None
    fraction: tuple[float, float] = (0.0, 1.0)
    subset: str | None = None  # format "folders": the split's top folder in the tree or archive
    local_sha256: tuple[str, ...] = ()  # known re-packs, accepted in the data directory (not as a download)


@dataclass
class NltkReaderSpec:
    """How to build the NLTK corpus reader of an ``nltk`` corpus (see the catalog's header)."""

    reader: str
    fileids: str | tuple[str, ...]
    root: str = ""
    tagset: str | None = None
    columns: tuple[str, ...] | None = None
    options: dict = field(default_factory=dict)
    documents: str | None = None  # kind "documents": one of DOCUMENT_READERS


@dataclass
class CorpusEntry:
    """A named corpus of the catalog."""

    name: str
    format: str
    description: str
    licence: str
    splits: dict[str, Split]
    column: str | None = None
    nltk: NltkReaderSpec | None = None
    kind: str = "tagged"  # or "documents"
    encoding: str | None = None  # format "folders": the files' text encoding (default UTF-8)

    def split(self, name: str | None = None) -> Split:
        """The split called ``name``; ``None`` is accepted when all splits share one file."""
        if name is None and len({s.path for s in self.splits.values()}) == 1:
            return next(iter(self.splits.values()))
        if name is None:
            raise SplitNeededError(self.name, self.splits)
        if name not in self.splits:
            raise UnknownNameError(f"split of corpus {self.name!r}", str(name), self.splits)
        return self.splits[name]


class CorpusKindError(StructlinError, ValueError):
    """A corpus read as the other kind: :func:`load_split` on labelled documents, :func:`load_documents`
    on tagged sentences."""


class Catalog:
    """The corpora of one catalog file, by name."""

    def __init__(self, entries: dict[str, CorpusEntry], path: str):
        self.entries = entries
        self.path = path

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> Catalog:
        """Load the catalog at ``path``, or structlin's own catalog when ``path`` is ``None``.

        Raises :class:`CorpusFormatError` for a file that cannot be read, is not TOML, or does not
        follow the schema.
        """
        default = importlib.resources.files("structlin.corpora") / "catalog.toml"
        source = default if path is None else Path(path)
        try:
            data = tomllib.loads(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as err:
            raise CorpusFormatError(source, None, f"cannot read the catalog: {err}") from err
        except tomllib.TOMLDecodeError as err:
            line = re.search(r"at line (\d+)", str(err))  # tomllib has no line attribute before 3.14
            raise CorpusFormatError(source, line and int(line[1]), f"not valid TOML: {err}") from err
        try:
            _keys(data, {"corpus"}, "the catalog")
            corpora = _table(data, "corpus", "the catalog")
            entries = {name: _entry(name, table) for name, table in corpora.items()}
        except _Invalid as err:
            raise CorpusFormatError(source, None, str(err)) from None
        return cls(entries, str(source))

    def names(self) -> list[str]:
        """The corpus names, in catalog order."""
        return list(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __getitem__(self, name: str) -> CorpusEntry:
        if name not in self.entries:  # a source is a corpus's name or a path: neither
            raise UnknownNameError("corpus", name, self.entries, " (and no file or folder of that name)")
        return self.entries[name]


class CorpusName(str):
    """A source given as a catalog corpus's name (the command line's ``--corpus``): a corpus of the catalog is read
    from it even where a file or folder of that name exists (``--corpus qc`` beside a folder ``qc/`` of one's own
    outputs); another name is taken as any source is."""


def is_corpus_name(catalog: Catalog, text: str) -> bool:
    """Whether ``text`` names a corpus of ``catalog`` rather than a path.

    A :class:`CorpusName` of the catalog is a name.  Otherwise a path that exists, or that contains a path
    separator or has a file suffix, is a path; any other text is taken as a name (so that a misspelt name gets
    an "unknown corpus" error listing the names).
    """
    if isinstance(text, CorpusName) and text in catalog:
        return True
    if os.path.exists(text):
        return False
    if text in catalog:
        return True
    return not (any(sep and sep in text for sep in ("/", os.sep, os.altsep)) or Path(text).suffix)


def resolve(
    entry: CorpusEntry,
    split: str | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
    progress: bool | None = None,
) -> Path:
    """The local path of ``split``'s file (for an ``nltk`` corpus: its archive or folder).

    Looks in the data directory, NLTK's data path and the cache (see the module docstring); if the
    file is in none of them and ``download`` is true, downloads it into the cache, with a progress bar
    unless ``progress`` is false (by default: when stderr is a terminal).  Raises
    :class:`LocalCopyError` for a file in the data directory with a checksum the catalog does not
    accept, :class:`ChecksumError` when the download's SHA-256 differs from the catalog's, and
    :class:`CorpusNotFoundError` (saying where to put the file by hand) when the file is absent and
    not downloaded.
    """
    chosen = entry.split(split)
    relative = Path(chosen.path)
    what = f"corpus {entry.name!r}" + (f" split {split!r}" if split else "")
    cache = user_cache_dir(cache_dir)
    data = _data_dir(data_dir)
    bases = [*([data] if data else []), *_nltk_dirs(), cache]
    for base in bases:
        candidate = base / relative
        if candidate.is_file():
            if base is data:  # put there by hand: check it (see the module docstring)
                _check_local_copy(candidate, chosen, what)
            return candidate
        if entry.format == "nltk" and relative.suffix == ".zip" and candidate.with_suffix("").is_dir():
            return candidate.with_suffix("")
        if entry.format == "folders" and (unpacked := _unpacked(candidate)) and unpacked.is_dir():
            return unpacked
    looked = f"{what}: {chosen.path} is not in {', '.join(map(str, bases))}"
    by_hand = f"save it as {data / relative}" if data else f"save it as DIR/{chosen.path} and set STRUCTLIN_DATA=DIR"
    if not download:
        raise CorpusNotFoundError(f"{looked}; downloading is off: get {chosen.url} and {by_hand}")
    target = cache / relative
    try:
        _download(chosen.url, target, chosen.sha256, progress)
    except (OSError, HTTPException, ValueError) as err:
        # a URLError holds the socket's error in .reason; its subclass HTTPError reads "HTTP Error 404: ..."
        reason = err.reason if type(err) is urllib.error.URLError else err
        raise CorpusNotFoundError(
            f"{looked}, and downloading {chosen.url} failed: {reason}; to install it by hand, {by_hand}"
        ) from err
    return target


def _check_local_copy(path: Path, chosen: Split, what: str) -> None:
    """Refuse a file of the data directory whose SHA-256 the catalog does not list for ``chosen``."""
    stat = path.stat()
    actual = _sha256_of(str(path), stat.st_size, stat.st_mtime_ns)
    if actual == chosen.sha256 or actual in chosen.local_sha256:
        return
    expected = " or ".join((chosen.sha256, *chosen.local_sha256))
    raise LocalCopyError(
        f"{path}: SHA-256 is {actual}, the catalog expects {expected} for {what}; replace it with "
        f"{chosen.url}, or delete it to have it downloaded"
    )


@functools.lru_cache(maxsize=32)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    """The SHA-256 of the file at ``path``, memoised by size and modification time (an experiment
    resolves the same corpus file once per run)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


_READERS = {"tagged": ("tagged sentences", "load_split", "tagger"),
            "documents": ("labelled documents", "load_documents", "classifier")}


def _entry_of_kind(name_or_entry: str | CorpusEntry, catalog: Catalog | None, kind: str) -> CorpusEntry:
    """The catalog entry, which must hold corpora of ``kind`` (``tagged`` or ``documents``)."""
    entry = name_or_entry if isinstance(name_or_entry, CorpusEntry) else (catalog or Catalog.load())[name_or_entry]
    if entry.kind != kind:
        holds, reader, model = _READERS[entry.kind]
        raise CorpusKindError(f"corpus {entry.name!r} holds {holds}, not {_READERS[kind][0]}: it trains a {model} "
                              f"(structlin train {model}), and Python reads it with {reader}")
    return entry


def load_split(
    name_or_entry: str | CorpusEntry,
    split: str | None,
    *,
    column: str | None = None,
    catalog: Catalog | None = None,
    **resolve_kwargs,
) -> list[Sentence]:
    """Read one split of a catalog corpus (resolving, and if need be downloading, its file).

    ``column`` picks the tags: for CoNLL-U ``"upos"`` or ``"xpos"``; for NLTK corpora ``None`` (the
    native tags), ``"universal"`` (mapped to the universal tag set) or, for column corpora such as
    conll2000, a column name (``"pos"``, ``"chunk"``).  The default is the catalog's ``column``.
    ``resolve_kwargs`` go to :func:`resolve`.
    """
    entry = _entry_of_kind(name_or_entry, catalog, "tagged")
    chosen = entry.split(split)
    path = resolve(entry, split, **resolve_kwargs)
    if entry.format == "conllu":
        from structlin.readers import read_conllu

        sentences = list(read_conllu(path, column=column or entry.column))
    else:
        sentences = _read_nltk(entry, chosen, path, column or entry.column)
    start, stop = (round(f * len(sentences)) for f in chosen.fraction)
    return sentences[start:stop]


def stream_split(name_or_entry: str | CorpusEntry, split: str | None, *, column: str | None = None,
                 catalog: Catalog | None = None, **resolve_kwargs) -> Iterator[Sentence]:
    """The sentences of :func:`load_split`, yielded as they are read: a CoNLL-U split that is a whole file is
    never held in memory (a corpus NLTK's readers read, or a fraction of a file, is read whole first)."""
    entry = _entry_of_kind(name_or_entry, catalog, "tagged")
    if entry.format == "conllu" and tuple(entry.split(split).fraction) == (0.0, 1.0):
        from structlin.readers import read_conllu

        yield from read_conllu(resolve(entry, split, **resolve_kwargs), column=column or entry.column)
    else:
        yield from load_split(entry, split, column=column, catalog=catalog, **resolve_kwargs)


def _read_nltk(entry: CorpusEntry, chosen: Split, path: Path, column: str | None) -> list[Sentence]:
    """The sentences of ``chosen``'s fileids, read by the corpus reader the catalog describes."""
    spec = entry.nltk
    accepted = [*(spec.columns or ()), "universal"]
    if column is not None and column not in accepted:
        raise UnknownNameError(f"column of corpus {entry.name!r}", column, accepted)
    fileids = list(chosen.fileids) if chosen.fileids else None
    with _nltk_allowed(path):
        reader = _nltk_reader(spec, path)
        if not spec.columns:
            from structlin.readers import read_nltk

            return list(read_nltk(reader, tagset=column, source_tagset=spec.tagset, fileids=fileids))
        from structlin.readers import Sentence

        # "universal" maps the POS column (the one iob_sents() maps): the catalog's default column
        index = spec.columns.index(entry.column if column == "universal" else column)
        rows = reader.iob_sents(fileids, tagset="universal" if column == "universal" else None)
        return [Sentence([t[0] for t in r], [t[index] for t in r], columns=[list(t) for t in r],
                         column_names=tuple(spec.columns)) for r in rows]


def _nltk_reader(spec: NltkReaderSpec, path: Path):
    """The NLTK corpus reader ``spec`` describes, on the archive or folder at ``path``."""
    import nltk.corpus.reader
    import nltk.data

    cls = getattr(nltk.corpus.reader, spec.reader, None)
    if not (isinstance(cls, type) and issubclass(cls, nltk.corpus.reader.CorpusReader)):
        names = [name for name in dir(nltk.corpus.reader) if name.endswith("CorpusReader")]
        raise UnknownNameError("NLTK corpus reader", spec.reader, names)
    options = {**spec.options, **({"tagset": spec.tagset} if spec.tagset else {})}
    if path.is_dir():
        root = nltk.data.FileSystemPathPointer(str(path / spec.root))
    else:  # an NLTK archive holds one top folder named like the archive
        root = nltk.data.ZipFilePathPointer(str(path), "/".join(filter(None, (path.stem, spec.root))) + "/")
    return cls(root, spec.fileids if isinstance(spec.fileids, str) else list(spec.fileids), **options)


def load_documents(
    name_or_entry: str | CorpusEntry,
    split: str | None = None,
    *,
    catalog: Catalog | None = None,
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
    progress: bool | None = None,
    **options,
) -> list[Document]:
    """Read one split of a document corpus of the catalog (resolving, and if need be downloading, it).

    ``split`` may be left out when the corpus has a single split (``"all"`` for corpora without an
    official split, such as movie_reviews and names: cross-validate).  ``options`` go to the reader:
    ``strip`` for ``folders`` corpora (20news-bydate: ``strip=("headers", "footers", "quotes")``, see
    :func:`structlin.documents.strip_usenet`), ``granularity`` (``"coarse"`` or ``"fine"``) for qc.
    ``data_dir``, ``cache_dir``, ``download`` and ``progress`` go to :func:`resolve`.
    """
    entry, chosen = _document_split(name_or_entry, split, catalog, options)
    path = resolve(entry, chosen.name, data_dir=data_dir, cache_dir=cache_dir, download=download, progress=progress)
    if entry.format == "folders":
        documents = list(_folder_documents(entry, chosen, path, options))
    else:
        documents = _read_nltk_documents(entry, chosen, path, options)
    start, stop = (round(f * len(documents)) for f in chosen.fraction)
    return documents[start:stop]


def stream_documents(name_or_entry: str | CorpusEntry, split: str | None = None, *, catalog: Catalog | None = None,
                     **options) -> Iterator[Document]:
    """The documents of :func:`load_documents`, yielded as they are read: a folder tree or archive split that is
    whole is never held in memory (another corpus, or a fraction of one, is read whole first).  The split and
    the options are checked when this is called, the corpus is resolved when the first document is asked for."""
    entry, chosen = _document_split(name_or_entry, split, catalog, options)
    if entry.format == "folders" and tuple(chosen.fraction) == (0.0, 1.0):
        return _folder_documents(entry, chosen, None, options)

    def whole() -> Iterator[Document]:
        yield from load_documents(entry, split, **options)

    return whole()


def _document_split(name_or_entry: str | CorpusEntry, split: str | None, catalog: Catalog | None,
                    options: dict) -> tuple[CorpusEntry, Split]:
    """The entry and split of a document corpus, with the reader ``options`` checked against its reader."""
    entry = _entry_of_kind(name_or_entry, catalog, "documents")
    if split is None and len(entry.splits) != 1:
        raise SplitNeededError(entry.name, entry.splits)
    chosen = entry.split(split)
    reader = entry.format if entry.format == "folders" else entry.nltk.documents
    accepted = _DOCUMENT_OPTIONS[reader]
    for key in options:
        if key not in accepted:
            raise UnknownOptionError(
                f"load_documents() got an unexpected option {key!r} for corpus {entry.name!r} "
                f"(accepted: {', '.join(accepted) or 'none'}, and data_dir, cache_dir, download, progress)"
            )
    return entry, chosen


def _folder_documents(entry: CorpusEntry, chosen: Split, path: Path | None, options: dict) -> Iterator[Document]:
    """The documents of a ``folders`` corpus's split at ``path`` (None: resolved when the first is asked for)."""
    from structlin.documents import read_folders

    if path is None:
        path = resolve(entry, chosen.name)
    yield from read_folders(path, encoding=entry.encoding or "utf-8", subset=chosen.subset, **options)


def _read_nltk_documents(entry: CorpusEntry, chosen: Split, path: Path, options: dict) -> list[Document]:
    """The documents of ``chosen``'s fileids (default: all the reader's), by the catalog's document reader."""
    from structlin import documents

    spec = entry.nltk
    with _nltk_allowed(path):
        reader = _nltk_reader(spec, path)
        fileids = list(chosen.fileids) if chosen.fileids else list(reader.fileids())
        if spec.documents == "categorized":
            return list(documents.read_nltk_categorized(reader, fileids=fileids))
        if spec.documents == "names":
            return list(documents.read_names(corpus=reader, fileids=fileids))
        if spec.documents == "qc":
            return [doc for fileid in fileids for doc in documents.read_qc(reader, fileid=fileid, **options)]
        return [doc for fileid in fileids for doc in documents.read_ppattach(fileid, corpus=reader)]


def _unpacked(archive: Path) -> Path | None:
    """The folder an archive unpacks to (``x.tar.gz`` → ``x``), or None for another file name."""
    from structlin.documents import ARCHIVE_SUFFIXES

    suffix = next((s for s in ARCHIVE_SUFFIXES if archive.name.lower().endswith(s)), None)
    return archive.with_name(archive.name[: -len(suffix)]) if suffix else None


@contextmanager
def _nltk_allowed(path: Path) -> Iterator[None]:
    """Let NLTK read ``path`` meanwhile (recent NLTK opens only files below ``nltk.data.path``)."""
    import nltk.data

    nltk.data.path.append(str(path))
    try:
        yield
    finally:  # remove our entry: the last one equal to it
        entries = nltk.data.path
        del entries[len(entries) - 1 - entries[::-1].index(str(path))]


def _data_dir(data_dir: str | os.PathLike | None) -> Path | None:
    """The data directory: ``data_dir``, else ``STRUCTLIN_DATA``, else none."""
    data = data_dir if data_dir is not None else os.environ.get("STRUCTLIN_DATA")
    return Path(data) if data else None


def _nltk_dirs() -> list[Path]:
    """The directories of NLTK's data path (``nltk.data.path``, which honours ``NLTK_DATA``)."""
    import nltk.data

    return [Path(p) for p in nltk.data.path if isinstance(p, str)]


def user_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """structlin's per-user cache (downloads, feature caches): ``cache_dir`` when given, else ``STRUCTLIN_CACHE``,
    ``$XDG_CACHE_HOME/structlin`` or ``~/.cache/structlin``."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("STRUCTLIN_CACHE"):
        return Path(os.environ["STRUCTLIN_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "structlin"


def _download(url: str, target: Path, sha256: str, progress: bool | None) -> None:
    """Download ``url`` to ``target``, all or nothing, checking its SHA-256 while streaming."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        digest = hashlib.sha256()
        received = 0
        quiet = not progress if progress is not None else not (sys.stderr and sys.stderr.isatty())
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            size = response.headers.get("Content-Length")
            size = int(size) if size else None
            with tqdm(total=size, unit="B", unit_scale=True, desc=target.name, disable=quiet) as bar:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
        if size is not None and received != size:
            raise ConnectionError(f"connection closed after {received} of {size} bytes")
        if digest.hexdigest() != sha256:
            raise ChecksumError(f"{url}: SHA-256 is {digest.hexdigest()}, the catalog expects {sha256}")
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


class _Invalid(Exception):
    """A catalog that does not follow the schema (turned into a CorpusFormatError by Catalog.load)."""


def _keys(table: dict, allowed: set[str], where: str) -> None:
    """Reject keys the schema does not know (most likely misspelt)."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _Invalid(f"{where}: unknown key {unknown[0]!r} (accepted: {', '.join(sorted(allowed))})")


def _table(table: dict, key: str, where: str, default: object = _MISSING) -> dict:
    """The sub-table ``key`` of ``table``."""
    value = table.get(key, default)
    if value is _MISSING or not isinstance(value, dict):
        raise _Invalid(f"{where}: {key!r} must be a table" + (" (missing)" if value is _MISSING else ""))
    return value


def _string(table: dict, key: str, where: str, default: object = _MISSING) -> str | None:
    """The string ``key`` of ``table``; ``default`` (when given) if absent."""
    value = table.get(key, default)
    if value is _MISSING:
        raise _Invalid(f"{where}: missing {key!r}")
    if key in table and not isinstance(value, str):
        raise _Invalid(f"{where}: {key!r} must be a string")
    return value


def _strings(table: dict, key: str, where: str) -> tuple[str, ...] | None:
    """The optional list of strings ``key`` of ``table``."""
    value = table.get(key)
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise _Invalid(f"{where}: {key!r} must be a list of strings")
    return None if value is None else tuple(value)


def _entry(name: str, table: object) -> CorpusEntry:
    """Parse and check the table of corpus ``name``."""
    where = f"corpus {name!r}"
    if not isinstance(table, dict):
        raise _Invalid(f"{where} must be a table")
    _keys(table, _ENTRY_KEYS, where)
    fmt = _string(table, "format", where)
    if fmt not in FORMATS:
        raise _Invalid(f"{where}: format {fmt!r} is not one of {', '.join(FORMATS)}")
    kind = _string(table, "kind", where, "tagged")
    if kind not in KINDS:
        raise _Invalid(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if (fmt == "folders") != (kind == "documents") and fmt != "nltk":
        raise _Invalid(f"{where}: format {fmt!r} is for kind {'documents' if fmt == 'folders' else 'tagged'}")
    splits = _table(table, "splits", where)
    splits = {key: _split(key, spec, table, f"{where} split {key!r}") for key, spec in splits.items()}
    if not splits:
        raise _Invalid(f"{where}: no splits")
    if fmt != "nltk" and "nltk" in table:
        raise _Invalid(f"{where}: an 'nltk' table is only for format 'nltk'")
    if fmt != "folders" and ("encoding" in table or any(s.subset is not None for s in splits.values())):
        raise _Invalid(f"{where}: 'encoding' and a split's 'subset' are only for format 'folders'")
    if kind == "documents" and "column" in table:
        raise _Invalid(f"{where}: 'column' is only for tagged corpora")
    column = _string(table, "column", where, None)
    encoding = _string(table, "encoding", where, None)
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise _Invalid(f"{where}: unknown encoding {encoding!r}") from None
    nltk = _nltk(_table(table, "nltk", where), f"{where} nltk") if fmt == "nltk" else None
    if nltk and nltk.columns and column not in nltk.columns:
        raise _Invalid(f"{where}: 'column' must be one of the nltk columns {', '.join(nltk.columns)}")
    if nltk and kind == "documents" and nltk.documents not in DOCUMENT_READERS:
        what = "missing 'documents'" if nltk.documents is None else f"'documents' {nltk.documents!r} is not"
        raise _Invalid(f"{where} nltk: {what} one of {', '.join(DOCUMENT_READERS)}")
    if nltk and kind == "tagged" and nltk.documents is not None:
        raise _Invalid(f"{where} nltk: 'documents' is only for kind 'documents'")
    return CorpusEntry(
        name=name,
        format=fmt,
        description=_string(table, "description", where, ""),
        licence=_string(table, "licence", where, ""),
        splits=splits,
        column=column,
        nltk=nltk,
        kind=kind,
        encoding=encoding,
    )


def _split(name: str, spec: object, corpus: dict, where: str) -> Split:
    """Parse a split; its file keys default to the corpus's."""
    if not isinstance(spec, dict):
        raise _Invalid(f"{where} must be a table")
    _keys(spec, _SPLIT_KEYS, where)
    inherited = {key: spec.get(key, corpus.get(key, _MISSING)) for key in ("path", "url", "sha256")}
    path, url, sha256 = (_string(inherited, key, where) for key in ("path", "url", "sha256"))
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise _Invalid(f"{where}: 'sha256' must be 64 lower-case hex digits")
    local_sha256 = _strings(spec if "local_sha256" in spec else corpus, "local_sha256", where) or ()
    if not all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in local_sha256):
        raise _Invalid(f"{where}: 'local_sha256' must be a list of 64 lower-case hex digits each")
    fraction = spec.get("fraction", [0.0, 1.0])
    if not (
        isinstance(fraction, list)
        and len(fraction) == 2
        and all(isinstance(f, (int, float)) and not isinstance(f, bool) for f in fraction)
        and 0 <= fraction[0] <= fraction[1] <= 1
    ):
        raise _Invalid(f"{where}: 'fraction' must be [a, b] with 0 <= a <= b <= 1")
    fileids = _strings(spec, "fileids", where)
    subset = _string(spec, "subset", where, None)
    return Split(name, path, url, sha256, fileids, (float(fraction[0]), float(fraction[1])), subset, local_sha256)


def _nltk(table: dict, where: str) -> NltkReaderSpec:
    """Parse the reader description of an ``nltk`` corpus."""
    _keys(table, _NLTK_KEYS, where)
    fileids = _string(table, "fileids", where) if not isinstance(table.get("fileids"), list) else None
    return NltkReaderSpec(
        reader=_string(table, "reader", where),
        fileids=fileids or _strings(table, "fileids", where),
        root=_string(table, "root", where, ""),
        tagset=_string(table, "tagset", where, None),
        columns=_strings(table, "columns", where),
        options=_table(table, "options", where, {}),
        documents=_string(table, "documents", where, None),
    )
