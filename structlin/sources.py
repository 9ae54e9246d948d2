"""Where data comes from: a split of a catalog corpus, or a file read with format options.

The command line and experiments read their corpora through :func:`read_sentences` (taggers) and
:func:`read_documents` (classifiers), so that a corpus name, a path and a format option mean the
same everywhere.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .catalog import Catalog, is_corpus_name, load_documents, load_split, stream_split
from .catalog import stream_documents as stream_catalog_documents
from .documents import (ARCHIVE_SUFFIXES, Document, read_csv, read_fasttext, read_folders, read_jsonl, read_svmlight,
                        read_tsv)
from .errors import CorpusFormatError, OptionValueError
from .outputs import is_special
from .readers import Sentence, guess_format, read_file

DOCUMENT_FORMATS = ("folders", "tar", "tsv", "csv", "jsonl", "fasttext", "svmlight")


@dataclass(frozen=True)
class ReadOptions:
    """How to read a corpus.

    ``format``: a file format (:data:`~structlin.readers.FILE_FORMATS` for tagged sentences,
    :data:`DOCUMENT_FORMATS` for documents; default: guessed from the name); given with a corpus
    name, the name is read as a path.  ``column``: the tag column (CoNLL-U ``upos``/``xpos``, or a
    column corpus's column such as ``chunk``).  ``columns``: the column names of a ``columns`` file.
    ``encoding``: the text encoding of a file (tagged sentences or documents; default UTF-8; a catalog
    corpus's is the catalog's).  ``strip`` and ``granularity`` concern documents: Usenet parts to drop,
    qc's label granularity.  ``header``, ``label_column`` and ``text_column``
    concern TSV and CSV files (see :func:`~structlin.documents.read_tsv`): whether the first row
    names the columns (None: detect it), and the label and text columns (an index counted from 0, or
    a header name); ``delimiter``, a CSV file's (None: detect it, :func:`~structlin.documents.read_csv`);
    ``labels``, the labels the data is known to use (a model's, for its test data): a first row whose label field is
    one of them is data, not a header.  ``report``, if given, is called with one line saying
    how many documents (and labels) a file, folder or archive gave and, for TSV and CSV, what was decided about its
    header and columns.  An option given for data it does not apply to is refused
    (:class:`~structlin.errors.OptionValueError`), not ignored.
    """

    format: str | None = None
    column: str | None = None
    columns: tuple[str, ...] | None = None
    strip: tuple[str, ...] = ()
    granularity: str | None = None
    encoding: str | None = None
    header: bool | None = None
    delimiter: str | None = None
    label_column: int | str | None = None
    text_column: int | str | None = None
    labels: frozenset[str] = frozenset()
    report: Callable[[str], None] | None = field(default=None, compare=False)


_SENTENCE_OPTIONS = ("column", "columns")
_TABLE_OPTIONS = ("header", "label_column", "text_column", "delimiter")
_DOCUMENT_OPTIONS = ("strip", "granularity", *_TABLE_OPTIONS)
#: Options of a file that a catalog corpus's entry gives itself.
_CATALOG_KNOWS = ("columns", "encoding")


def read_sentences(source: str, split: str | None, options: ReadOptions = ReadOptions()) -> list[Sentence]:
    """Tagged sentences: ``split`` of the catalog corpus ``source``, or the file ``source``.

    Options of documents, and ``columns`` with a catalog corpus, are refused; so is a file without
    sentences."""
    _refuse(options, _DOCUMENT_OPTIONS, f"{source} is read as tagged sentences")
    if is_corpus_name(Catalog.load(), source) and not options.format:
        _refuse(options, _CATALOG_KNOWS, f"{source} is a catalog corpus, whose columns and encoding the catalog knows")
        return load_split(source, split, column=options.column)
    return _not_empty(list(_read_sentence_file(source, options)), source, "sentences")


def _read_sentence_file(source: str, options: ReadOptions) -> Iterator[Sentence]:
    """The sentences of the file ``source``, read by ``options`` (a ``columns`` file when only they are given)."""
    return read_file(source, format=options.format or ("columns" if options.columns else None),
                     column=options.column, columns=options.columns, encoding=options.encoding)


class CorpusStream:
    """Units (tagged sentences, labelled documents) read again from their sources at every iteration and never
    held: the training data of ``structlin train tagger|classifier --stream``.  The sources (files, or splits of
    catalog corpora) are read one after the other; a source that gives no unit is an error naming it.  ``units``
    and ``items`` count what the last complete iteration read (sentences and tokens; documents, twice)."""

    def __init__(self, sources: list[tuple[str, Callable[[], Iterable]]], what: str,
                 size: Callable[[object], int] = lambda unit: 1):
        self.sources = sources  # (name, a function that reads it again)
        self.what, self.size = what, size  # "sentences" or "documents"; the items of a unit
        self.units = self.items = 0

    def __iter__(self) -> Iterator:
        units = items = 0
        for name, read in self.sources:
            before = units
            for unit in read():
                units += 1
                items += self.size(unit)
                yield unit
            if units == before:
                raise _empty(name, self.what)
        self.units, self.items = units, items

    def __add__(self, other: CorpusStream) -> CorpusStream:
        return CorpusStream([*self.sources, *other.sources], self.what, self.size)


def stream_sentences(source: str, split: str | None, options: ReadOptions = ReadOptions()) -> CorpusStream:
    """:func:`read_sentences` as a :class:`CorpusStream`: the same sources and options, read as they are
    needed, as often as they are iterated."""
    _refuse(options, _DOCUMENT_OPTIONS, f"{source} is read as tagged sentences")
    _check_rereadable(source)
    if is_corpus_name(Catalog.load(), source) and not options.format:
        _refuse(options, _CATALOG_KNOWS, f"{source} is a catalog corpus, whose columns and encoding the catalog knows")
        read = lambda: stream_split(source, split, column=options.column)  # noqa: E731
    else:
        read = functools.partial(_read_sentence_file, source, options)
        read()  # an option the format does not take is refused now, before anything is read
    return CorpusStream([(source, read)], "sentences", lambda sentence: len(sentence.words))


def read_documents(source: str, split: str | None, options: ReadOptions = ReadOptions()) -> list[Document]:
    """Labelled documents: ``split`` of the catalog corpus ``source``, or a file / folder / archive.

    An option that does not apply to the source (they would be ignored) is refused, and so is a
    source without documents."""
    return _not_empty(list(_document_reader(source, split, options)()), source, "documents")


def stream_documents(source: str, split: str | None, options: ReadOptions = ReadOptions()) -> CorpusStream:
    """:func:`read_documents` as a :class:`CorpusStream`: the same sources and options, read as they are needed,
    as often as they are iterated (what a TSV or CSV file gave is reported once)."""
    _check_rereadable(source)
    return CorpusStream([(source, _document_reader(source, split, replace(options, report=_once(options.report)),
                                                   stream=True))], "documents")


def _check_rereadable(source: str) -> None:
    """Refuse a ``source`` that a stream cannot read again at every epoch: a pipe, FIFO or device (standard input
    among them) gives its data once, and the second reading would wait for a writer or find nothing."""
    if is_special(source):
        raise OptionValueError(f"{source}: a pipe or device, which can be read once; training from a stream (--stream) "
                               "reads its data again at every epoch: give a file, or train without streaming")


def _once(report: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """``report``, called the first time only."""
    if report is None:
        return None
    said = []

    def first(line: str) -> None:
        if not said:
            said.append(line)
            report(line)

    return first


def _document_reader(source: str, split: str | None, options: ReadOptions, *,
                     stream: bool = False) -> Callable[[], Iterable[Document]]:
    """A function that reads the documents of ``source`` (see :func:`read_documents`) each time it is called; the
    options are checked now.  ``stream``: a catalog split is read as it goes where its format allows
    (:func:`~structlin.catalog.stream_documents`)."""
    _refuse(options, _SENTENCE_OPTIONS, f"{source} is read as documents")
    catalog = is_corpus_name(Catalog.load(), source) and not options.format
    fmt = None if catalog else options.format or guess_document_format(source)
    if not options.format and fmt == "fasttext" and guess_format(source) == "conllu":  # not fastText's lines
        raise CorpusFormatError(source, None, f"a CoNLL-U file holds tagged sentences, not labelled documents (read as "
                                f"documents in one of: {', '.join(DOCUMENT_FORMATS)}; --format says which)")
    if fmt is not None and fmt not in DOCUMENT_FORMATS:
        raise OptionValueError(f"format {fmt!r} is a format of tagged sentences; {source} is read as documents, in "
                               f"one of: {', '.join(DOCUMENT_FORMATS)}")
    taken = {"csv": _TABLE_OPTIONS, "tsv": _TABLE_OPTIONS[:3], "jsonl": _TABLE_OPTIONS[1:3]}.get(fmt, ())  # JSON: keys
    refused = [name for name in _TABLE_OPTIONS if getattr(options, name) is not None and name not in taken]
    if refused:
        what = "a catalog corpus" if catalog else f"read as {fmt}"
        delimiter = ", the delimiter to CSV only: a TSV file's is the tab" if "delimiter" in refused else ""
        raise OptionValueError(f"the header and column options ({', '.join(refused)}) apply to TSV and CSV files (the "
                               f"columns to JSON Lines too{delimiter}); {source} is {what}")
    if catalog:  # the catalog's readers refuse the options their corpus's reader does not take
        _refuse(options, ("encoding",), f"{source} is a catalog corpus, whose encoding the catalog gives")
        reading = {name: getattr(options, name) for name in ("strip", "granularity") if getattr(options, name)}
        if stream:  # checked now, read when called
            stream_catalog_documents(source, split, **reading)
            return lambda: stream_catalog_documents(source, split, **reading)
        return lambda: load_documents(source, split, **reading)
    _refuse(options, ("granularity",), f"it applies to the catalog corpus qc; {source} is read as {fmt}")
    if fmt not in ("folders", "tar"):
        _refuse(options, ("strip",), f"it applies to folder trees of Usenet posts; {source} is read as {fmt}")
    encoding = options.encoding or "UTF-8"
    if fmt in ("tsv", "csv"):
        return lambda: _table_documents(source, fmt, encoding, options)
    if fmt == "jsonl":
        return lambda: _json_documents(source, encoding, options)
    if fmt in ("folders", "tar"):
        return lambda: _reported(read_folders(source, encoding=encoding, strip=options.strip), source, options)
    read = read_svmlight if fmt == "svmlight" else read_fasttext
    return lambda: _reported(read(source, encoding=encoding), source, options)


def _refuse(options: ReadOptions, names: tuple[str, ...], why: str) -> None:
    """Refuse the ``names`` options that are given, which would be ignored: ``why``."""
    given = [name for name in names if getattr(options, name) not in (None, ())]
    if given:
        raise OptionValueError(f"the option{'s' if len(given) > 1 else ''} {', '.join(given)} cannot be used: {why}")


def _not_empty(items: list, source: str, what: str) -> list:
    """``items``, unless there are none: then :func:`_empty`."""
    if not items:
        raise _empty(source, what)
    return items


def _empty(source: str, what: str) -> CorpusFormatError:
    """The error of a ``source`` without ``what`` (sentences, documents): an empty file, folder or archive, or a file
    of lines that hold none (blank lines, comments, a header row)."""
    path = Path(source)
    kind = "folder" if path.is_dir() else "archive" if source.lower().endswith(ARCHIVE_SUFFIXES) else "file"
    lines = _line_count(path) if kind == "file" else 0
    if lines:
        return CorpusFormatError(source, None, f"no {what} in its {_count(lines, 'line')} (blank lines, comments or a "
                                               "header row only; expected at least one)")
    return CorpusFormatError(source, None, f"no {what} (empty {kind}; expected at least one)")


def _line_count(path: Path) -> int:
    """The number of lines of the file ``path`` (a last line without a newline counts); 0 when it cannot be read,
    e.g. standard input."""
    try:
        with path.open("rb") as file:
            count = ends_open = 0
            for block in iter(lambda: file.read(1 << 20), b""):
                count += block.count(b"\n")
                ends_open = not block.endswith(b"\n")
            return count + ends_open
    except OSError:
        return 0


def _table_documents(source: str, fmt: str, encoding: str, options: ReadOptions) -> Iterator[Document]:
    """The documents of a TSV or CSV file, :func:`_reported` with the header and columns used."""
    read = read_tsv if fmt == "tsv" else functools.partial(read_csv, delimiter=options.delimiter)
    table = read(source, label_column=options.label_column, text_column=options.text_column, header=options.header,
                 encoding=encoding, labels=options.labels)

    def columns() -> str:
        kind = f"{table.kind}; " if fmt == "csv" and table.delimiter != "," else ""  # a CSV file's unusual delimiter
        if table.header is not None:
            names = table.header
            return (f" ({kind}header row: {', '.join(names)}; labels from {names[table.label_column]!r}, texts from "
                    f"{names[table.text_column]!r})")
        if table.label_column is not None:
            how = (", chosen by their contents: --label-column and --text-column choose others" if table.by_content
                   else "")
            return (f" ({kind}no header row; labels from column {table.label_column}, texts from column "
                    f"{table.text_column}{how})")
        return ""

    return _reported(table, source, options, columns)


def _json_documents(source: str, encoding: str, options: ReadOptions) -> Iterator[Document]:
    """The documents of a JSON Lines file (or JSON array), :func:`_reported` with the keys used."""
    for role in ("label_column", "text_column"):
        if isinstance(getattr(options, role), int):
            raise OptionValueError(f"the {role.replace('_', ' ')} of a JSON object is a key, not an index "
                                   f"({getattr(options, role)}): name it")
    objects = read_jsonl(source, label_column=options.label_column, text_column=options.text_column,
                         encoding=encoding)
    return _reported(objects, source, options,
                     lambda: f" (labels from key {objects.label_column!r}, texts from key {objects.text_column!r})")


def _reported(documents: Iterable[Document], source: str, options: ReadOptions,
              how: Callable[[], str] = str) -> Iterator[Document]:
    """The ``documents`` of the file, folder or archive ``source``; once they are all read, ``options.report`` hears
    how many there were and how many labels, with ``how()`` (what the reader decided), so that nothing is dropped
    unseen.  Labels all different, one per document, are pointed out: a wrong label column reads so."""
    count, labels = 0, set()
    for document in documents:
        count += 1
        labels.add(document.label)
        yield document
    if options.report:
        said = f"read {_count(count, 'document')} ({_count(len(labels), 'label')}) from {source}{how()}"
        if count >= 10 and len(labels) == count:
            said += "; every document has a label of its own: is that the label column?"
        options.report(said)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def guess_document_format(source: str) -> str:
    """The document format a path's name suggests: folders (a folder or archive), csv (*.csv), tsv (*.tsv,
    *.tab), jsonl (*.jsonl, *.ndjson, *.json), svmlight (*.svm, *.svmlight) or fasttext, the suffix in any case; a ``.gz`` suffix is looked through."""
    name = source.lower().removesuffix(".gz")
    if Path(source).is_dir() or name.endswith((".tar", ".tgz", ".zip")) or source.lower().endswith(".tar.gz"):
        return "folders"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".tsv", ".tab")):
        return "tsv"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    return "svmlight" if name.endswith((".svm", ".svmlight")) else "fasttext"


def hold_out(items: list, fraction: float, seed: int) -> tuple[list, list]:
    """Split ``items`` into (rest, held out) at random (seeded): ``fraction`` of them, at least one, held out."""
    order = np.random.default_rng(seed).permutation(len(items))
    cut = len(items) - max(1, round(fraction * len(items)))
    return [items[k] for k in order[:cut]], [items[k] for k in order[cut:]]
