"""Readers of labelled documents from NLTK corpora: any categorized corpus such as movie_reviews (one
document per file), the TREC question classification data qc, the PP-attachment corpus ppattach and
the names corpus. They take a corpus by its name in ``nltk.corpus`` or as a reader object, read its
files directly (below the reader's root, or from its zip archive opened once) in the reader's
encoding, and are what the catalog's ``format = "nltk"`` document corpora are read with.
"""

from __future__ import annotations

import gzip
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO

from structlin.documents.base import Document, NumberedLines, Source
from structlin.readers import DAMAGED, check_encoding, damaged, decode, numbered_lines, open_text, source_name
from structlin.errors import CorpusFormatError, CorpusNotFoundError, OptionValueError, UnknownNameError


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
            yield source, numbered_lines(stream, source, reader.encoding(fileid) or "utf-8")


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
                except DAMAGED as err:
                    raise damaged(source, err, "an intact archive member") from None
            yield Document(decode(data, reader.encoding(fileid) or "utf-8", source), categories[0], source)


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
        raise OptionValueError(f"unknown granularity {granularity!r}; accepted: {', '.join(_GRANULARITIES)}")
    if _is_path(path_or_name):
        encoding = encoding or "iso-8859-2"
        check_encoding(encoding)
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
    with open_text(path, encoding) as lines:
        yield source_name(path), lines


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
