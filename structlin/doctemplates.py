"""Document features: templates over a whole document, and the weighting of its feature vector.

A document is a text, a tuple of fields (e.g. a PP-attachment tuple ``(verb, noun1, prep, noun2)``)
or a ``{index: value}`` mapping of numeric features (SVMlight).  A feature set for documents lists
document templates, and may also list token templates, which then see the whole text as one word
(``suffix`` of a first name).  Built-in document templates:

* ``words(n, lowercase, pattern, stopwords, truncate, suffix)`` — word n-grams for each order in ``n``;
  tokens are matched by the regular expression ``pattern`` (by default :data:`WORD_PATTERN`: every CJK
  ideograph or hiragana, else a run of two or more word characters in Unicode's sense, marks included, in the
  text's NFC form; a feature set's ``token_pattern`` for all its templates; no downloaded model needed);
  ``truncate = k`` keeps each token's first k characters (after stop words are dropped; a token of one character
  has none): a crude stem, free of any language's rules, that ties drive / drives / driver together;
  ``suffix = k`` keeps its last k characters instead (a name's or an inflection's ending);
* ``header_words(headers, n, lowercase, pattern, stopwords)`` — word n-grams of the named header lines
  of an e-mail or Usenet post (``Subject: ...`` in the block before the first blank line; folded
  continuation lines included), apart from the body's words: a subject's words say more than the
  same words anywhere in the text;
* ``word_clusters(prefixes, lowercase, pattern)`` — the words' clusters in the feature set's word clusters
  (``clusters = ...``, :mod:`structlin.clusters`), each as the prefixes of its path: a bag of clusters;
* ``chars(n, lowercase, within_words)`` — character n-grams, inside each word padded with spaces
  (``within_words = true``) or across the whole text;
* ``fields`` — one feature per field of a tuple; ``field_pairs`` / ``field_triples`` — conjunctions;
  ``field_conjunctions(sizes)`` — conjunctions of every size in ``sizes`` (4 = a whole PP tuple); each
  optionally on lowercased, digit-normalised or Porter-stemmed values;
* ``featureset(categorical)`` — a feature dict (numbers as values, other values as ``name=value``; with
  ``categorical``, every value as ``name=value``, as NLTK's classifiers read featuresets);
  SVMlight's ``{index: value}`` features pass through as given;
* the token template ``bias`` — one constant feature in every document of any kind (text, tuple or
  feature dict): a per-label constant, e.g. naive Bayes's ``log P(y)``.

Word and character n-grams are hashed without building their strings: the code of an n-gram mixes
``H(key@n)`` with the codes of its tokens (or characters) in turn (:meth:`FeatureHasher.mix`), for
all documents at once.  A token's code is the polynomial hash of its code points
(:meth:`FeatureHasher.sequences`); with the default pattern the tokens themselves are found on the
code points of all documents at once, not by the regular expression.  The counts ``c`` of a document's hashed buckets then become values by the
feature set's ``values``: ``binary`` (1), ``count`` (c), ``log`` (log(1 + c)), ``tfidf``
(c · idf, ``idf = log((1 + n) / (1 + df)) + 1`` from the training documents) or ``log-tfidf``
(log(1 + c) · idf, "sublinear tf"); signs from the hash are kept.  ``normalize = "l2"`` scales every document vector to unit length.
A ``[random_fourier]`` table then replaces each vector by its random Fourier features
(:mod:`structlin.fourier`), whose dot products approximate an RBF kernel.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import sys
import unicodedata
from collections.abc import Mapping

import numpy as np
import scipy.sparse
from nltk.stem.porter import PorterStemmer

from .errors import StructlinError
from .hashing import FeatureHasher
from .matrix import FeatureMatrix
from .modelfile import deflated, inflated
from .templates import (LENGTHS, MAX_LENGTH, TOKEN_PATTERN, FeatureSet, NamedFeature, Param, feature_name,
                        feature_values, hash_results, register_template, template, template_names)

#: The characters that are words on their own, as Unicode's word boundaries (UAX #29) fall around each: the ideographs
#: of the CJK scripts (Unicode's CJK Unified Ideographs with extension A, the compatibility ideographs, and the
#: supplementary planes' extensions B-H with the compatibility supplement) and hiragana.  Katakana and Hangul stay in
#: runs, as there (and in Lucene's StandardTokenizer, which follows it).
CHARACTER_WORDS = ((0x3040, 0x309F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x323AF))


def _mark_ranges() -> tuple[tuple[int, int], ...]:
    """The ranges of :data:`WORD_MARKS`, from the planes that hold marks (the basic and supplementary multilingual
    planes and the special-purpose one) in the Unicode database of this Python."""
    ranges: list[list[int]] = []
    for code in itertools.chain(range(0x20000), range(0xE0000, 0xE1000)):
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me", "Pc") and code != 0x5F or code in (0x200C, 0x200D):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return tuple((low, high) for low, high in ranges)


#: The characters of Unicode's word characters (UTS #18, Annex C) beside Python's ``\\w`` (letters, digits, ``_``):
#: combining marks (the vowel signs of Devanagari, Bengali, Tamil, Thai ..., accents written apart), connector
#: punctuation, and the zero-width joiner and non-joiner.  Without them a Hindi word falls apart at its vowel signs.
WORD_MARKS = _mark_ranges()


def _class_of(ranges) -> str:
    """The ranges of code points as the inside of a regular expression's character class."""
    return "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in ranges)


#: The default token pattern: each of :data:`CHARACTER_WORDS` a token, else the maximal runs of two or more word
#: characters in Unicode's sense (Python's ``\\w`` and :data:`WORD_MARKS`).  Chinese and Japanese are written without
#: spaces between words, so a run of ideographs or hiragana is a clause, not a word; its characters as tokens make
#: word n-grams character n-grams, the usual features of such text (multilingual BERT's tokenizer splits ideographs
#: so too).  Text of neither gets scikit-learn's tokens.
WORD_PATTERN = (rf"(?u)(?=\w)[{_class_of(CHARACTER_WORDS)}]"
                rf"|(?:(?![{_class_of(CHARACTER_WORDS)}])[\w{_class_of(WORD_MARKS)}]){{2,}}")
#: scikit-learn's default token pattern, the maximal runs of two or more of Python's word characters (``\\w``),
#: ideographs included: the default of model files of format 2 and before (:func:`pinned_word_pattern`).
RUN_PATTERN = r"(?u)\b\w\w+\b"


#: The parameters of the word templates.
_WORD_PARAMS = {"n": LENGTHS, "pattern": TOKEN_PATTERN, "stopwords": Param(str, many=True, empty=True)}
_CHARACTERS = Param(int, low=1, high=MAX_LENGTH, what=f"a positive number of characters, at most {MAX_LENGTH}")


def _text(document) -> str:
    if not isinstance(document, str):
        raise _wrong_kind(document, "texts (the words, chars and header_words templates)")
    return document


def _wrong_kind(document, reads: str) -> StructlinError:
    """The error of a ``document`` that a feature set's template cannot read: what it reads, what it got, and the
    feature sets made for each kind of document."""
    got = ("a feature dict (an SVMlight line or an NLTK featureset)" if isinstance(document, Mapping)
           else "a tuple of fields" if isinstance(document, tuple) else "a text" if isinstance(document, str)
           else f"of type {type(document).__name__}")
    return StructlinError(f"the feature set reads {reads}, but a document is {got}: choose the features for its kind "
                          "(text-ngrams for texts, fields for tuples of fields, numeric for SVMlight, nltk for "
                          "featuresets), or leave them out to get those")


@register_template("words", document=True, params={**_WORD_PARAMS, "truncate": _CHARACTERS, "suffix": _CHARACTERS})
def _words(document, n=(1,), lowercase=True, pattern=WORD_PATTERN, stopwords=(), truncate=None, suffix=None):
    """Word n-grams, joined by spaces (for reading; the extractor hashes them natively)."""
    tokens = _tokens(_text(document), lowercase, pattern, frozenset(stopwords))
    if truncate is not None or suffix is not None:  # a character alone has no stem or ending but itself
        tokens = [t for t in tokens if len(t) > 1]
    if truncate is not None:
        tokens = [t[:truncate] for t in tokens]
    if suffix is not None:
        tokens = [t[-suffix:] for t in tokens]
    return [" ".join(tokens[i : i + k]) for k in n for i in range(len(tokens) - k + 1)]


@register_template("word_clusters", document=True, needs=("clusters",),
                   params={"prefixes": LENGTHS, "pattern": _WORD_PARAMS["pattern"]})
def _word_clusters(document, clusters, prefixes=(4, 6, 10), lowercase=True, pattern=WORD_PATTERN):
    """The clusters of the text's words in the feature set's word clusters, each at every granularity (the first
    n bits of its path for n in ``prefixes``, as the token template ``cluster`` gives them): a bag of clusters,
    which ties a word rare in the labelled documents to the frequent words it resembles."""
    values = []
    for token in _tokens(_text(document), lowercase, pattern, frozenset()):
        path = clusters.path(token)
        if path is not None:
            values.extend(dict.fromkeys(path[:k] for k in prefixes))
    return values


@register_template("header_words", document=True, params=_WORD_PARAMS)
def _header_words(document, headers=("subject",), n=(1,), lowercase=True, pattern=WORD_PATTERN, stopwords=()):
    """Word n-grams of the named header lines (for reading; the extractor hashes them natively)."""
    return _words(_header_text(document, headers), n, lowercase, pattern, stopwords)


def _header_text(document, headers) -> str:
    """The values of the header lines named in ``headers`` (any case), joined by newlines.  The header
    block is the text up to the first blank line when every line of it is ``Name: value`` or a
    continuation (a line starting with a space or tab, RFC 5322 folding); a text without such a block
    (a line of it neither) has no headers."""
    wanted, values, current = {h.lower() for h in headers}, [], None
    for line in _text(document).split("\n\n", 1)[0].split("\n"):
        if not line.strip():
            break
        if line[0] in " \t":  # a folded line, or a stray one before the first header (skipped)
            if current in wanted:
                values.append(line)
            continue
        match = _HEADER_LINE.match(line)
        if match is None:
            return ""
        current = match.group(1).lower()
        if current in wanted:
            values.append(match.group(2))
    return "\n".join(values)


_HEADER_LINE = re.compile(r"([!-9;-~]+):(.*)")  # a field name: printable ASCII but the colon (RFC 5322)


@register_template("chars", document=True, params={"n": LENGTHS})
def _chars(document, n=(3, 4, 5), lowercase=True, within_words=True):
    """Character n-grams (for reading; the extractor hashes them natively)."""
    text = _text(document).lower() if lowercase else _text(document)
    pieces = [f" {w} " for w in text.split()] if within_words else [text]
    return [p[i : i + k] for p in pieces for k in n for i in range(len(p) - k + 1)]


def _fields(document) -> tuple:
    if not isinstance(document, tuple):
        raise _wrong_kind(document, "tuples of fields (the fields templates)")
    return document


_stem = functools.lru_cache(maxsize=1 << 16)(PorterStemmer().stem)


def _conjunctions(document, sizes, lowercase: bool, digits: bool, stem: bool) -> list[str]:
    """``i,j=f_i|f_j`` for every combination of ``size`` fields, for each size in ``sizes``.  Field
    values may first be lowercased, have every digit mapped to ``0`` (``digits``) and be reduced to
    their Porter stem (``stem``; no downloaded model needed)."""
    f = [v.lower() if lowercase else v for v in _fields(document)]
    if digits:
        f = [_DIGIT.sub("0", v) for v in f]
    if stem:
        f = [_stem(v) for v in f]
    return [",".join(map(str, c)) + "=" + "|".join(f[i] for i in c)
            for size in sizes for c in itertools.combinations(range(len(f)), size)]


_DIGIT = re.compile(r"\d")


@register_template("fields", document=True)
def _field_values(document, lowercase=False, digits=False, stem=False):
    return _conjunctions(document, (1,), lowercase, digits, stem)


@register_template("field_pairs", document=True)
def _field_pairs(document, lowercase=False, digits=False, stem=False):
    return _conjunctions(document, (2,), lowercase, digits, stem)


@register_template("field_triples", document=True)
def _field_triples(document, lowercase=False, digits=False, stem=False):
    return _conjunctions(document, (3,), lowercase, digits, stem)


@register_template("field_conjunctions", document=True, params={"sizes": LENGTHS})
def _field_conjunctions(document, sizes=(1, 2, 3), lowercase=False, digits=False, stem=False):
    return _conjunctions(document, sizes, lowercase, digits, stem)


@register_template("featureset", document=True)
def _featureset(document, categorical=False):
    """A feature dict: a number is the value of feature ``name``; any other value ``v`` is the binary feature
    ``name=v``.  SVMlight's ``{index: value}`` features are used as given.  With ``categorical``, every value is
    a category, numbers too (``length=5`` and ``length=6`` are two features), as NLTK's classifiers read their
    featuresets."""
    if not isinstance(document, Mapping):
        raise _wrong_kind(document, "feature dicts (the featureset template)")
    return {(str(k) if _is_number(v) and not categorical else f"{k}={v}"):
            (float(v) if _is_number(v) and not categorical else 1.0) for k, v in document.items()}


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def _tokens(text: str, lowercase: bool, pattern: str, stopwords: frozenset) -> list[str]:
    tokens = re.findall(pattern, _read_as(text, lowercase, pattern))
    return [t for t in tokens if t not in stopwords] if stopwords else tokens


def _read_as(text: str, lowercase: bool, pattern: str) -> str:
    """The text a word pattern reads: lower-cased if asked, and for :data:`WORD_PATTERN` in Unicode's canonical
    composed form (NFC), so that a letter written with a combining accent (as some keyboards and systems write
    Vietnamese, or Korean syllables as their letters) is the same token as the letter written whole."""
    text = text.lower() if lowercase else text
    return unicodedata.normalize("NFC", text) if pattern == WORD_PATTERN else text


def _code_points(strings: list[str], separator: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The code points of ``separator.join(strings)`` (uint32) and where each string starts and how
    long it is."""
    points = np.frombuffer(separator.join(strings).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    starts = np.cumsum(lengths + len(separator)) - lengths - len(separator)
    return points, starts, lengths


def _pattern_matches(texts: list[str], pattern: str):
    """Code points, start, length and text index of every match of ``pattern`` in ``texts``."""
    matches = [re.findall(pattern, t) for t in texts]
    points, starts, lengths = _code_points([m for found in matches for m in found])
    owner = np.repeat(np.arange(len(texts)), [len(found) for found in matches])
    return points, starts, lengths, owner


def _word_runs(texts: list[str], *, unicode_words: bool = True):
    """What :func:`_pattern_matches` gives for :data:`WORD_PATTERN` — each ideograph or hiragana, and the maximal
    runs of two or more other word characters, :data:`WORD_MARKS` among them — or with ``unicode_words`` False for
    :data:`RUN_PATTERN` (the runs of Python's word characters, ideographs among them), found on the code points of
    all texts at once."""
    points, text_starts, _ = _code_points(texts, " ")
    kinds = _character_kinds(points)
    word = np.zeros(len(points) + 2, dtype=bool)
    word[1:-1] = kinds != 0 if unicode_words else kinds == _WORD
    single = np.zeros(0, dtype=np.int64)
    if unicode_words:
        alone = (kinds == _WORD) & _is_character_word(points)
        word[1:-1] &= ~alone
        single = np.flatnonzero(alone)
    edges = np.flatnonzero(word[1:] != word[:-1])
    starts, lengths = edges[::2], edges[1::2] - edges[::2]
    long = lengths >= 2
    starts, lengths = starts[long], lengths[long]
    if len(single):  # the tokens in text order: runs and single characters never overlap
        order = np.argsort(np.concatenate([starts, single]), kind="stable")
        starts = np.concatenate([starts, single])[order]
        lengths = np.concatenate([lengths, np.ones(len(single), dtype=lengths.dtype)])[order]
    return points, starts, lengths, np.searchsorted(text_starts, starts, side="right") - 1


def _is_character_word(points: np.ndarray) -> np.ndarray:
    """Whether each code point lies in one of the :data:`CHARACTER_WORDS` ranges."""
    found = np.zeros(len(points), dtype=bool)
    for low, high in CHARACTER_WORDS:
        found |= (points >= low) & (points <= high)
    return found


def pinned_word_pattern(features: dict) -> dict:
    """A feature set's table from a model file of format 2 or before, when the default token pattern was
    :data:`RUN_PATTERN`: that pattern as the set's ``token_pattern`` (unless it has one), so that the model reads its
    inputs as it was trained to (ideographs and hiragana in runs, words broken at their marks) and its features keep
    their names.  A set none of whose templates reads a pattern (a tagger's) is left as it is."""
    known = set(template_names())
    reads = any(isinstance(entry, dict) and entry.get("name") in known and "pattern" in template(entry["name"]).params
                for entry in features.get("template", ()))
    return features if "token_pattern" in features or not reads else {**features, "token_pattern": RUN_PATTERN}


_WORD, _MARK = 1, 2  # the kinds of word character :func:`_character_kinds` tells apart (0: none)
_kinds = np.zeros(0, dtype=np.uint8)  # [c] = the kind of chr(c); grown on demand


def _character_kinds(points: np.ndarray) -> np.ndarray:
    """The kind of each code point: ``_WORD`` for a word character of Python's regular expressions, ``\\w``
    (``str.isalnum()`` or ``_``), ``_MARK`` for one of :data:`WORD_MARKS`, else 0."""
    global _kinds
    top = int(points.max()) + 1 if len(points) else 0
    if top > len(_kinds):
        size = min(max(256, 1 << (top - 1).bit_length()), sys.maxunicode + 1)
        kinds = np.fromiter((chr(c).isalnum() or c == 0x5F for c in range(size)), dtype=np.uint8, count=size)
        for low, high in WORD_MARKS:
            kinds[low : min(high + 1, size)] = _MARK
        _kinds = kinds
    return _kinds[points]


#: The key of the extractor's own constant feature; no template writes it (see DocumentFeatureExtractor).
_CONSTANT = "\x00constant"


class DocumentFeatureExtractor:
    """Turns documents into one row each of hashed feature values (a :class:`FeatureMatrix` whose
    instances all have length 1).  ``fit_idf`` estimates idf on training counts (for the tf-idf values).

    ``constant``: every row must hold a feature of the same value, whose weight is a per-label constant
    (naive Bayes keeps ``log P(y)`` there).  A ``bias`` template gives one when the values are not
    normalised or mapped; otherwise the extractor appends its own feature of value 1 after the
    feature set's values, so that any feature set serves such a learner.  ``presence``: every value
    becomes its sign (±1), for a learner that models which features a document has; ``counts``: the
    values are the signed counts, neither weighted nor normalised, for a learner that models how often
    each feature occurs."""

    def __init__(self, feature_set: FeatureSet, hasher: FeatureHasher, *, constant: bool = False,
                 presence: bool = False, counts: bool = False):
        self.feature_set = feature_set
        self.hasher = hasher
        self.presence, self.raw_counts = presence, counts
        self.idf_buckets = np.zeros(0, dtype=np.int64)
        self.idf = np.zeros(0, dtype=np.float64)
        self.idf_unseen = 1.0  # idf of a bucket no training document has: log(1 + n) + 1
        self._idf_table: np.ndarray | None = None
        self._specs = [(s, template(s.name), feature_set.arguments(s)) for s in feature_set.templates]
        own_bias = (counts or feature_set.normalize == "none") and feature_set.random_fourier is None and any(
            s.name == "bias" for s, _, _ in self._specs)
        self._constant_bucket = self.hasher(_CONSTANT, "")[0] if constant and not own_bias else None
        unfit = [s.name for s, t, _ in self._specs if t.kind == "context"]
        if unfit:
            raise StructlinError(f"feature set {feature_set.name!r}: context templates ({', '.join(unfit)}) need "
                                 "a tagger; documents take document or token templates")
        placed = [s.name for s in feature_set.templates if s.offsets != (0,) or s.column != "word"]
        if placed:  # a token template reads a document's text as one word: there is no neighbour or other column
            raise StructlinError(f"feature set {feature_set.name!r}: template {placed[0]!r} gives offsets or a column, "
                                 "which a tagger's tokens have; a document is read as one word (drop them)")

    def __getstate__(self) -> dict:
        """Pickled without the dense idf table (``2**bits`` floats), a cache :meth:`_idf_of` builds again, and with
        the fitted idf deflated as in a model file."""
        return {**vars(self), "_idf_table": None, "idf_buckets": deflated(self.idf_buckets), "idf": deflated(self.idf)}

    def __setstate__(self, state: dict) -> None:
        vars(self).update({"raw_counts": False, **state}, idf_buckets=inflated(state["idf_buckets"]),
                          idf=inflated(state["idf"]))

    # --- counts ---------------------------------------------------------------------------------

    def counts(self, documents, negatives: list | None = None) -> FeatureMatrix:
        """Signed counts of every hashed feature bucket in every document (one row each).  ``negatives`` (a list)
        gets ``(document index, template name, value)`` of the first value below 0 a template gives, if any: a
        Python template's (numbers of a matrix or of a feature dict); the others count occurrences."""
        documents = list(documents)
        n = len(documents)
        rows, codes, weights = [], [], []
        tokenized = {}  # the word runs of the texts by (lowercase, pattern), shared by the templates reading them
        for spec, tpl, params in self._specs:
            if spec.name == "words":
                r, c = self._word_ngrams(documents, spec.key, tokenized, **params)
            elif spec.name == "header_words":
                r, c = self._header_ngrams(documents, spec.key, **params)
            elif spec.name == "chars":
                r, c = self._char_ngrams(documents, spec.key, **params)
            else:
                r, c, w = self._python_template(documents, spec, tpl, params)
                below = np.flatnonzero(w < 0)[:1]
                if negatives is not None and len(below) and not negatives:
                    negatives.append((int(r[below[0]]), spec.name, float(w[below[0]])))
                weights.append(w)
                rows.append(r)
                codes.append(c)
                continue
            rows.append(r)
            codes.append(c)
            weights.append(np.ones(len(r), dtype=np.float32))
        row = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)
        buckets, signs = self.hasher.buckets(np.concatenate(codes) if codes else np.zeros(0, np.uint64))
        # float32 unless a Python template gives real values (float64: sums of them stay exact)
        values = signs * np.concatenate(weights) if weights else np.zeros(0, np.float32)
        return _sum_duplicates(row, buckets, values, n)

    def _word_ngrams(self, documents, key, tokenized: dict, n=(1,), lowercase=True, pattern=WORD_PATTERN,
                     stopwords=(), truncate=None, suffix=None):
        """Row and code of every word n-gram; ``tokenized`` keeps the documents' tokens for the next template."""
        runs = tokenized.get((lowercase, pattern))
        if runs is None:
            texts = [_read_as(_text(d), lowercase, pattern) for d in documents]
            runs = tokenized[lowercase, pattern] = (
                _word_runs(texts, unicode_words=pattern == WORD_PATTERN) if pattern in (WORD_PATTERN, RUN_PATTERN)
                else _pattern_matches(texts, pattern))
        points, starts, lengths, owner = runs
        if stopwords:
            keep = ~np.isin(self.hasher.sequences(points, starts, lengths),
                            self.hasher.sequences(*_code_points(list(stopwords))))
            starts, lengths, owner = starts[keep], lengths[keep], owner[keep]
        if truncate is not None or suffix is not None:  # a character alone has no stem or ending but itself
            long = lengths > 1
            starts, lengths, owner = starts[long], lengths[long], owner[long]
        if truncate is not None:
            lengths = np.minimum(lengths, truncate)
        if suffix is not None:
            kept = np.minimum(lengths, suffix)
            starts, lengths = starts + lengths - kept, kept
        codes = self.hasher.sequences(points, starts, lengths)
        return self._sequence_ngrams(codes, np.bincount(owner, minlength=len(documents)), key, n)

    def _header_ngrams(self, documents, key, headers=("subject",), **word_options):
        """:meth:`_word_ngrams` of the named header lines' text (their own tokens, never shared)."""
        return self._word_ngrams([_header_text(d, headers) for d in documents], key, {}, **word_options)

    def _char_ngrams(self, documents, key, n=(3, 4, 5), lowercase=True, within_words=True):
        owners, pieces = [], []
        for d, document in enumerate(documents):
            text = _text(document).lower() if lowercase else _text(document)
            parts = [f" {w} " for w in text.split()] if within_words else [text]
            pieces.extend(parts)
            owners.extend([d] * len(parts))
        # A character's code is its code point; H(key@k) seeds every n-gram's code.
        chars = np.frombuffer("".join(pieces).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
        rows, codes = self._sequence_ngrams(chars, np.array([len(p) for p in pieces], dtype=np.int64), key, n)
        return np.array(owners, dtype=np.int64)[rows], codes

    def _sequence_ngrams(self, codes, lengths, key, orders):
        """Row (sequence index) and code of every n-gram of each order, never across sequences."""
        sequence = np.repeat(np.arange(len(lengths)), lengths)
        place = np.arange(len(codes)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        rows, out = [], []
        for k in orders:
            starts = np.flatnonzero(place + k <= lengths[sequence]) if len(codes) else np.zeros(0, np.int64)
            z = np.full(len(starts), self.hasher.string(f"{key}@{k}"), dtype=np.uint64)
            for j in range(k):
                z = self.hasher.mix(z, codes[starts + j])
            rows.append(sequence[starts])
            out.append(z)
        return np.concatenate(rows), np.concatenate(out)

    def _python_template(self, documents, spec, tpl, params):
        word = _template_input(spec, tpl)
        results = (tpl.function(word(d), **params) for d in documents)
        counts, codes, weights = hash_results(self.hasher, spec.key, results)
        return np.repeat(np.arange(len(documents)), counts), codes, weights

    def bias_bucket(self) -> int | None:
        """The hashed bucket of the feature every document has: the extractor's own constant feature, else
        the feature set's ``bias`` feature, or None without either."""
        if self._constant_bucket is not None:
            return self._constant_bucket
        key = next((spec.key for spec, _, _ in self._specs if spec.name == "bias"), None)
        return None if key is None else self.hasher(key, "")[0]

    # --- values ---------------------------------------------------------------------------------

    def fit_idf(self, counts: FeatureMatrix) -> None:
        """The idf of the training documents' ``counts`` (:meth:`fit_idf_frequencies`)."""
        buckets, df = np.unique(counts.indices, return_counts=True)
        self.fit_idf_frequencies(buckets, df, counts.n_instances)

    def fit_idf_frequencies(self, buckets: np.ndarray, df: np.ndarray, n: int) -> None:
        """``idf = log((1 + n) / (1 + df)) + 1`` per bucket, ``df`` the number of the ``n`` training documents
        containing it."""
        self.set_idf(buckets.astype(np.int64), np.log((1 + n) / (1 + df)) + 1, np.log(1 + n) + 1)

    def set_idf(self, buckets: np.ndarray, idf: np.ndarray, unseen: float) -> None:
        """Use a fitted idf (as :meth:`fit_idf` computes it, or as a model file stores it)."""
        self.idf_buckets, self.idf, self.idf_unseen = buckets, idf, float(unseen)
        self._idf_table = None

    def transform(self, counts: FeatureMatrix) -> FeatureMatrix:
        """Counts → values (binary / count / log / tf-idf), then optional L2 normalisation, then
        optional random Fourier features (for a learner of counts, the counts themselves)."""
        c = counts.values.astype(np.float64)
        kind = "count" if self.raw_counts else self.feature_set.values
        if kind == "binary":
            v = np.sign(c)
        elif kind == "log":
            v = np.sign(c) * np.log1p(np.abs(c))
        elif kind in ("tfidf", "log-tfidf"):
            tf = c if kind == "tfidf" else np.sign(c) * np.log1p(np.abs(c))
            v = tf * self._idf_of(counts.indices)
        else:
            v = c
        if self.feature_set.normalize == "l2" and not self.raw_counts and len(v):
            norms = np.sqrt(np.add.reduceat(v * v, counts.indptr[:-1][np.diff(counts.indptr) > 0]))
            row_norm = np.zeros(counts.n_positions)
            row_norm[np.diff(counts.indptr) > 0] = norms
            v = v / np.repeat(np.where(row_norm > 0, row_norm, 1.0), np.diff(counts.indptr))
        values = FeatureMatrix(counts.indptr, counts.indices, v.astype(np.float32), counts.lengths)
        rff = self.feature_set.random_fourier
        values = values if rff is None else rff.transform(values)
        if self.presence:  # an infinite value stays one, for the learner's check of finite values to refuse
            present = np.where(np.isinf(values.values), values.values, np.sign(values.values))
            values = FeatureMatrix(values.indptr, values.indices, present, values.lengths)
        return values if self._constant_bucket is None else _with_constant(values, self._constant_bucket)

    def transformed_columns(self, columns: np.ndarray) -> np.ndarray:
        """The buckets :meth:`transform` gives to counts that use the sorted buckets ``columns``: random Fourier
        features' dimensions in place of them, and the constant's bucket added."""
        rff = self.feature_set.random_fourier
        columns = columns if rff is None else np.arange(rff.dimensions, dtype=columns.dtype)
        if self._constant_bucket is None:
            return columns
        return np.union1d(columns, np.array([self._constant_bucket], dtype=columns.dtype))

    def _idf_of(self, buckets: np.ndarray) -> np.ndarray:
        """The fitted idf of each bucket (a dense table over all ``2**bits`` buckets, built once)."""
        if self._idf_table is None:
            self._idf_table = np.full(1 << self.hasher.bits, self.idf_unseen)
            self._idf_table[self.idf_buckets] = self.idf
        return self._idf_table[buckets]

    def extract(self, documents) -> FeatureMatrix:
        return self.transform(self.counts(documents))


def _with_constant(X: FeatureMatrix, bucket: int) -> FeatureMatrix:
    """``X`` with the value 1 added at ``bucket`` in every row (buckets stay in increasing order)."""
    n = X.n_positions
    width = max(int(X.indices.max()) + 1 if len(X.indices) else 0, bucket + 1)
    rows = scipy.sparse.csr_matrix((X.values, X.indices, X.indptr), shape=(n, width))
    rows = rows + scipy.sparse.csr_matrix((np.ones(n, np.float32), (np.arange(n), np.full(n, bucket))), shape=(n, width))
    rows.sort_indices()
    return FeatureMatrix(rows.indptr.astype(np.int64), rows.indices.astype(np.int32), rows.data.astype(np.float32),
                         X.lengths)


def _sum_duplicates(rows: np.ndarray, buckets: np.ndarray, values: np.ndarray, n_documents: int) -> FeatureMatrix:
    """CSR rows of summed values per (document, bucket); buckets in increasing order in each row,
    sums of zero dropped.  (scipy's COO → CSR conversion sorts within each row only, which costs less
    than a global ``np.unique`` of (row, bucket) keys.)"""
    width = int(buckets.max()) + 1 if len(buckets) else 1
    csr = scipy.sparse.coo_matrix((values, (rows, buckets)), shape=(n_documents, width)).tocsr()
    csr.sum_duplicates()
    csr.eliminate_zeros()
    return FeatureMatrix(csr.indptr.astype(np.int64), csr.indices.astype(np.int32), csr.data.astype(np.float32),
                         np.ones(n_documents, dtype=np.int64))


def _template_input(spec, tpl):
    """What a template computed in Python reads of a document: a token template sees a text as one word; ``bias``
    reads nothing, so it fits every kind of document."""
    return _text if tpl.kind == "token" and spec.name != "bias" else (lambda d: d)


#: The n-gram templates the extractor hashes natively: their codes for some documents, in the order it enumerates
#: them (for each order ``n``, every n-gram in turn).
_NATIVE = {"words": lambda extractor, documents, key, **params: extractor._word_ngrams(documents, key, {}, **params),
           "header_words": DocumentFeatureExtractor._header_ngrams, "chars": DocumentFeatureExtractor._char_ngrams}


def document_features(extractor: DocumentFeatureExtractor, document) -> list[NamedFeature]:
    """The features ``extractor`` counts in one document, named, with the codes of its own hashing (values before
    the sign and before :meth:`~DocumentFeatureExtractor.transform`): a word or character n-gram of order ``n`` is
    ``key@n=gram`` (its string from the registered function, which gives the n-grams of one order in the order the
    native hashing enumerates them), another template's feature ``key=value``, and the extractor's own constant
    feature ``constant``."""
    named = []
    for spec, tpl, params in extractor._specs:
        if spec.name in _NATIVE:
            orders = params.get("n", inspect.signature(tpl.function).parameters["n"].default)
            grams = [(k, gram) for k in orders for gram in tpl.function(document, **{**params, "n": (k,)})]
            codes = _NATIVE[spec.name](extractor, [document], spec.key, **params)[1]
            if len(codes) != len(grams):
                raise RuntimeError(f"{spec.key}: {len(grams)} n-grams named but {len(codes)} hashed")
            named += [NamedFeature(spec.key, feature_name(f"{spec.key}@{k}", gram), int(code), 1.0)
                      for (k, gram), code in zip(grams, codes)]
        else:
            result = tpl.function(_template_input(spec, tpl)(document), **params)
            codes = hash_results(extractor.hasher, spec.key, [result])[1]
            named += [NamedFeature(spec.key, feature_name(spec.key, value), int(code), weight)
                      for (value, weight), code in zip(feature_values(result), codes)]
    if extractor._constant_bucket is not None:
        hasher = extractor.hasher
        named.append(NamedFeature("constant", "constant", int(hasher.mix(hasher.string(_CONSTANT), hasher.string(""))),
                                  1.0))
    return named
