"""Readers of labelled documents for classifiers: folder trees and archives, TSV and CSV, JSON Lines, fastText,
SVMlight, and the NLTK corpora movie_reviews (or any categorized corpus), qc, ppattach and names.

Every reader is a generator of :class:`Document` objects and streams: a folder tree or an archive is
read one file (member) at a time and never unpacked to disk, a line file one line at a time.
Invalid options raise :class:`~structlin.errors.OptionValueError` (a ``ValueError``) at once; file
errors come with the first document asked for. Malformed input raises
:class:`~structlin.errors.CorpusFormatError` located as ``PATH:LINE`` (lines counted from 1) or
``ARCHIVE:MEMBER[:LINE]``, saying what was found and what was expected; a missing path raises
:class:`~structlin.errors.CorpusNotFoundError`. Nothing is skipped silently except blank lines of
line formats (and ``#`` comment lines of SVMlight), which hold no document: undecodable bytes, NUL
characters (binary files), symbolic links in folder trees and archive members outside the archive's
tree are errors.

The readers are split by concept: :mod:`~structlin.documents.base` holds the :class:`Document` type
(the decoding is :mod:`structlin.readers`'s, shared by every reader), :mod:`~structlin.documents.formats`
the generic formats (folder trees and archives, TSV/CSV, fastText, SVMlight),
:mod:`~structlin.documents.nltk_corpora` the NLTK corpora, and :mod:`~structlin.documents.usenet` the
stripping of Usenet posts. Every public name is re-exported here, so ``from structlin.documents import
X`` is the import to use.
"""

from structlin.documents.base import Document
from structlin.documents.formats import (
    ARCHIVE_SUFFIXES,
    LABEL_NAMES,
    TEXT_NAMES,
    JsonDocuments,
    TableDocuments,
    folder_files,
    read_csv,
    read_fasttext,
    read_jsonl,
    read_folders,
    read_svmlight,
    read_tsv,
    svmlight_line,
)
from structlin.documents.nltk_corpora import read_names, read_nltk_categorized, read_ppattach, read_qc
from structlin.documents.usenet import STRIP_PARTS, strip_usenet

__all__ = [
    "ARCHIVE_SUFFIXES", "LABEL_NAMES", "STRIP_PARTS", "TEXT_NAMES", "Document", "JsonDocuments", "TableDocuments",
    "folder_files", "read_csv", "read_fasttext", "read_folders", "read_jsonl", "read_names", "read_nltk_categorized",
    "read_ppattach", "read_qc", "read_svmlight", "read_tsv", "strip_usenet", "svmlight_line",
]
