"""Feature templates and feature sets: turning tokens in context into hashed sparse features.

A *token template* is a function of one word form returning its feature values (a string, an
iterable of strings, a ``{string: value}`` mapping for real-valued features, or ``None``).  A feature
set applies it at one or more *offsets* (−2..+2): the value of template ``t`` at offset ``o`` for
position ``i`` is ``t(words[i + o])``, and beyond the sentence a boundary marker (``<S>`` before,
``</S>`` after) is used.  The feature ``{template}@{o}={value}`` is hashed with a signed
:class:`~structlin.hashing.FeatureHasher`.

Because token templates depend on one word only, their values are computed and hashed once per word
*type*; a corpus is then assembled from per-type tables by vectorised gathers, so the Python work per
token is one dictionary lookup.  A *context template* ``f(words, **params)`` sees a whole sentence
(e.g. word bigrams) and returns the values of every position, as a list.

Feature sets are TOML files (``features/*.toml``)::

    name = "pos-basic"
    [[template]]
    name = "suffix"
    lengths = [1, 2, 3]
    offsets = [-1, 0, 1]

A document feature set may end with a ``[random_fourier]`` table (``dimensions``, ``gamma``, ``seed``):
its feature vectors are then replaced by random Fourier features (:mod:`structlin.fourier`).

Users add templates with :func:`register_template` and name them in their own TOML files.  Every parameter
of a template takes the values its :class:`Param` declares, or the kind of its default value; a feature set's
values are checked when it is built (:meth:`FeatureSet.from_dict`), so that no file, of the user's or of a
model, can make a template fail at extraction or quietly compute other features.
"""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import itertools
import math
import re
import reprlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .clusters import BUNDLED_CLUSTERS, WordClusters, bundled_clusters
from .errors import OptionValueError, StructlinError, UnknownNameError
from .fourier import RandomFourierFeatures
from .hashing import FeatureHasher
from .matrix import FactoredMatrix, FeatureMatrix, ranges

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

BEFORE, AFTER = "<S>", "</S>"
# How a document's feature counts become values (see structlin.doctemplates).
VALUE_KINDS = ("binary", "count", "log", "tfidf", "log-tfidf")


#: The longest n-gram, affix or cut a template parameter may ask for (in characters, words or fields).
MAX_LENGTH = 100
#: The farthest offset a token template reads, either side (see :meth:`FeatureSet.with_input_columns`).
_WINDOW = 2
#: What a feature set may hold beside its templates, for the templates that need it (``Template.needs``):
#: ``clusters``, word clusters built from unlabeled text (``clusters = "FILE"``, :mod:`structlin.clusters`).
RESOURCES = ("clusters",)


@dataclass(frozen=True)
class Param:
    """The values a template parameter takes: one value of a ``kind`` (``bool``, ``int``, ``float``, ``str``,
    or ``object`` for any), or with ``many`` a list of distinct ones, non-empty unless ``empty``.  Numbers lie
    in ``low..high``; ``rule(value)`` is a last test of each value, returning what is wrong with it or None.
    ``what`` describes the accepted values in place of the description these make."""

    kind: type
    many: bool = False
    low: float | None = None
    high: float | None = None
    empty: bool = False
    rule: Callable[[object], str | None] | None = None
    what: str = ""

    def check(self, name: str, value, where: str) -> None:
        """Raise :class:`OptionValueError` naming ``where`` and the parameter ``name`` unless ``value`` fits."""
        reason = self._problem(value)
        if reason is not None:
            raise OptionValueError(f"{where}: {name} must be {self.expected()}, got {reprlib.repr(value)}"
                                   + (f" ({reason})" if reason else ""))

    def _problem(self, value) -> str | None:
        """None when ``value`` fits; else what is wrong beyond not being :meth:`expected` ("": nothing more)."""
        if self.many and not (isinstance(value, (list, tuple)) and (value or self.empty)):
            return ""
        values = value if self.many else [value]
        if not all(map(self._fits, values)) or any(values.index(v) < k for k, v in enumerate(values)):
            return ""
        return next(filter(None, map(self.rule, values)), None) if self.rule else None

    def _fits(self, value) -> bool:
        """Whether one value is of the kind (a float parameter takes integers too) and in the range."""
        if self.kind is object:
            return value is not None
        kinds = (int, float) if self.kind is float else (self.kind,)
        return (type(value) in kinds and (self.kind is not float or math.isfinite(value))
                and (self.low is None or value >= self.low) and (self.high is None or value <= self.high))

    def expected(self) -> str:
        """The accepted values, in words."""
        if self.what:
            return self.what
        one, several = _KIND_NAMES[self.kind]
        bounds = (f" in {self.low}..{self.high}" if self.low is not None and self.high is not None
                  else f" of at least {self.low}" if self.low is not None
                  else f" of at most {self.high}" if self.high is not None else "")
        if not self.many:
            return one + bounds
        return f"a {'' if self.empty else 'non-empty '}list of distinct {several}{bounds}"


_KIND_NAMES = {bool: ("true or false", "booleans"), int: ("an integer", "integers"), float: ("a finite number",
               "finite numbers"), str: ("a string", "strings"), object: ("a value", "values")}
#: Lengths of affixes and n-grams, sizes of field conjunctions.
LENGTHS = Param(int, many=True, low=1, high=MAX_LENGTH)
#: Where a token template is applied, or what an n-gram joins: positions relative to the token.
OFFSETS = Param(int, many=True, low=-_WINDOW, high=_WINDOW)


def _token_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot find tokens, or None: it must compile (Python's ``re`` also refuses a repeat count
    past 2**32 and nesting past its recursion), have no capturing group (with one, ``re.findall`` gives the groups
    rather than the tokens), and not match the empty string (every gap between characters would be a token)."""
    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as err:
        return f"not a regular expression: {err}"
    if compiled.groups:
        return f"it has {compiled.groups} capturing group(s); write (?:...)"
    empty = compiled.fullmatch("") or any(m.start() == m.end() for m in compiled.finditer(_PATTERN_PROBE))
    return "it matches the empty string, a token of no character" if empty else None


#: A text on which a token pattern must find no token of no character (``x*``, ``\\b``).
_PATTERN_PROBE = "a ab, 1 é-x\n"


#: A regular expression that finds tokens (a word template's ``pattern``, a feature set's ``token_pattern``).
TOKEN_PATTERN = Param(str, rule=_token_pattern_problem, what="a regular expression of tokens of one character or "
                      "more, without capturing groups")


def _derived(default) -> Param:
    """The parameter a default value implies: a value of its kind, or a non-empty list of values of its items'
    kind; any value when the default tells nothing (None, an empty list, another type)."""
    scalars = {bool, int, float, str}
    if type(default) in scalars:
        return Param(type(default))
    kinds = {type(v) for v in default} if isinstance(default, (list, tuple)) else set()
    if len(kinds) == 1 and kinds <= scalars:
        return Param(kinds.pop(), many=True)
    return Param(object)


@dataclass(frozen=True)
class Template:
    """A registered template function of a ``kind``: ``token`` ones take ``(word, **params)``,
    ``context`` ones ``(words, **params)``, ``document`` ones ``(document, **params)``.  ``params``
    declares what each parameter takes; ``required`` names those without a default; ``needs`` names the
    feature set's resources (``clusters``) the function takes as keyword arguments besides its parameters."""

    name: str
    function: Callable
    kind: str = "token"
    params: Mapping[str, Param] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()

    @property
    def context(self) -> bool:
        return self.kind == "context"


_REGISTRY: dict[str, Template] = {}


def register_template(name: str, function: Callable | None = None, *, context: bool = False, document: bool = False,
                      params: Mapping[str, Param] | None = None, needs: Sequence[str] = ()):
    """Register ``function`` under ``name`` (usable as a decorator).

    A token template takes ``(word, **params)`` and returns a string, an iterable of strings, a
    mapping from strings to real values, or ``None`` for no feature.  A context template
    (``context=True``) takes ``(words, **params)`` and returns one such value per position.  A
    document template (``document=True``) takes a whole document (a text, a tuple of fields or a
    ``{index: value}`` mapping) and returns its feature values.

    ``params`` declares what a parameter takes (a :class:`Param`); any other parameter takes values of
    the kind of its default value (``lengths=(1, 2)``: a non-empty list of distinct integers).  ``needs`` names
    the feature set's resources the function also takes (``clusters``: its :class:`~structlin.clusters.WordClusters`);
    a feature set using the template must have them.
    """
    unknown = set(needs) - set(RESOURCES)
    if unknown:
        raise ValueError(f"template {name!r}: no feature-set resource {', '.join(sorted(unknown))}; "
                         f"resources: {', '.join(RESOURCES)}")

    def add(fn: Callable) -> Callable:
        defaults = {p.name: p.default for p in list(inspect.signature(fn).parameters.values())[1:]
                    if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in needs}
        declared = params or {}
        if set(declared) - set(defaults):
            raise ValueError(f"template {name!r}: {', '.join(sorted(set(declared) - set(defaults)))} are not "
                             "parameters of its function")
        kind = "document" if document else "context" if context else "token"
        _REGISTRY[name] = Template(name, fn, kind, {p: declared.get(p) or _derived(d) for p, d in defaults.items()},
                                   tuple(p for p, d in defaults.items() if d is inspect.Parameter.empty), tuple(needs))
        return fn

    return add if function is None else add(function)


def template(name: str) -> Template:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("feature template", name, _REGISTRY) from None


def template_names() -> list[str]:
    return sorted(_REGISTRY)


# --- built-in token templates -------------------------------------------------------------------


@register_template("bias")
def _bias(word):
    return ""


@register_template("word")
def _word(word):
    return word


@register_template("lower")
def _lower(word):
    return word.lower()


@register_template("prefix", params={"lengths": LENGTHS})
def _prefix(word, lengths=(1, 2, 3, 4)):
    """The first n characters for each n in ``lengths`` (none longer than the word)."""
    return [word[:n] for n in lengths if n <= len(word)]


@register_template("suffix", params={"lengths": LENGTHS})
def _suffix(word, lengths=(1, 2, 3, 4)):
    """The last n characters for each n in ``lengths`` (none longer than the word)."""
    return [word[-n:] for n in lengths if n <= len(word)]


_DIGIT = re.compile(r"\d")
_SHAPE = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "X" * 26 + "x" * 26 + "d" * 10,
)


def word_shape(word: str) -> str:
    """Letters → ``X``/``x``, digits → ``d``, other characters kept (``Al-Zaman`` → ``Xx-Xxxxx``)."""
    shape = word.translate(_SHAPE)
    if shape.isascii():
        return shape
    return "".join(c if c.isascii() else "X" if c.isupper() else "x" if c.isalpha() else "d" if c.isdigit() else c
                   for c in shape)


@register_template("shape")
def _shape(word):
    return word_shape(word)


@register_template("short_shape")
def _short_shape(word):
    """The shape with runs of one class collapsed (``Al-Zaman`` → ``Xx-Xx``)."""
    return "".join(k for k, _ in itertools.groupby(word_shape(word)))


@register_template("is_title")
def _is_title(word):
    return "1" if word.istitle() else None


@register_template("is_upper")
def _is_upper(word):
    return "1" if word.isupper() else None


@register_template("has_digit")
def _has_digit(word):
    return "1" if _DIGIT.search(word) else None


@register_template("has_hyphen")
def _has_hyphen(word):
    return "1" if "-" in word else None


@register_template("cluster", params={"prefixes": LENGTHS}, needs=("clusters",))
def _cluster(word, clusters, prefixes=(4, 6, 10, 20)):
    """The word's cluster at each granularity: the first n bits of its path in the feature set's word clusters
    for each n in ``prefixes`` (a shorter path once, whole), none for a word the clusters do not hold (Koo et al.
    2008; Owoputi et al. 2013 use 4, 6, ..., 16 bits and the whole path)."""
    path = clusters.path(word)
    return None if path is None else list(dict.fromkeys(path[:n] for n in prefixes))


def _ngram(words, of="lower", span=(-1, 0)):
    """The values of the single-valued token template ``of`` at the offsets ``span`` (e.g. the word
    bigram ``lower[-1]|lower[0]``), one per position.

    The extractor computes n-grams natively from per-type value hashes: the feature's code mixes
    ``H(key)`` with ``H(value at each offset)`` in turn (see :meth:`FeatureHasher.mix`).  This
    function gives the same values as strings, for reading.
    """
    fn = template(of).function
    pad = max(abs(o) for o in span)
    values = [BEFORE] * pad + [fn(w) for w in words] + [AFTER] * pad
    return ["|".join(values[pad + i + o] for o in span) for i in range(len(words))]


def _token_template(name: str) -> str | None:
    """Why ``name`` names no token template of the word alone (the ``of`` of an n-gram), or None."""
    if name not in _REGISTRY:
        return f"token templates: {', '.join(n for n in template_names() if _REGISTRY[n].kind == 'token')}"
    kind, needs = _REGISTRY[name].kind, _REGISTRY[name].needs
    return (f"{name!r} is a {kind} template" if kind != "token"
            else f"{name!r} reads the feature set's {', '.join(needs)}" if needs else None)


register_template("ngram", _ngram, context=True,
                  params={"of": Param(str, rule=_token_template, what="the name of a token template"), "span": OFFSETS})


# --- feature sets -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateSpec:
    """One ``[[template]]`` entry of a feature set: a template, its parameters and offsets, and the
    input ``column`` a token template reads (``word``, the token itself, or e.g. ``pos``)."""

    name: str
    params: tuple = ()
    offsets: tuple = (0,)
    column: str = "word"

    @property
    def key(self) -> str:
        """The prefix of this entry's feature strings, unique within a feature set."""
        call = self.name
        if self.params:
            call += "(" + ",".join(f"{k}={list(v) if isinstance(v, tuple) else v}" for k, v in self.params) + ")"
        return call if self.column == "word" else f"{self.column}:{call}"

    def to_dict(self) -> dict:
        out = {"name": self.name, **{k: list(v) if isinstance(v, tuple) else v for k, v in self.params}}
        if self.offsets != (0,):
            out["offsets"] = list(self.offsets)
        if self.column != "word":
            out["column"] = self.column
        return out


def _freeze(value):
    return tuple(value) if isinstance(value, list) else value


_COLUMN_SPANS = ([-2, -1], [-1, 0], [0, 1], [1, 2], [-2, -1, 0], [-1, 0, 1], [0, 1, 2])


#: The keys of a feature set's TOML table (those :meth:`FeatureSet.to_dict` writes).
FEATURE_SET_KEYS = frozenset({"name", "description", "values", "normalize", "template", "imports", "random_fourier",
                              "clusters", "token_pattern"})


@dataclass(frozen=True)
class FeatureSet:
    """A named list of template entries, loaded from TOML and stored in model files.  Documents'
    feature vectors are weighted by ``values``, scaled by ``normalize`` and then mapped by
    ``random_fourier``, if given.  ``clusters`` are the word clusters the ``cluster`` template reads, held
    whole, so that a model file keeps them.  ``token_pattern`` is the ``pattern`` of every template that reads one
    and gives none (None: each template's own default; a feature set of a model file of format 2 or before has
    scikit-learn's, :func:`~structlin.doctemplates.pinned_word_pattern`)."""

    name: str
    templates: tuple[TemplateSpec, ...]
    description: str = ""
    imports: tuple[str, ...] = field(default=())
    values: str = "count"
    normalize: str = "none"
    random_fourier: RandomFourierFeatures | None = None
    clusters: WordClusters | None = field(default=None, hash=False)  # compared, not hashed (a large mapping)
    token_pattern: str | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The input columns a token must give: ``word`` first, then every other column a template
        reads, in the order the feature set first names them (a chunker's ``("word", "pos")``)."""
        return tuple(dict.fromkeys(["word", *(s.column for s in self.templates)]))

    @classmethod
    def from_dict(cls, data: Mapping, source: str | None = None, *, folder: Path | None = None) -> FeatureSet:
        """Build from parsed TOML, checked: every template name must be registered, and every parameter and
        offset take a value its template accepts.  Errors begin with ``source`` (default: the set's name).
        ``clusters`` is a file (a path relative to ``folder``, the TOML file's) or, in a model file, the
        clusters themselves (:meth:`WordClusters.to_dict`)."""
        source = source or (f"feature set {data['name']!r}" if "name" in data else "feature set")
        unknown = sorted(set(data) - FEATURE_SET_KEYS)
        if unknown:  # a misspelt key (normalise, value) would otherwise be dropped without a word
            raise OptionValueError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; accepted: "
                                   f"{', '.join(sorted(FEATURE_SET_KEYS))}")
        for key in ("name", "description"):
            if key in data and not isinstance(data[key], str):
                raise OptionValueError(f"{source}: {key} must be a string, got {reprlib.repr(data[key])}")
        entries = data.get("template")
        if not isinstance(entries, list) or not entries:
            table = " (found one [template] table: write [[template]], doubled, for each template)" \
                if isinstance(entries, Mapping) else ""
            found = f" (found template = {reprlib.repr(entries)})" if entries is not None and not table else ""
            raise OptionValueError(f"{source}: a feature set needs at least one [[template]] entry{table}{found}")
        specs = []
        for k, entry in enumerate(entries, 1):
            if not isinstance(entry, Mapping):
                raise OptionValueError(f"{source}: [[template]] #{k} must be a table, got {reprlib.repr(entry)}")
            entry = dict(entry)
            name = entry.pop("name", None)
            if not isinstance(name, str):
                raise OptionValueError(f"{source}: [[template]] #{k} has no name")
            where = f"{source}: template {name!r} (#{k})"
            try:
                tpl = template(name)
            except UnknownNameError as err:  # located, keeping its type and the names accepted
                err.args = (f"{source}: [[template]] #{k}: {err}",)
                raise
            offsets = entry.pop("offsets", [0])
            OFFSETS.check("offsets", offsets, where)
            if tpl.kind != "token" and list(offsets) != [0]:
                raise OptionValueError(f"{where}: a {tpl.kind} template takes no offsets")
            column = entry.pop("column", "word")
            if not (isinstance(column, str) and column) or (column != "word" and tpl.kind == "document"):
                raise OptionValueError(f"{source}: column of {name!r} (#{k}) must name an input column of the tokens "
                                       "(word, pos, ...); document templates read the document")
            _check_params(tpl, entry, where)
            specs.append(TemplateSpec(name, tuple(sorted((p, _freeze(v)) for p, v in entry.items())), tuple(offsets),
                                      column))
        applied = [(s.key, o) for s in specs for o in s.offsets]
        if len(set(applied)) != len(applied):
            raise OptionValueError(f"{source}: a template with the same parameters appears twice at one offset")
        values, normalize = str(data.get("values", "count")), str(data.get("normalize", "none"))
        if values not in VALUE_KINDS:
            raise OptionValueError(f"{source}: values = {values!r}; accepted: {', '.join(VALUE_KINDS)}")
        if normalize not in ("none", "l2"):
            raise OptionValueError(f"{source}: normalize = {normalize!r}; accepted: none, l2")
        token_pattern = data.get("token_pattern")
        if token_pattern is not None:
            TOKEN_PATTERN.check("token_pattern", token_pattern, source)
        feature_set = cls(str(data.get("name", source)), tuple(specs), str(data.get("description", "")),
                          _imports(data, source), values, normalize, _random_fourier(data, source),
                          _clusters(data, source, folder), token_pattern)
        for spec in specs:
            missing = [r for r in template(spec.name).needs if feature_set.resources[r] is None]
            if missing:
                raise OptionValueError(f"{source}: template {spec.name!r} reads the feature set's {missing[0]}; "
                                       f"give them as {missing[0]} = \"FILE\" (see `structlin clusters --help`)")
        return feature_set

    @classmethod
    def load(cls, name_or_path: str | Path) -> FeatureSet:
        """A feature set by name (``features/NAME.toml``) or from a TOML file path.

        A file may list ``imports = ["module"]``: modules imported first, so that they can register
        their own templates.
        """
        path = Path(name_or_path)
        if path.suffix != ".toml":
            bundled = importlib.resources.files("structlin.features") / f"{name_or_path}.toml"
            if not bundled.is_file():
                note = " (a file of that name is there, but a feature set file's name ends in .toml)" \
                    if path.exists() else ""
                raise UnknownNameError("feature set", str(name_or_path), available_feature_sets(), note)
            text, source = bundled.read_text("utf-8"), str(name_or_path)
        else:
            text, source = toml_text(path, "feature set"), str(path)
        data = parse_toml(text, source)
        for module in _imports(data, source):
            try:
                importlib.import_module(module)
            except Exception as err:  # the user's module: whatever its import raises, the set cannot be built
                raise StructlinError(f"{source}: imports: module {module!r} cannot be imported "
                                     f"({type(err).__name__}: {err})") from None
        return cls.from_dict(data, source, folder=path.parent if path.suffix == ".toml" else None)

    def with_input_columns(self, columns: Sequence[str]) -> FeatureSet:
        """This set plus, for every input column beside the word (a chunker's POS column), the column's
        value at offsets −2..2 and its bigrams and trigrams around the token: the window a CRF tagger
        is given over a column file's attributes."""
        if not columns:
            return self
        extra = []
        for column in columns:
            extra.append({"name": "word", "column": column, "offsets": list(range(-_WINDOW, _WINDOW + 1))})
            extra += [{"name": "ngram", "column": column, "of": "word", "span": span} for span in _COLUMN_SPANS]
        data = self.to_dict()
        data.update(name=f"{self.name}+{'+'.join(columns)}", template=[*data["template"], *extra],
                    description=f"{self.description}; the columns {', '.join(columns)} at −2..2, their bigrams "
                                "and trigrams")
        return FeatureSet.from_dict(data, data["name"])

    def to_dict(self) -> dict:
        out = {"name": self.name, "description": self.description, "values": self.values,
               "normalize": self.normalize, "template": [s.to_dict() for s in self.templates]}
        if self.imports:
            out["imports"] = list(self.imports)
        if self.random_fourier is not None:
            out["random_fourier"] = self.random_fourier.to_dict()
        if self.clusters is not None:  # bundled ones by name and digest, others whole
            clusters = self.clusters
            out["clusters"] = ({"bundled": clusters.bundled, "sha256": clusters.sha256} if clusters.bundled
                               else clusters.to_dict())
        if self.token_pattern is not None:
            out["token_pattern"] = self.token_pattern
        return out

    @property
    def resources(self) -> dict:
        """What the set holds for the templates that need it, by name (:data:`RESOURCES`; None: not given)."""
        return {"clusters": self.clusters}

    def arguments(self, spec: TemplateSpec) -> dict:
        """What the template of ``spec`` is called with besides its input: its parameters (the set's
        ``token_pattern`` as the ``pattern`` it does not give) and the resources of this set it needs."""
        tpl, resources, given = template(spec.name), self.resources, dict(spec.params)
        if self.token_pattern is not None and "pattern" in tpl.params and "pattern" not in given:
            given["pattern"] = self.token_pattern
        return {**given, **{name: resources[name] for name in tpl.needs}}


_MODULES = Param(str, many=True, empty=True, what="a list of distinct module names")


def _imports(data: Mapping, source: str) -> tuple[str, ...]:
    """The modules a feature set imports (its ``imports``), checked."""
    imports = data.get("imports", [])
    _MODULES.check("imports", imports, source)
    return tuple(imports)


def _clusters(data: Mapping, source: str, folder: Path | None) -> WordClusters | None:
    """The word clusters of a feature set, ``None`` when it has none.  ``clusters`` is a bundled set's name
    (``en``: ``features/en.clusters.gz``, see :func:`~structlin.clusters.bundled_clusters`), a file (a path
    relative to ``folder``), or what :meth:`FeatureSet.to_dict` wrote into a model file: the clusters themselves,
    or a bundled set's name with the SHA-256 of its file, checked."""
    value = data.get("clusters")
    if value is None:
        return None
    if isinstance(value, Mapping) and set(value) == {"bundled", "sha256"}:
        return bundled_clusters(str(value["bundled"]), f"{source}: clusters", sha256=str(value["sha256"]))
    if isinstance(value, Mapping):
        return WordClusters.from_dict(value, f"{source}: clusters")
    if not (isinstance(value, str) and value):
        raise OptionValueError(f"{source}: clusters must name a word-cluster file, got {reprlib.repr(value)}")
    if value in BUNDLED_CLUSTERS:
        return bundled_clusters(value, f"{source}: clusters")
    path = _clusters_path(value, folder)
    if not path.is_file():
        raise StructlinError(f"{source}: clusters file {path} not found (a path relative to the feature set's file, "
                             f"or {', '.join(map(repr, BUNDLED_CLUSTERS))} for the bundled ones)")
    return WordClusters.read(path)


def _clusters_path(value: str, folder: Path | None) -> Path:
    """The word-cluster file a feature set's ``clusters = "FILE"`` names: relative to ``folder``, the TOML file's."""
    path = Path(value).expanduser()
    return path if path.is_absolute() or folder is None else folder / path



def toml_text(path: Path, what: str) -> str:
    """The text of the TOML file ``path``, which holds ``what`` (for the message): UTF-8, as TOML is; a byte that is
    not is named with its line (:class:`StructlinError`), as is a file that cannot be read."""
    if path.exists() and not path.is_file():  # a pipe would block, a device never end
        raise StructlinError(f"{path}: cannot read {what}: not a regular file (a folder, a pipe or a device)")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise StructlinError(f"{path}: cannot read {what} ({err.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise StructlinError(f"{path}:{line}: byte {data[err.start]:#04x} is not UTF-8 (a TOML file is UTF-8 text)"
                             ) from None

def parse_toml(text: str, source: str) -> dict:
    """The table of TOML ``text`` read from ``source``; what cannot be read is one line naming it."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        mark = (" (the file begins with a byte order mark, which TOML does not allow: save it as UTF-8 without one)"
                if text.startswith("\ufeff") else "")
        raise StructlinError(f"{source}: invalid TOML: {err}{mark}") from None
    except RecursionError:
        raise StructlinError(f"{source}: invalid TOML: nested too deeply to read") from None


def feature_set_files(name_or_path: str | Path) -> list[Path]:
    """The files a feature set's TOML file reads besides itself (its word clusters'), which an output must not
    replace; none for a bundled set's name, or a file that cannot be read as TOML (refused when it is loaded)."""
    path = Path(name_or_path)
    try:
        value = (parse_toml(toml_text(path, "feature set"), str(path)).get("clusters")
                 if path.suffix == ".toml" else None)
    except StructlinError:
        return []
    return [_clusters_path(value, path.parent)] if isinstance(value, str) and value not in BUNDLED_CLUSTERS else []


def _random_fourier(data: Mapping, source: str) -> RandomFourierFeatures | None:
    """The ``[random_fourier]`` table of a feature set, checked, or ``None`` when there is none."""
    table = data.get("random_fourier")
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise OptionValueError(f"{source}: random_fourier must be a table (dimensions, gamma, seed)")
    keys = inspect.signature(RandomFourierFeatures).parameters
    unknown = set(table) - set(keys)
    if unknown:
        raise OptionValueError(f"{source}: [random_fourier]: unknown key(s) {', '.join(sorted(unknown))}; "
                               f"accepted: {', '.join(keys)}")
    missing = [k for k, p in keys.items() if p.default is inspect.Parameter.empty and k not in table]
    if missing:
        raise OptionValueError(f"{source}: [random_fourier]: missing {', '.join(missing)}")
    try:
        return RandomFourierFeatures(**table)
    except ValueError as err:
        raise OptionValueError(f"{source}: [random_fourier]: {err}") from None


def _check_params(tpl: Template, params: dict, where: str) -> None:
    """Refuse a parameter ``tpl`` does not take, one it needs missing, and a value it does not accept."""
    unknown = set(params) - set(tpl.params)
    if unknown:
        entry_keys = {"token": "name, offsets, column", "context": "name, column"}.get(tpl.kind, "name")
        raise OptionValueError(f"{where}: unknown parameter(s) {', '.join(sorted(unknown))}; accepted: "
                               f"{', '.join(tpl.params) or 'none'} (besides the entry's {entry_keys})")
    missing = [p for p in tpl.required if p not in params]
    if missing:
        raise OptionValueError(f"{where}: missing parameter(s) {', '.join(missing)}")
    for name, value in params.items():
        tpl.params[name].check(name, value, where)


def available_feature_sets() -> list[str]:
    root = importlib.resources.files("structlin.features")
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".toml"))


def feature_values(result) -> list[tuple[str, float]]:
    """Normalise a template's return value to ``(value string, real value)`` pairs."""
    if result is None:
        return []
    if isinstance(result, str):
        return [(result, 1.0)]
    if isinstance(result, Mapping):
        return [(str(k), float(v)) for k, v in result.items()]
    return [(str(v), 1.0) for v in result]


@contextmanager
def template_errors(key: str) -> Iterator[None]:
    """What template ``key``'s function raises (a user's module, most often), or a result of no kind a template
    gives, is one error naming the template instead of the exception of its code."""
    try:
        yield
    except StructlinError:
        raise
    except Exception as err:  # the template's own code: whatever it raises, its features cannot be made
        raise StructlinError(f"template {key!r} failed: {type(err).__name__}: {err} (a template gives a string, "
                             "strings, a mapping of strings to numbers, or None)") from None


def hash_results(hasher: FeatureHasher, key: str, results) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hash the results of template ``key``, one result per position or document.

    Returns how many feature values each result has, and the 64-bit codes
    ``M(H(key) ⊕ (H(value) + φ))`` and real values of all of them, in order.  What the template's function (a
    user's, or a module's) raises, or a result of no kind a template may give, is one error naming the template.
    """
    counts, values, weights = [], [], []
    with template_errors(key):
        for result in results:
            pairs = feature_values(result)
            counts.append(len(pairs))
            values.extend(v for v, _ in pairs)
            weights.extend(w for _, w in pairs)
    codes = hasher.mix(np.full(len(values), hasher.string(key), dtype=np.uint64), hasher.strings(values))
    return np.array(counts, dtype=np.int64), codes, np.array(weights, dtype=np.float64)


# --- extraction ---------------------------------------------------------------------------------


class TokenFeatureExtractor:
    """Extracts a feature set's hashed features for tokenized sentences.

    ``extract(sentences)`` returns one :class:`~structlin.matrix.FeatureMatrix` (a row per token).
    A token is a word string, or, when the feature set reads more input columns than the word (its
    ``fields``, e.g. ``("word", "pos")`` for chunking), the tuple of those columns; every column has
    its own :class:`_ColumnFeatures` for the templates that read it.
    """

    def __init__(self, feature_set: FeatureSet, hasher: FeatureHasher):
        self.feature_set = feature_set
        self.hasher = hasher
        documents = [s.name for s in feature_set.templates if template(s.name).kind == "document"]
        if documents:
            raise StructlinError(f"feature set {feature_set.name!r} holds document templates ({', '.join(documents)}); "
                                 "it is for classifiers, not taggers")
        if feature_set.random_fourier is not None:
            raise StructlinError(f"feature set {feature_set.name!r} has random_fourier features; they are for "
                                 "classifiers, not taggers")
        for key, given, default in (("values", feature_set.values, "count"),
                                    ("normalize", feature_set.normalize, "none"),
                                    ("token_pattern", feature_set.token_pattern, None)):
            if given != default:  # what a document's vector is made of: a tagger's token features have none of it
                raise StructlinError(f"feature set {feature_set.name!r} sets {key} = {given!r}, which applies to "
                                     "documents (classifiers), not taggers")
        self.fields = feature_set.fields
        self._columns = [(j, _ColumnFeatures(feature_set, field, hasher))
                         for j, field in enumerate(self.fields)
                         if any(s.column == field for s in feature_set.templates)]

    def __reduce__(self):
        """Pickled as its feature set and hash: the tables of the word types seen so far are a cache, which
        fills again as words come."""
        return type(self), (self.feature_set, self.hasher)

    def bias_bucket(self) -> int | None:
        """The hashed bucket of the feature set's ``bias`` feature, which every token has, or None
        without a ``bias`` template (the feature set's other templates do not change it)."""
        spec = next((s for s in self.feature_set.templates if s.name == "bias"), None)
        if spec is None:
            return None
        alone = TokenFeatureExtractor(replace(self.feature_set, templates=(spec,)), self.hasher)
        return int(alone.extract([["x"]]).indices[0])

    def extract(self, sentences) -> FeatureMatrix:
        """Features of every token of every sentence (each a list of tokens)."""
        return self.factored(sentences).matrix()

    def factored(self, sentences, *, compact: bool = False) -> FactoredMatrix:
        """The features of :meth:`extract` as a :class:`~structlin.matrix.FactoredMatrix`: one table per column and
        offset of the feature values of word types, selected by each position's neighbour there, plus a table
        with a row per position for the templates that read a sentence (n-grams, context templates).
        ``compact``: the type tables hold only the types these sentences use (for products, not for
        :meth:`~structlin.matrix.FactoredMatrix.matrix`, which needs no copy of them)."""
        sentences = [list(tokens) for tokens in sentences]
        lengths = np.array([len(tokens) for tokens in sentences], dtype=np.int64)
        if len(self.fields) == 1:
            strings = [sentences]
        else:
            width = len(self.fields)
            for k, tokens in enumerate(sentences):
                bad = next((i for i, t in enumerate(tokens) if not (isinstance(t, (tuple, list)) and len(t) == width)), None)
                if bad is not None:
                    raise StructlinError(f"sentence {k + 1}, token {bad + 1}: expected a ({', '.join(self.fields)}) "
                                         f"tuple, got {tokens[bad]!r}")
            strings = [[[t[j] for t in tokens] for tokens in sentences] for j in range(width)]
        sources = [source for j, column in self._columns for source in column.sources(strings[j], lengths, compact)]
        return FactoredMatrix([table for table, _ in sources], [select for _, select in sources], lengths)


class _ColumnFeatures:
    """The features of the templates reading one input column, for every token.

    Types (distinct strings of the column) are numbered as they are first seen; for every offset a
    table holds each type's hashed features at that offset (types 0 and 1 are the boundary markers
    ``<S>``/``</S>``).
    """

    def __init__(self, feature_set: FeatureSet, column: str, hasher: FeatureHasher):
        self.hasher = hasher
        specs = [s for s in feature_set.templates if s.column == column]
        token_specs = [s for s in specs if not template(s.name).context]
        self._token = [(s, template(s.name).function, feature_set.arguments(s)) for s in token_specs]
        self._context = [(s.key, template(s.name).function, feature_set.arguments(s)) for s in specs
                         if template(s.name).context and s.name != "ngram"]
        self._ngrams = [(hasher.string(s.key), dict(s.params)) for s in specs if s.name == "ngram"]
        self._ngrams = [(code, params.get("of", "lower"), tuple(params.get("span", (-1, 0)))) for code, params in self._ngrams]
        self._offsets = sorted({o for s in token_specs for o in s.offsets} | {o for _, _, span in self._ngrams for o in span})
        # name_codes[j][k]: H("key@offset") of token template k at offset j, or None if not applied there.
        self._name_codes = [[hasher.string(f"{s.key}@{o}") if o in s.offsets else None for s, _, _ in self._token]
                            for o in self._offsets]
        # value_codes[of]: H(value) of single-valued token template ``of`` for every word type (n-grams).
        self._value_codes = {of: np.zeros(0, np.uint64) for _, of, _ in self._ngrams}
        self._type_ids: dict[str, int] = {}
        self._n_types = 0
        self._tables = [(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32)) for _ in self._offsets]
        self._add_types([BEFORE, AFTER], markers=True)

    @staticmethod
    def _results(results: list) -> tuple[np.ndarray, list[str], list[float] | None]:
        """How many values each of a token template's ``results`` gives, the values, and their weights (None: all
        1)."""
        kinds = set(map(type, results))
        if kinds <= {str}:  # one value each: the common case, without a test per result
            return np.ones(len(results), dtype=np.int64), results, None
        if kinds <= {list, type(None)}:  # lists of strings (prefixes, suffixes, cluster paths), or nothing
            counts = np.fromiter((0 if r is None else len(r) for r in results), dtype=np.int64, count=len(results))
            return counts, [v if type(v) is str else str(v) for r in results if r is not None for v in r], None
        pairs = [feature_values(r) for r in results]
        counts = np.fromiter(map(len, pairs), dtype=np.int64, count=len(pairs))
        return counts, [v for ps in pairs for v, _ in ps], [w for ps in pairs for _, w in ps]

    def _records(self, words: list[str], markers: bool):
        """``(type, template index, value, weight)`` columns for every feature value of ``words``,
        grouped by type.  A marker type has its own name as the value of every template."""
        owner, spec, values, weights = [], [], [], []
        for k, (token_spec, fn, params) in enumerate(self._token):
            with template_errors(token_spec.key):
                counts, block, real = self._results(words if markers else [fn(word, **params) for word in words])
            owner.append(np.repeat(np.arange(len(counts)), counts))
            spec.append(np.full(len(block), k, dtype=np.int64))
            values.extend(block)
            weights.append(np.ones(len(block), dtype=np.float32) if real is None else np.array(real, dtype=np.float32))
        owner = np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64)
        order = np.argsort(owner, kind="stable")
        codes = self.hasher.strings(values)
        spec = np.concatenate(spec) if spec else np.zeros(0, dtype=np.int64)
        weights = np.concatenate(weights) if weights else np.zeros(0, dtype=np.float32)
        return owner[order], spec[order], codes[order], weights[order]

    def _add_types(self, words: list[str], markers: bool = False) -> None:
        """Number new word types and append their hashed features to every offset's table."""
        if not markers:
            self._type_ids.update(zip(words, range(self._n_types, self._n_types + len(words))))
        owner, spec, codes, weights = self._records(words, markers)
        for j, names in enumerate(self._name_codes):
            applies = np.array([n is not None for n in names], dtype=bool)
            keep = applies[spec] if len(spec) else np.zeros(0, dtype=bool)
            name_codes = np.array([n or 0 for n in names], dtype=np.uint64)[spec[keep]]
            buckets, signs = self.hasher.combine(name_codes, codes[keep])
            ptr, old_buckets, old_values = self._tables[j]
            counts = np.bincount(owner[keep], minlength=len(words))
            ptr = np.concatenate([ptr, ptr[-1] + np.cumsum(counts)])
            self._tables[j] = (ptr, np.concatenate([old_buckets, buckets]), np.concatenate([old_values, signs * weights[keep]]))
        for of, codes in self._value_codes.items():
            new = np.array([self._single_value_code(of, w, markers) for w in words], dtype=np.uint64)
            self._value_codes[of] = np.concatenate([codes, new])
        self._n_types += len(words)

    def _single_value_code(self, of: str, word: str, marker: bool) -> int:
        if marker:
            return self.hasher.string(word)
        values = feature_values(template(of).function(word))
        if len(values) != 1:
            raise StructlinError(f"ngram of {of!r}: the template gave {len(values)} values for {word!r} (expected one)")
        return self.hasher.string(values[0][0])

    def sources(self, sentences: list[list[str]], lengths: np.ndarray,
                compact: bool) -> list[tuple[FeatureMatrix, np.ndarray | None]]:
        """The sources of :meth:`TokenFeatureExtractor.factored` for ``sentences`` (lists of this column's strings):
        ``(table, select)`` pairs, the table of every offset with each position's type there, then a table with
        a row per position (select None) for every n-gram and context template."""
        type_ids = self._type_ids
        flat = [w for words in sentences for w in words]
        try:
            ids = list(map(type_ids.get, flat))
        except TypeError:  # an unhashable token (a list of words): no string either
            ids = None
        if ids is None or None in ids:
            new = [] if ids is None else list(dict.fromkeys(w for w, i in zip(flat, ids) if i is None))
            if ids is None or not all(isinstance(w, str) for w in new):
                k, i = next((k, i) for k, words in enumerate(sentences) for i, w in enumerate(words) if not isinstance(w, str))
                raise StructlinError(f"sentence {k + 1}, token {i + 1}: expected a token string, got {sentences[k][i]!r}")
            self._add_types(new)
            ids = list(map(type_ids.__getitem__, flat))
        tokens = np.array(ids, dtype=np.int64)
        n = len(tokens)
        instance = np.repeat(np.arange(len(sentences)), lengths)
        place = np.arange(n) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        position = np.arange(n)

        def neighbours(o: int) -> np.ndarray:
            """The type at offset ``o`` of every position (a boundary marker beyond the sentence)."""
            inside = (place + o >= 0) & (place + o < lengths[instance])
            return np.where(inside, tokens[np.clip(position + o, 0, max(n - 1, 0))], 0 if o < 0 else 1)

        at = {o: neighbours(o) for o in self._offsets}
        used = None
        if compact:  # the types these sentences use, and the markers, renumbered in order
            used = np.zeros(self._n_types, dtype=bool)
            used[:2] = True
            used[tokens] = True
            renumber = np.cumsum(used) - 1
            used = np.flatnonzero(used)
        sources = []
        for j, o in enumerate(self._offsets):
            ptr, buckets, values = self._tables[j]
            if used is None:
                sources.append((_rows(ptr, buckets, values), at[o]))
            else:
                entries = ranges(ptr[used], ptr[used + 1])
                counts = ptr[used + 1] - ptr[used]
                sources.append((_rows(np.concatenate([[0], np.cumsum(counts)]), buckets[entries], values[entries]),
                                renumber[at[o]]))
        for code, of, span in self._ngrams:
            codes = np.full(n, code, dtype=np.uint64)
            for o in span:
                codes = self.hasher.mix(codes, self._value_codes[of][at[o]])
            buckets, signs = self.hasher.buckets(codes)
            sources.append((_rows(np.arange(n + 1), buckets, signs), None))
        for key, fn, params in self._context:
            sources.append((self._context_table(key, fn, params, sentences), None))
        return sources

    def _context_table(self, key, fn, params, sentences) -> FeatureMatrix:
        """The features of context template ``key`` at every position of ``sentences``, a row per position."""
        def per_position():
            for words in sentences:
                results = fn(words, **params)
                if len(results) != len(words):
                    raise StructlinError(f"context template {key!r} returned {len(results)} values for a "
                                         f"sentence of {len(words)} tokens (expected one per token)")
                yield from results

        counts, codes, weights = hash_results(self.hasher, key, per_position())
        buckets, signs = self.hasher.buckets(codes)
        return _rows(np.concatenate([[0], np.cumsum(counts)]), buckets, signs * weights)


def _rows(indptr, buckets, values) -> FeatureMatrix:
    """A table of feature rows (CSR), not grouped into instances: one instance holds them all."""
    return FeatureMatrix(indptr, buckets, values, [len(indptr) - 1])


# --- one position, named (for explanations) ---------------------------------------------------------


@dataclass(frozen=True)
class NamedFeature:
    """One feature of an instance spelt out: the ``key`` of its template entry, its name as people read it
    (``suffix(lengths=[1, 2, 3])@-1=ing``), its 64-bit code (bucket and sign: :meth:`FeatureHasher.buckets`)
    and its value before the sign."""

    template: str
    name: str
    code: int
    value: float


def feature_name(name: str, value: str) -> str:
    """The feature ``name=value`` as people read it: a value that begins or ends with white space (a character
    n-gram's padding) is quoted."""
    return f"{name}={value!r}" if value[:1].isspace() or value[-1:].isspace() else f"{name}={value}"


def position_features(feature_set: FeatureSet, hasher: FeatureHasher, tokens: Sequence,
                      index: int) -> list[NamedFeature]:
    """The features :class:`TokenFeatureExtractor` gives token ``index`` of ``tokens`` (word strings, or tuples of
    the set's ``fields``), named and hashed as it hashes them in bulk: a token template's ``key@offset=value``
    (a boundary marker as the value beyond the sentence), an n-gram's ``key=v1|v2`` (its code mixes ``H(key)``
    with each value's code in turn) and another context template's ``key=value``."""
    fields = feature_set.fields
    columns = {field: [t if len(fields) == 1 else t[j] for t in tokens] for j, field in enumerate(fields)}
    named, ngrams = [], []  # named: (template key, name, value string, real value)
    for spec in feature_set.templates:
        words, tpl, params = columns[spec.column], template(spec.name), feature_set.arguments(spec)
        if spec.name == "ngram":
            of, span = template(params.get("of", "lower")).function, params.get("span", (-1, 0))
            values = [feature_values(of(words[index + o]))[0][0] if 0 <= index + o < len(words)
                      else BEFORE if o < 0 else AFTER for o in span]
            code = hasher.string(spec.key)
            for value in values:
                code = int(hasher.mix(code, hasher.string(value)))
            ngrams.append(NamedFeature(spec.key, feature_name(spec.key, "|".join(values)), code, 1.0))
        elif tpl.context:
            named += [(spec.key, spec.key, v, w) for v, w in feature_values(tpl.function(words, **params)[index])]
        else:
            for o in spec.offsets:
                inside = 0 <= index + o < len(words)
                pairs = (feature_values(tpl.function(words[index + o], **params)) if inside
                         else [(BEFORE if o < 0 else AFTER, 1.0)])
                named += [(spec.key, f"{spec.key}@{o}", v, w) for v, w in pairs]
    codes = hasher.mix(hasher.strings([n for _, n, _, _ in named]), hasher.strings([v for _, _, v, _ in named]))
    return [NamedFeature(key, feature_name(name, value), int(code), weight)
            for (key, name, value, weight), code in zip(named, codes)] + ngrams
