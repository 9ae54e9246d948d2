"""A tag dictionary: the labels each word may take, to restrict decoding to them.

With hundreds of labels (the Brown corpus's full tag set has ~470), Viterbi's ``O(T·L²)`` recursion is
slow, while most words are seen in training with one to three tags.  A :class:`TagDictionary` maps every
word seen at least ``min_count`` times in training to the set of label ids seen with it; every other
word (unknown, or rarer) may take any label.  Its :meth:`TagDictionary.mask` is the ``allowed`` field of
:class:`~structlin.joint.Scores`, with which every decoder decodes over the outputs whose labels are all
candidates, Viterbi in ``O(Σ_t K_{t−1}·K_t)`` (``K_t`` candidates at ``t``) instead of ``O(T·L²)``
(:class:`~structlin.decoders.Viterbi`, which falls back to its dense recursion when that is faster).

The dictionary is three plain arrays (:meth:`TagDictionary.to_arrays`), to be stored in a model file:
the sorted 64-bit codes of its words and, as compressed sparse rows, their label ids.  A word's code is
``H(word)`` (:meth:`structlin.hashing.FeatureHasher.string`, seed 0, whatever the model's feature hash),
so the dictionary keeps no strings; two words whose codes collide (odds about ``n²/2⁶⁵`` for ``n``
words) share the union of their labels, which only widens a search.

A tagger with ``tag_dictionary = k`` builds one from its training words (:meth:`from_codes`, or
:meth:`from_parts` shard by shard for a corpus on disk), restricts every decoding with it, in training and
prediction, and keeps it in its model file (:meth:`to_arrays`, :attr:`array_specs`, :meth:`from_arrays`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .hashing import FeatureHasher
from .matrix import ranges
from .modelfile import ArraySpec


class TagDictionary:
    """``word → sorted label ids``: row ``i`` of the CSR ``indptr``/``labels`` holds the ids of the word
    whose code is ``codes[i]`` (``codes`` increasing); a word without a row may take any of ``n_labels``.

    A word's code is its 64-bit ``FeatureHasher.strings`` code: :meth:`build` and :meth:`rows` hash with
    seed 0; a tagger hashes with its own feature hash and uses :meth:`from_codes` and :meth:`rows_of_codes`."""

    #: What :meth:`to_arrays`' arrays must be in a model file (``labels`` is the model's number of labels).
    array_specs = {
        "tagdict_codes": ArraySpec("u", ("tagdict_words",), increasing=True),
        "tagdict_indptr": ArraySpec("iu", ("tagdict_words+1",)),
        "tagdict_labels": ArraySpec("iu", ("tagdict_entries",), below="labels"),
    }

    def __init__(self, codes: np.ndarray, indptr: np.ndarray, labels: np.ndarray, n_labels: int):
        """The dictionary of checked arrays; use :meth:`build` or :meth:`from_arrays`."""
        self.codes, self.indptr, self.labels, self.n_labels = codes, indptr, labels, n_labels
        self._hasher = FeatureHasher()

    @classmethod
    def build(cls, words: Sequence[str], labels, n_labels: int, *, min_count: int = 1) -> TagDictionary:
        """The dictionary of training ``words`` (all tokens, concatenated) and their gold label ids
        ``labels`` (in ``[0, n_labels)``): each word seen at least ``min_count`` times gets the labels
        seen with it; rarer words get none, so they may take any label, as unknown words do."""
        return cls.from_codes(FeatureHasher().strings(list(words)), labels, n_labels, min_count=min_count)

    @classmethod
    def from_codes(cls, word_codes: np.ndarray, labels, n_labels: int, *, min_count: int = 1) -> TagDictionary:
        """:meth:`build` from the words' 64-bit codes (``FeatureHasher.strings``, as a tagger's feature matrix
        keeps them in ``words``)."""
        word_codes, labels = np.asarray(word_codes, dtype=np.uint64), np.asarray(labels)
        if labels.shape != word_codes.shape or (len(labels) and labels.dtype.kind not in "iu"):
            raise ValueError(f"expected one integer label id per word ({len(word_codes)}), "
                             f"got {labels.dtype} {labels.shape}")
        if type(n_labels) is not int or n_labels < 1:
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}")
        if len(labels) and not (labels.min() >= 0 and labels.max() < n_labels):
            raise ValueError(f"label ids must be in [0, {n_labels})")
        if type(min_count) is not int or min_count < 1:
            raise ValueError(f"min_count must be a positive integer, got {min_count!r}")
        return cls.from_parts([(word_codes, labels)], n_labels, min_count=min_count)

    @classmethod
    def from_parts(cls, parts, n_labels: int, *, min_count: int = 1) -> TagDictionary:
        """:meth:`from_codes` of the concatenation of ``parts`` (``(word codes, label ids)`` pairs of arrays, e.g.
        the shards of a corpus on disk), counted part by part: memory grows with the distinct (word, label)
        pairs, not with the tokens."""
        pairs, counts = [np.zeros((0, 2), dtype=np.uint64)], [np.zeros(0, dtype=np.int64)]
        for word_codes, labels in parts:
            stacked = np.stack([np.asarray(word_codes, dtype=np.uint64), np.asarray(labels).astype(np.uint64)], axis=1)
            distinct, n = np.unique(stacked, axis=0, return_counts=True)
            pairs.append(distinct)
            counts.append(n)
        pairs, inverse = np.unique(np.concatenate(pairs), axis=0, return_inverse=True)  # by (word, label)
        pair_counts = np.bincount(inverse.ravel(), weights=np.concatenate(counts), minlength=len(pairs))
        codes, pair_word = np.unique(pairs[:, 0], return_inverse=True)
        word_counts = np.bincount(pair_word, weights=pair_counts, minlength=len(codes))
        kept = word_counts[pair_word] >= min_count
        frequent = word_counts >= min_count
        # Rows of the kept words, renumbered 0 … in code order.
        row = np.cumsum(frequent) - 1
        sizes = np.bincount(row[pair_word[kept]], minlength=int(frequent.sum()))
        indptr = np.concatenate([[0], np.cumsum(sizes)])
        return cls(codes[frequent], indptr, pairs[kept, 1].astype(np.int64), n_labels)

    @property
    def n_words(self) -> int:
        return len(self.codes)

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """The row of every word (the positions of a batch, concatenated), −1 for a word without one
        (unknown, or rarer than ``min_count``): what :meth:`candidates` and :meth:`mask` read.  A model can
        look its tokens up once and keep their rows beside its features."""
        return self.rows_of_codes(self._hasher.strings(words))

    def rows_of_codes(self, codes: np.ndarray) -> np.ndarray:
        """:meth:`rows` from the words' 64-bit codes."""
        codes = np.asarray(codes, dtype=np.uint64)
        row = np.searchsorted(self.codes, codes)
        found = row < len(self.codes)
        found[found] = self.codes[row[found]] == codes[found]
        return np.where(found, row, -1)

    def candidates(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The candidate label ids of the words of :meth:`rows` ``rows`` as a CSR ``(indptr, ids)``: word
        ``i``'s are ``ids[indptr[i] : indptr[i + 1]]``, increasing; all labels for a word without a row."""
        row = np.asarray(rows, dtype=np.int64)
        # Ids are read from the dictionary's labels followed by every label once, for words without a row.
        pool = np.concatenate([self.labels, np.arange(self.n_labels)])
        known = row >= 0
        first = np.where(known, self.indptr[row], len(self.labels))
        stop = np.where(known, self.indptr[row + 1], len(pool))
        return np.concatenate([[0], np.cumsum(stop - first)]), pool[ranges(first, stop)]

    def mask(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`candidates` as a ``(words, n_labels)`` bool array: the ``allowed`` of
        :class:`~structlin.joint.Scores`."""
        indptr, ids = self.candidates(rows)
        allowed = np.zeros((len(indptr) - 1, self.n_labels), dtype=bool)
        allowed[np.repeat(np.arange(len(indptr) - 1), np.diff(indptr)), ids] = True
        return allowed

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The dictionary as model-file arrays (see :attr:`array_specs`); :meth:`from_arrays` reads them."""
        return {"tagdict_codes": self.codes, "tagdict_indptr": self.indptr, "tagdict_labels": self.labels}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_labels: int) -> TagDictionary:
        """The dictionary of :meth:`to_arrays`' arrays, for a model of ``n_labels`` labels.  Arrays that do
        not make a dictionary raise ``ValueError`` (a model loader reports it as a
        :class:`~structlin.errors.ModelFormatError`): missing arrays, other dtypes or shapes, codes that do
        not increase strictly, row bounds that are not those of the labels, a row without labels, or ids
        that are out of range or do not increase strictly within their row."""
        missing = sorted(set(cls.array_specs) - set(arrays))
        if missing:
            raise ValueError(f"the tag dictionary lacks the arrays {missing}")
        codes, indptr, labels = (np.asarray(arrays[name]) for name in cls.array_specs)
        if type(n_labels) is not int or n_labels < 1:
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}")
        if codes.ndim != 1 or codes.dtype != np.uint64:
            raise ValueError(f"tag dictionary codes must be one-dimensional uint64, got {codes.dtype} {codes.shape}")
        for name, array in (("indptr", indptr), ("labels", labels)):
            if array.ndim != 1 or array.dtype.kind not in "iu" or array.dtype.itemsize > 8:
                raise ValueError(f"tag dictionary {name} must be one-dimensional integers, "
                                 f"got {array.dtype} {array.shape}")
        if (codes[1:] <= codes[:-1]).any():  # compared, not subtracted: uint64 differences wrap around
            raise ValueError("tag dictionary codes do not increase strictly")
        if len(indptr) != len(codes) + 1 or indptr[0] != 0 or indptr[-1] != len(labels):
            raise ValueError(f"tag dictionary indptr must have {len(codes) + 1} bounds from 0 to {len(labels)}")
        if (np.diff(indptr) <= 0).any():
            raise ValueError("tag dictionary indptr must increase strictly (every word has a label)")
        if len(labels) and (labels.min() < 0 or labels.max() >= n_labels):
            raise ValueError(f"tag dictionary label ids must be in [0, {n_labels})")
        indptr, labels = indptr.astype(np.int64), labels.astype(np.int64)
        within_row = np.ones(len(labels), dtype=bool)
        within_row[indptr[:-1]] = False  # the first id of a row follows nothing of its row
        if (labels[1:] <= labels[:-1])[within_row[1:]].any():
            raise ValueError("tag dictionary label ids must increase strictly within every word")
        return cls(codes, indptr, labels, n_labels)
