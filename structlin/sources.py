"""Where data comes from: a split of a catalog corpus, or a file read with format options.

The command line and experiments read their corpora through :func:`read_sentences` (taggers) and
:func:`read_documents` (classifiers), so that a corpus name, a path and a format option mean the
same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .catalog import Catalog, is_corpus_name, load_documents, load_split
from .documents import Document, read_fasttext, read_folders, read_svmlight, read_tsv
from .readers import Sentence, read_file

DOCUMENT_FORMATS = ("folders", "tar", "tsv", "fasttext", "svmlight")


@dataclass(frozen=True)
class ReadOptions:
    """How to read a corpus.

    ``format``: a file format (:data:`~structlin.readers.FILE_FORMATS` for tagged sentences,
    :data:`DOCUMENT_FORMATS` for documents; default: guessed from the name); given with a corpus
    name, the name is read as a path.  ``column``: the tag column (CoNLL-U ``upos``/``xpos``, or a
    column corpus's column such as ``chunk``).  ``columns``: the column names of a ``columns`` file.
    ``strip``, ``granularity`` and ``encoding`` concern documents: Usenet parts to drop, qc's
    label granularity, the files' text encoding.
    """

    format: str | None = None
    column: str | None = None
    columns: tuple[str, ...] | None = None
    strip: tuple[str, ...] = ()
    granularity: str | None = None
    encoding: str | None = None


def read_sentences(source: str, split: str | None, options: ReadOptions = ReadOptions()) -> list[Sentence]:
    """Tagged sentences: ``split`` of the catalog corpus ``source``, or the file ``source``."""
    if is_corpus_name(Catalog.load(), source) and not options.format:
        return load_split(source, split, column=options.column)
    return list(read_file(source, format=options.format or ("columns" if options.columns else None),
                          column=options.column or "upos", columns=options.columns))


def read_documents(source: str, split: str | None, options: ReadOptions = ReadOptions()) -> list[Document]:
    """Labelled documents: ``split`` of the catalog corpus ``source``, or a file / folder / archive."""
    if is_corpus_name(Catalog.load(), source) and not options.format:
        reading = {"strip": options.strip} if options.strip else {}
        if options.granularity:
            reading["granularity"] = options.granularity
        return load_documents(source, split, **reading)
    fmt = options.format or guess_document_format(source)
    encoding = options.encoding or "utf-8"
    if fmt in ("folders", "tar"):
        return list(read_folders(source, encoding=encoding, strip=options.strip))
    if fmt == "tsv":
        return list(read_tsv(source, delimiter="," if source.endswith(".csv") else "\t", encoding=encoding))
    if fmt == "svmlight":
        return list(read_svmlight(source))
    return list(read_fasttext(source, encoding=encoding))


def guess_document_format(source: str) -> str:
    """The document format a path's name suggests: folders (a folder or archive), tsv, svmlight or fasttext."""
    name = source.removesuffix(".gz")
    if Path(source).is_dir() or name.endswith((".tar", ".tgz", ".zip")) or source.endswith(".tar.gz"):
        return "folders"
    if name.endswith((".tsv", ".csv")):
        return "tsv"
    return "svmlight" if name.endswith((".svm", ".svmlight")) else "fasttext"


def hold_out(items: list, fraction: float, seed: int) -> tuple[list, list]:
    """Split ``items`` into (rest, held out) at random (seeded): ``fraction`` of them, at least one, held out."""
    order = np.random.default_rng(seed).permutation(len(items))
    cut = len(items) - max(1, round(fraction * len(items)))
    return [items[k] for k in order[:cut]], [items[k] for k in order[cut:]]
