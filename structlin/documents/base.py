"""The shared ground of the document readers: the :class:`Document` type every reader yields. Files
and archive members are decoded, and damaged archives reported, by the functions of
:mod:`structlin.readers` that every reader of the library goes through (:func:`~structlin.readers.open_text`,
:func:`~structlin.readers.numbered_lines`, :func:`~structlin.readers.decode`,
:func:`~structlin.readers.damaged`), so that the generic formats (:mod:`structlin.documents.formats`) and
the NLTK corpus readers (:mod:`structlin.documents.nltk_corpora`) refuse bad bytes the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

Source = str | os.PathLike
NumberedLines = Iterator[tuple[int, str]]


@dataclass
class Document:
    """One labelled instance for a classifier."""

    text: str | tuple[str, ...] | dict[int, float]  # raw text; a tuple of fields (ppattach); features (svmlight)
    label: str | None
    source: str | None = None  # file path, or "ARCHIVE:MEMBER"
    line: int | None = None  # 1-based line in the source, where meaningful

