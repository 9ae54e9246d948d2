"""Hierarchical word clusters from unlabeled text: features for taggers that generalise over rare words.

Brown clustering gives each word a bit string, its path in a binary hierarchy of clusters, and a prefix of
a path is a coarser cluster; tagger features use prefixes of a few lengths (4, 6, 10, 20 bits in Owoputi et
al. 2013), so that a word rare in the labelled data shares features with the frequent words it resembles.
Brown's agglomerative algorithm takes hours on a large corpus; :func:`build_clusters` makes such paths in
seconds with a spectral method instead:

1. the words seen at least ``min_count`` times form the vocabulary; each gets the counts of its left and of
   its right neighbours among the ``contexts`` most frequent words, the sentence boundary and "any other
   word" (one column per side), a sparse ``|V| × 2·(contexts + 2)`` count matrix;
2. the counts become positive PMI with context-distribution smoothing (Levy et al. 2015), each side with
   its own context distribution: ``PPMI(w, c) = max(0, log(P(w,c) / (P(w) P_α(c))))``,
   ``P_α(c) = #c^α / Σ_c' #c'^α`` with ``α = 0.75``;
3. a truncated SVD gives ``dimensions`` coordinates per word (the rows of ``U·S``), scaled to unit length;
4. bisecting spherical 2-means splits every cluster of two words or more, level by level (all the
   clusters of a level at once), until paths are ``depth`` bits long.  Each word weighs its count, in the
   k-means++ seeding and in the centroids, so that frequent words shape the splits (Brown's objective is
   a likelihood over tokens, not word types); each split is the best of a few seedings, and the child of
   larger total count gets bit 0.  Words whose rows cannot be told apart are halved in vocabulary order,
   so that no two words share a path unless ``depth`` bits are too few.

On the Brown corpus (1.16 M tokens, 27,805 words seen twice or more) this takes a few seconds.  Weighting
by counts, ``U·S`` rather than ``U·√S`` and the best of 4 seedings each made purer clusters: the majority
universal POS tag of an 8-bit cluster is that of 88–89% of its tokens (seeds 0–2), against 70–79% with
unweighted 2-means of ``U·√S``, one seeding per split.

:class:`WordClusters` holds the paths, however made, and reads and writes the ``paths`` file of Percy
Liang's ``wcluster`` (brown-cluster): lines ``BITS<TAB>WORD<TAB>COUNT``, the count optional.  Clusters of
lowercased text are looked up lowercased; a file records this in a first line ``# structlin clusters:
lowercase``, which is not part of wcluster's format (wcluster files never start with ``#``).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

import numpy as np
import scipy.sparse
import scipy.sparse.linalg
from tqdm import tqdm

from .errors import CorpusFormatError, ModelFormatError, OptionValueError
from .outputs import atomic_output
from .readers import Source, open_text, source_name

#: The first line of a paths file whose clusters are looked up lowercased (structlin's own addition).
LOWERCASE_HEADER = "# structlin clusters: lowercase"
#: The exponent of the context counts in the smoothed context distribution ``P_α``.
CONTEXT_ALPHA = 0.75
_BITS = re.compile(r"[01]+")
_UNWRITABLE = re.compile(r"[\t\n\r\0]")  # what a word of a paths file cannot hold
_LINE = "BITS<TAB>WORD<TAB>COUNT, COUNT optional"
_LLOYD_ITERATIONS = 10
_RESTARTS = 4  # k-means++ seedings of each split, the best kept
_DENSE_CELLS = 1 << 20  # a matrix of up to this many cells gets a dense SVD


class WordClusters:
    """Words → bit-string paths in a binary hierarchy of clusters (a prefix of a path is a coarser cluster).

    ``counts`` (optional) are the words' frequencies in the text the clusters were made from; they are
    written to a paths file but do not take part in equality.
    """

    #: For the clusters structlin ships (:func:`bundled_clusters`): their name and the
    #: SHA-256 of their file, which a model file records in their place.
    bundled: str | None = None
    sha256: str | None = None

    def __init__(self, paths: Mapping[str, str], *, lowercase: bool = False, counts: Mapping[str, int] | None = None):
        """Clusters of ``paths`` (word → non-empty string of 0s and 1s); a word holds no tab, line break or NUL
        (a paths file could not hold it), and every count is a non-negative integer of a word with a path.
        Anything else raises :class:`~structlin.errors.OptionValueError`."""
        self.paths = dict(paths)
        self.lowercase = bool(lowercase)
        self.counts = dict(counts or {})
        for word, path in self.paths.items():
            if problem := _path_problem(word, path):
                raise OptionValueError(f"clusters: {problem}")
        for word, count in self.counts.items():
            if word not in self.paths:
                raise OptionValueError(f"clusters: a count for {word!r}, which has no path")
            if not _is_integer(count) or count < 0:
                raise OptionValueError(f"clusters: count {count!r} of {word!r} (expected a non-negative integer)")

    def __reduce__(self):
        """Bundled clusters pickle as their name and digest (read again where they are unpickled)."""
        if self.bundled:
            return bundled_clusters, (self.bundled, "a pickled model", self.sha256)
        return super().__reduce__()

    def path(self, word: str) -> str | None:
        """The word's bit string (looked up lowercased if :attr:`lowercase`), or None for an unknown word."""
        return self.paths.get(word.lower() if self.lowercase else word)

    def __len__(self) -> int:
        return len(self.paths)

    def __eq__(self, other) -> bool:
        if not isinstance(other, WordClusters):
            return NotImplemented
        return self.lowercase == other.lowercase and self.paths == other.paths

    __hash__ = None  # mutable dictionaries inside

    def __repr__(self) -> str:
        longest = max(map(len, self.paths.values()), default=0)
        return f"WordClusters({len(self)} words, paths of up to {longest} bits, lowercase={self.lowercase})"

    def _sorted_words(self) -> list[str]:
        """The words by path, then by word: the order of a paths file."""
        return sorted(self.paths, key=lambda word: (self.paths[word], word))

    @classmethod
    def read(cls, source: Source | IO) -> WordClusters:
        """Read a wcluster ``paths`` file (a path, ``.gz`` included, or an open file).

        A malformed line raises :class:`~structlin.errors.CorpusFormatError` located as ``FILE:LINE``: a
        line without two or three tab-separated fields, a path that is not 0s and 1s, an empty word, a
        count that is not a non-negative integer, a word listed twice, a blank line; an empty file too.
        """
        name = source_name(source)
        paths: dict[str, str] = {}
        counts: dict[str, int] = {}
        where: dict[str, int] = {}
        lowercase = False
        number = 0
        with open_text(source, fixed="a clusters file is UTF-8 text") as lines:
            for number, text in lines:
                if number == 1 and text == LOWERCASE_HEADER:
                    lowercase = True
                    continue
                if not text.strip():
                    raise CorpusFormatError(name, number, f"blank line (expected {_LINE})")
                fields = text.split("\t")
                if len(fields) not in (2, 3):
                    raise CorpusFormatError(name, number, f"{len(fields)} tab-separated field(s) (expected {_LINE})")
                bits, word = fields[:2]
                if not _BITS.fullmatch(bits):
                    raise CorpusFormatError(name, number, f"path {bits!r} (expected a path of 0s and 1s, then a tab)")
                if not word:
                    raise CorpusFormatError(name, number, "empty word (expected a word after the path)")
                if word in where:
                    raise CorpusFormatError(name, number, f"word {word!r} listed twice, on lines {where[word]} and "
                                            f"{number} (expected each word once)")
                if len(fields) == 3:
                    count = fields[2]
                    if not (count.isascii() and count.isdigit()):
                        raise CorpusFormatError(name, number, f"count {count!r} (expected a non-negative integer "
                                                "after the word, or nothing)")
                    counts[word] = int(count)
                paths[word], where[word] = bits, number
        if not paths:
            problem = "empty file" if number == 0 else "no clusters after the header line"
            raise CorpusFormatError(name, number + 1, f"{problem} (expected lines {_LINE})")
        return cls(paths, lowercase=lowercase, counts=counts)

    def write(self, path: Source) -> None:
        """Write a wcluster ``paths`` file, lines sorted by path then word, atomically (see :meth:`read`); a name
        ending in ``.gz`` is gzipped (without a time stamp: the same clusters, the same bytes)."""
        lines = [LOWERCASE_HEADER + "\n"] if self.lowercase else []
        for word in self._sorted_words():
            count = self.counts.get(word)
            lines.append(f"{self.paths[word]}\t{word}" + ("\n" if count is None else f"\t{count}\n"))
        data = "".join(lines).encode("utf-8")
        with atomic_output(path, "wb") as out:
            out.write(gzip.compress(data, mtime=0) if str(path).endswith(".gz") else data)

    def to_dict(self) -> dict:
        """The clusters as JSON-able data (without counts), for a model file's metadata: :meth:`from_dict`."""
        words = self._sorted_words()
        return {"lowercase": self.lowercase, "words": words, "paths": [self.paths[word] for word in words]}

    @classmethod
    def from_dict(cls, data, source: str) -> WordClusters:
        """The clusters of :meth:`to_dict`'s data, checked: anything else raises
        :class:`~structlin.errors.ModelFormatError` beginning with ``source``."""
        keys = {"lowercase", "words", "paths"}
        if not isinstance(data, Mapping) or set(data) != keys:
            found = sorted(map(str, data)) if isinstance(data, Mapping) else type(data).__name__
            raise ModelFormatError(f"{source}: clusters must be a mapping of {', '.join(sorted(keys))}, got {found}")
        lowercase, words, paths = data["lowercase"], data["words"], data["paths"]
        if not isinstance(lowercase, bool):
            raise ModelFormatError(f"{source}: clusters' lowercase must be true or false, got {lowercase!r}")
        if not (isinstance(words, list) and isinstance(paths, list) and len(words) == len(paths)):
            raise ModelFormatError(f"{source}: clusters' words and paths must be two lists of the same length")
        for word, path in zip(words, paths):
            if problem := _path_problem(word, path):
                raise ModelFormatError(f"{source}: clusters: {problem}")
        if len(set(words)) != len(words):
            twice = next(word for word, count in Counter(words).items() if count > 1)
            raise ModelFormatError(f"{source}: clusters: word {twice!r} listed twice")
        return cls(dict(zip(words, paths)), lowercase=lowercase)


#: The word clusters structlin ships (``features/NAME.clusters.gz``), by name; how each was made:
#: docs/benchmarks.md, "Word clusters from unlabeled text".
BUNDLED_CLUSTERS = ("en",)


def bundled_clusters(name: str, where: str, sha256: str | None = None) -> WordClusters:
    """The bundled word clusters ``name`` (read once per process), with :attr:`~WordClusters.bundled` and
    :attr:`~WordClusters.sha256` set; ``sha256``, if given, must be their file's (a model trained with them)."""
    if name not in BUNDLED_CLUSTERS:
        raise OptionValueError(f"{where}: no bundled clusters {name!r}; bundled: {', '.join(BUNDLED_CLUSTERS)}")
    clusters = _read_bundled(name)
    if sha256 is not None and sha256 != clusters.sha256:
        raise ModelFormatError(f"{where}: the bundled clusters {name!r} of this structlin differ from the ones the "
                               f"model was trained with (SHA-256 {sha256})")
    return clusters


@functools.lru_cache(maxsize=None)
def _read_bundled(name: str) -> WordClusters:
    resource = importlib.resources.files("structlin.features") / f"{name}.clusters.gz"
    with importlib.resources.as_file(resource) as path:
        clusters = WordClusters.read(path)
        clusters.bundled, clusters.sha256 = name, hashlib.sha256(path.read_bytes()).hexdigest()
    return clusters


def _path_problem(word, path) -> str | None:
    """What is wrong with ``word`` and its ``path``, or None."""
    if not isinstance(word, str) or not word or _UNWRITABLE.search(word):
        return f"word {word!r} (expected a non-empty string without tab, line break or NUL)"
    if not isinstance(path, str) or not _BITS.fullmatch(path):
        return f"path {path!r} of {word!r} (expected a non-empty string of 0s and 1s)"
    return None


def _is_integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def build_clusters(sentences: Iterable[Sequence[str]], *, min_count: int = 2, contexts: int = 1000,
                   dimensions: int = 50, depth: int = 16, lowercase: bool = True, seed: int = 0,
                   progress: bool = False) -> WordClusters:
    """Clusters of every word seen at least ``min_count`` times in ``sentences`` (lists of tokens).

    See the module's description for the method.  The result depends only on the text and the options:
    the same ``seed`` gives the same paths.  Fewer than two such words raise
    :class:`~structlin.errors.OptionValueError`, and so do options out of range.
    """
    for option, value, least in (("min_count", min_count, 1), ("contexts", contexts, 1),
                                 ("dimensions", dimensions, 1), ("depth", depth, 1), ("seed", seed, 0)):
        if not _is_integer(value) or value < least:
            raise OptionValueError(f"{option} must be an integer of at least {least}, got {value!r}")
    steps = ["counting words", "counting contexts", "PPMI", "SVD", *(f"level {k + 1}" for k in range(depth))]
    with tqdm(total=len(steps), desc="clusters", disable=not progress, leave=False) as bar:
        bar.set_postfix_str(steps[0])
        words, counts, tokens = _count(sentences, lowercase)
        order = _frequency_order(words, counts, min_count, contexts)
        vocabulary = order[:int(np.count_nonzero(counts >= min_count))]
        if len(vocabulary) < 2:
            raise OptionValueError(f"{len(vocabulary)} word(s) seen at least {min_count} times (min_count, "
                                   f"--min-count) among the {len(words)} distinct words (expected at least 2 to "
                                   "cluster: more text, or a lower min_count)")
        bar.update()
        bar.set_postfix_str(steps[1])
        matrix = _context_counts(tokens, len(words), vocabulary, order[:contexts])
        bar.update()
        bar.set_postfix_str(steps[2])
        matrix = _ppmi(matrix, 2)
        bar.update()
        bar.set_postfix_str(steps[3])
        rows = _embed(matrix, dimensions, seed)
        bar.update()
        frequencies = counts[vocabulary].astype(np.float64)
        bits, lengths = _bisect(rows, frequencies, depth, seed, bar)
    text = (bits + ord("0")).view(f"S{depth}").ravel()
    kept = [words[i] for i in vocabulary]
    paths = {word: code[:length].decode("ascii") for word, code, length in zip(kept, text, lengths.tolist())}
    return WordClusters(paths, lowercase=lowercase, counts=dict(zip(kept, counts[vocabulary].tolist())))


def _count(sentences: Iterable[Sequence[str]], lowercase: bool) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct words (lowercased if ``lowercase``), their counts, and the text as word ids with −1
    before, between and after the sentences."""
    ids: dict[str, int] = {}
    codes = array("q", [-1])
    for number, sentence in enumerate(sentences, 1):
        if isinstance(sentence, str):
            raise OptionValueError(f"sentence {number} is a string (expected a list of tokens)")
        codes.extend([ids.setdefault(token, len(ids)) for token in sentence])
        codes.append(-1)
    tokens = np.frombuffer(codes, dtype=np.int64)
    strange = next((token for token in ids if not isinstance(token, str)), None)
    if strange is not None:
        raise OptionValueError(f"token {strange!r} of type {type(strange).__name__} (expected strings)")
    words = list(ids)
    if lowercase:  # per distinct token, then merged
        merged: dict[str, int] = {}
        rename = np.array([merged.setdefault(word.lower(), len(merged)) for word in words] + [-1], dtype=np.int64)
        words, tokens = list(merged), rename[tokens]  # rename[-1] keeps the boundaries at −1
    counts = np.bincount(tokens[tokens >= 0], minlength=len(words))
    return words, counts, tokens


def _frequency_order(words: list[str], counts: np.ndarray, min_count: int, contexts: int) -> np.ndarray:
    """The ids of the words of the vocabulary and of the contexts (at least ``min_count`` occurrences, or
    among the ``contexts`` most frequent), by decreasing count, then by word."""
    least = min_count
    if contexts < len(counts):
        least = min(least, int(np.partition(counts, len(counts) - contexts)[len(counts) - contexts]))
    candidates = np.flatnonzero(counts >= least).tolist()
    return np.array(sorted(candidates, key=lambda i: (-counts[i], words[i])), dtype=np.int64)


def _context_counts(tokens: np.ndarray, n_words: int, vocabulary: np.ndarray,
                    context_words: np.ndarray) -> scipy.sparse.csr_matrix:
    """The ``|V| × 2·(K + 2)`` counts of each vocabulary word's left neighbours (first block) and right
    neighbours (second block): ``K`` context words, then the sentence boundary, then any other word."""
    k = len(context_words)
    row_of = np.full(n_words, -1, dtype=np.int64)
    row_of[vocabulary] = np.arange(len(vocabulary))
    column_of = np.full(n_words + 1, k + 1, dtype=np.int64)  # the last entry is the boundary's, −1
    column_of[context_words] = np.arange(k)
    column_of[-1] = k
    inner = tokens[1:-1]
    rows = row_of[np.where(inner >= 0, inner, 0)]
    at = np.flatnonzero((inner >= 0) & (rows >= 0))
    rows = rows[at]
    left, right = column_of[tokens[at]], column_of[tokens[at + 2]] + k + 2
    width = 2 * (k + 2)
    cells, values = np.unique(np.concatenate([rows * width + left, rows * width + right]), return_counts=True)
    return scipy.sparse.csr_matrix((values.astype(np.float64), np.divmod(cells, width)),
                                   shape=(len(vocabulary), width))


def _ppmi(matrix: scipy.sparse.csr_matrix, blocks: int) -> scipy.sparse.csr_matrix:
    """Positive PMI of a count matrix whose columns are ``blocks`` equal blocks, each a distribution of its
    own (left and right neighbours), with context counts raised to :data:`CONTEXT_ALPHA`."""
    coo = matrix.tocoo()
    width = matrix.shape[1] // blocks
    row_totals = np.asarray(matrix.sum(axis=1)).ravel() / blocks  # each token counts once per block
    smoothed = np.asarray(matrix.sum(axis=0)).ravel() ** CONTEXT_ALPHA
    block_totals = smoothed.reshape(blocks, width).sum(axis=1)
    p_context = smoothed / np.repeat(block_totals, width)
    values = np.log(coo.data / (row_totals[coo.row] * p_context[coo.col]))
    positive = values > 0
    return scipy.sparse.csr_matrix((values[positive], (coo.row[positive], coo.col[positive])), shape=matrix.shape)


def _embed(matrix: scipy.sparse.csr_matrix, dimensions: int, seed: int) -> np.ndarray:
    """The rows of ``U·S`` of the truncated SVD of ``matrix`` to ``dimensions``, scaled to unit length (zero
    rows stay zero).  A small matrix, or one that ``dimensions`` nearly spans, gets a dense SVD."""
    if dimensions >= min(matrix.shape) - 1 or matrix.shape[0] * matrix.shape[1] <= _DENSE_CELLS:
        u, s, _ = np.linalg.svd(matrix.toarray(), full_matrices=False)
        u, s = u[:, :dimensions], s[:dimensions]
    else:
        u, s, _ = scipy.sparse.linalg.svds(matrix, k=dimensions, random_state=np.random.default_rng(seed))
    rows = u * s
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1)


def _bisect(rows: np.ndarray, weights: np.ndarray, depth: int, seed: int, bar) -> tuple[np.ndarray, np.ndarray]:
    """Split the words (unit ``rows``) by spherical 2-means, every cluster of two words or more at each
    of ``depth`` levels; the bits of every word (``|V| × depth``, uint8) and how many of them are its path.

    Level ``k`` draws its random numbers from ``default_rng([seed, k])``, for all its clusters at once.
    """
    n = len(rows)
    bits = np.zeros((n, depth), dtype=np.uint8)
    lengths = np.zeros(n, dtype=np.int64)
    cluster = np.zeros(n, dtype=np.int64)  # per word; −1 once alone in its cluster
    for level in range(depth):
        live = np.flatnonzero(cluster >= 0)
        sizes = np.bincount(cluster[live])
        cluster[live[sizes[cluster[live]] < 2]] = -1
        members = np.flatnonzero(cluster >= 0)
        if not len(members):
            break
        # The words of each cluster together, in vocabulary order (a stable sort).
        group = np.unique(cluster[members], return_inverse=True)[1]
        order = np.argsort(group, kind="stable")
        members, group = members[order], group[order]
        side = _split(rows[members], weights[members], group, np.random.default_rng([seed, level]))
        bits[members, level] = side
        lengths[members] += 1
        cluster[members] = group * 2 + side
        bar.update()
    return bits, lengths


def _split(rows: np.ndarray, weights: np.ndarray, group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Weighted spherical 2-means in every group of two rows or more (``group``: sorted group ids 0 … m−1):
    side 0 or 1 of every row, the better of :data:`_RESTARTS` seedings by k-means++ for each group.  The
    side of larger total ``weights`` is 0; a group whose rows are all equal (or that 2-means leaves
    one-sided) is halved in row order instead."""
    m = int(group[-1]) + 1
    starts = np.searchsorted(group, np.arange(m))
    sizes = np.diff(np.append(starts, len(group)))
    side, best = np.zeros(len(rows), dtype=np.uint8), np.full(m, -np.inf)
    for _ in range(_RESTARTS):
        candidate, score = _two_means(rows, weights, group, starts, sizes, rng.random((m, 2)))
        side = np.where((score > best)[group], candidate, side)
        best = np.maximum(score, best)
    spread = np.maximum.reduceat(1.0 - np.einsum("ij,ij->i", rows, rows[starts][group]), starts)
    halve = (spread <= 1e-10) | (np.bincount(group * 2 + side, minlength=2 * m).reshape(m, 2).min(axis=1) == 0)
    position = np.arange(len(rows)) - starts[group]
    side = np.where(halve[group], position >= (sizes[group] + 1) // 2, side).astype(np.uint8)
    mass = np.bincount(group * 2 + side, weights=weights, minlength=2 * m).reshape(m, 2)
    return side ^ (mass[:, 1] > mass[:, 0])[group].astype(np.uint8)


def _two_means(rows: np.ndarray, weights: np.ndarray, group: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
               draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One run of :func:`_split`'s 2-means, seeded by ``draws`` (two uniform numbers per group): the side of
    every row, and per group the objective ``Σ weight · cos(row, centroid of its side)``.

    k-means++: the first centre is drawn with probability proportional to a row's weight, the second to its
    weight times its distance to the first; then at most :data:`_LLOYD_ITERATIONS` rounds of Lloyd's
    algorithm (a centroid is the direction of its side's weighted sum).
    """
    m = len(starts)
    first = _draw(weights, starts, sizes, draws[:, 0])
    distance = np.maximum(0.0, 1.0 - np.einsum("ij,ij->i", rows, rows[first][group]))
    second = _draw(weights * distance, starts, sizes, draws[:, 1])
    centres = np.stack([rows[first], rows[second]], axis=1)
    side = None
    for _ in range(_LLOYD_ITERATIONS):
        new = (np.einsum("ij,ij->i", rows, (centres[:, 1] - centres[:, 0])[group]) > 0).astype(np.uint8)
        if side is not None and np.array_equal(new, side):
            break
        side = new
        cells = scipy.sparse.csr_matrix((weights, (group * 2 + side, np.arange(len(rows)))), shape=(2 * m, len(rows)))
        sums = (cells @ rows).reshape(m, 2, -1)
        norms = np.linalg.norm(sums, axis=2, keepdims=True)
        centres = sums / np.where(norms > 0, norms, 1)
    return side, norms.reshape(m, 2).sum(axis=1)


def _draw(mass: np.ndarray, starts: np.ndarray, sizes: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """One index in each segment ``[start, start + size)`` with probability proportional to ``mass`` (≥ 0),
    chosen by ``draws`` (uniform in [0, 1)); the first index of a segment without mass."""
    cumulative = np.concatenate([[0.0], np.cumsum(mass)])
    before, total = cumulative[starts], cumulative[starts + sizes] - cumulative[starts]
    chosen = np.searchsorted(cumulative, before + draws * total, side="right") - 1
    return np.clip(chosen, starts, starts + sizes - 1)
