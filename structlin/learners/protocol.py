"""The learner protocol: what every learner declares as data, and the behaviour it gets from that.

A learner is a class with

* ``name`` and ``summary`` (the registry key and the line ``structlin train --help`` prints);
* ``capabilities`` (:class:`Capabilities`): whether it trains online, gives probabilities, needs a
  bias feature, scores inputs from arrays of its own, which hypotheses it can predict with, and
  whether it handles label chains;
* ``options`` (a tuple of :class:`Option`): every hyper-parameter with its type, default, range and
  help.  The constructor, ``get_params`` / ``set_params``, the model file's record of the
  hyper-parameters and the command line's options are all generated from this one declaration;
* ``history_fields`` (:class:`HistoryField`): what its history records hold besides the common fields
  of :mod:`.training`, and how a person reads them;
* ``fit(joint, decoder, X, y, dev=None, *, bias_row=None)`` and, when ``capabilities.online``,
  ``partial_fit(joint, decoder, X, y)``.  A fit that chooses a setting from the data (an option left
  at None and chosen on dev, a margin scaled to the features) records it in ``chosen_`` and the
  candidates it scored in ``candidates_``; a model file keeps both, and ``structlin train`` and
  ``structlin evaluate`` show them.

Adding a learner is one module with such a class and one line in :data:`structlin.learners.LEARNERS`.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .. import memory
from ..distributed import check_client
from ..errors import OptionValueError


@dataclass(frozen=True)
class Capabilities:
    """What a learner can do, as data that models and the command line read instead of probing it.

    ``online``: :meth:`partial_fit` continues a run one epoch at a time.  ``probabilistic``: its scores
    are ``log p(y|x)`` up to a constant per instance, so the decoder's marginals are probabilities.
    ``needs_bias``: ``fit`` needs ``bias_row``, the weight row of a feature every instance has with the
    same value (a model supplies one when its feature set does not).  ``counts``: it models how often
    each feature occurs (multinomial naive Bayes), so a document model gives it the feature set's counts,
    neither weighted nor normalised.  ``presence``: it models which features an instance has, so a model
    gives it every feature value as ±1 (the sign of the value).  ``scores_itself``: it predicts from
    arrays of its own (``scores(joint, X)``, ``model_arrays``, their ``array_specs`` and ``restore``)
    rather than from a weight vector.  ``hypotheses``: the hypotheses one trained model can predict with,
    chosen by its ``hypothesis`` option.  ``sequences``: it trains on label chains, not only on one label
    per instance.  ``sparse``: a weight it never touched stays 0, so it keeps only the rows it touched, or
    with many labels the (feature, label) pairs (:func:`~.run_weights.weight_store`,
    :func:`~.run_weights.stores_pairs`).
    ``distributed``: given a Dask ``client`` (its option :data:`CLIENT`), ``fit`` trains data-parallel on
    that cluster (:mod:`structlin.distributed`).  ``streams``: ``fit`` takes a
    :class:`~structlin.featurecache.ShardedCorpus` (a corpus on disk, its gold ids inside, ``y`` None) for ``X``
    and, as dev, ``(ShardedCorpus, None)``, reading it a segment or a shard at a time.
    """

    online: bool = False
    probabilistic: bool = False
    needs_bias: bool = False
    counts: bool = False
    presence: bool = False
    scores_itself: bool = False
    hypotheses: tuple[str, ...] = ()
    sequences: bool = True
    sparse: bool = False
    distributed: bool = False
    streams: bool = False


#: The largest size of a number option without a maximum of its own: learners scale margins, costs and penalties
#: by the data (mean ‖x‖², the number of instances) and square them, and a finite 1e308 overflows there to inf and
#: NaN, a model trained on nothing; 1e12 leaves those products far inside float64's range, and no setting of sense
#: comes near it.
FLOAT_MAX = 1e12


@dataclass(frozen=True)
class Option:
    """One hyper-parameter: its name, type (``int``, ``float``, ``bool`` or ``str``), default and help.

    ``choices`` limits a string; ``minimum`` / ``maximum`` bound a number (``exclusive_minimum`` /
    ``exclusive_maximum`` make a bound strict); ``nullable`` accepts None (off, or the solver's default:
    the help says which).  ``special`` names other values accepted as they are (``gamma = "scale"``, a
    callable kernel).  ``untuned`` is the value of an option whose default (None) is chosen on dev, when
    choosing is turned off (``structlin train --no-tune``).  ``convert`` makes a structured value (a cost
    matrix) of an ``object`` option the option's value, or checks an object (a Dask client), raising
    :class:`OptionValueError` when it cannot.  ``stored = False`` marks a setting
    of the run rather than of the model (the callback, the progress bar, the Dask client): it is not written
    to a model file.  ``flag`` is its command-line option (default ``--name`` with dashes); ``parse`` turns that
    option's text into a value (default: the type); ``cli = False`` keeps it off the command line.
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    nullable: bool = False
    special: tuple = ()
    stored: bool = True
    cli: bool = True
    flag: str | None = None
    parse: Callable[[str], Any] | None = None
    convert: Callable[[Any], Any] | None = None
    metavar: str | None = None
    untuned: Any = None

    @property
    def command_line_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    def describe_range(self) -> str:
        """The accepted values in words, e.g. ``positive``, ``at least 1``, ``in [0, 1)``, ``one of pa, pa-i``."""
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            shown = "d" if self.type is int else "g"
            return (f"in {'(' if self.exclusive_minimum else '['}{low:{shown}}, {high:{shown}}"
                    f"{')' if self.exclusive_maximum else ']'}")
        if low == 0:
            return "positive" if self.exclusive_minimum else "non-negative"
        if low is not None:
            return f"{'greater than' if self.exclusive_minimum else 'at least'} {low:g}"
        if high is not None:
            return f"{'less than' if self.exclusive_maximum else 'at most'} {high:g}"
        return ""

    def check(self, value):
        """``value`` as this option's type; a value of the wrong type or out of range raises
        :class:`OptionValueError` naming the option and what it accepts."""
        if value is None:
            if self.nullable or self.default is None:
                return None
            raise OptionValueError(f"{self.name} must be given (None is not accepted)")
        if (isinstance(value, str) and value in self.special) or (callable(value) and "callable" in self.special):
            return value
        if self.convert is not None:
            return self.convert(value)
        if self.type is bool:
            if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (0, 1):
                raise OptionValueError(f"{self.name} must be true or false, got {value!r}")
            return bool(value)
        if self.type in (int, float):  # numpy's numbers too (a grid from np.arange)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or (
                    self.type is int and not float(value).is_integer()):
                raise OptionValueError(f"{self.name} must be {'an integer' if self.type is int else 'a number'}, "
                                       f"got {value!r}")
            value = self.type(value)
            too_large = (self.type is float and self.maximum is None and math.isfinite(value)
                         and abs(value) > FLOAT_MAX)
            if not math.isfinite(value) or not self._in_range(value) or too_large:
                size = f"at most {FLOAT_MAX:g} in size" if too_large else "finite" if self.type is float else ""
                accepted = " and ".join(filter(None, [self.describe_range(), size]))
                raise OptionValueError(f"{self.name} must be {accepted}, got {value}")
            return value
        if self.type is object:  # only None and the special values (a callback)
            raise OptionValueError(f"{self.name} must be None or a callable, got {value!r}")
        if not isinstance(value, self.type):
            raise OptionValueError(f"{self.name} must be a {self.type.__name__}, got {value!r}")
        if self.choices and value not in self.choices:
            raise OptionValueError(f"{self.name} must be {self.describe_range()}, got {value!r}")
        return value

    def _in_range(self, value: float) -> bool:
        low, high = self.minimum, self.maximum
        if low is not None and (value <= low if self.exclusive_minimum else value < low):
            return False
        return high is None or (value < high if self.exclusive_maximum else value <= high)


@dataclass(frozen=True)
class HistoryField:
    """A learner-specific field of its history records: the key, the words a person reads beside the
    value, and the value's format (``None`` values are not shown)."""

    key: str
    label: str
    format: str = "{}"


class Learner:
    """The base of every learner: a constructor, ``get_params`` / ``set_params`` and ``params`` generated
    from ``options``.  Subclasses declare the class attributes of the module docstring, check options
    that constrain each other in :meth:`_check_options`, and implement ``fit``."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities()
    options: ClassVar[tuple[Option, ...]] = ()
    history_fields: ClassVar[tuple[HistoryField, ...]] = ()
    #: How many float64 vectors of the joint map's size (a weight for every feature row and label) a run holds at once
    #: at the least — its weights, the best kept, a gradient: a fit whose vectors cannot fit in memory is refused
    #: before it starts (:meth:`require_memory`).  0: its memory grows with what it learns, or it checks its own.
    dense_vectors: ClassVar[int] = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        names = [option.name for option in cls.options]
        if len(set(names)) != len(names):
            raise TypeError(f"{cls.__name__} declares an option twice")
        # scikit-learn's get_params and inspect read the constructor's signature: give them the options
        # (``epochs`` may also come first without its name).
        parameters = [inspect.Parameter(option.name, inspect.Parameter.POSITIONAL_OR_KEYWORD
                                        if k == 0 and option.name == "epochs" else inspect.Parameter.KEYWORD_ONLY,
                                        default=option.default) for k, option in enumerate(cls.options)]
        cls.__signature__ = inspect.Signature(parameters)

    def __init__(self, *args, **params):
        if args:
            if len(args) > 1 or not self.options or self.options[0].name != "epochs" or "epochs" in params:
                raise TypeError(f"{type(self).__name__} takes only epochs without its name, got {len(args)} "
                                "positional arguments")
            params["epochs"] = args[0]
        declared = {option.name: option for option in self.options}
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise OptionValueError(f"learner {self.name!r} has no option {', '.join(unknown)} (its options: "
                                   f"{', '.join(declared)})")
        for option in self.options:
            setattr(self, option.name, option.check(params.get(option.name, option.default)))
        self._check_settings()
        self.chosen_: dict = {}  # settings a fit chose from the data (a smoothing chosen on dev, a scaled margin)
        self.candidates_: list[dict] = []  # the candidates a fit scored on dev, each with its dev_accuracy

    @classmethod
    def option(cls, name: str) -> Option:
        return next(option for option in cls.options if option.name == name)

    def _check_settings(self) -> None:
        """:meth:`_check_options`, and with a Dask ``client`` :meth:`check_distributes`."""
        self._check_options()
        if getattr(self, "client", None) is not None:
            self.check_distributes()

    def _check_options(self) -> None:
        """Refuse combinations of options that exclude each other (each option alone is already checked)."""

    def get_params(self, deep: bool = True) -> dict:
        """Every option's value (scikit-learn's ``get_params``)."""
        return {option.name: getattr(self, option.name) for option in self.options}

    def set_params(self, **params) -> Learner:
        """Change options (each checked as in the constructor; what was trained stays); returns the learner."""
        declared = {option.name: option for option in self.options}
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise OptionValueError(f"learner {self.name!r} has no option {', '.join(unknown)}")
        for name, value in params.items():
            setattr(self, name, declared[name].check(value))
        self._check_settings()
        return self

    def refit(self, joint, decoder, X, y, *, epochs: int, chosen: dict, bias_row: int | None = None) -> Learner:
        """Train on all of ``X`` with what was chosen on a held-out part of it (scikit-learn's refit): ``epochs``
        and the ``chosen`` settings, which hold for this fit only."""
        before = {name: getattr(self, name) for name in ("epochs", *chosen)}
        try:
            self.set_params(epochs=epochs, **chosen)
            self.weights_ = None  # nor the held-out run's model
            self.fit(joint, decoder, X, y, None, bias_row=bias_row)
        finally:
            self.set_params(**before)
        return self

    def require_memory(self, joint) -> None:
        """Refuse (``OptionValueError``) a fit whose :attr:`dense_vectors` cannot fit in the memory available, naming
        their size and the ways out (:func:`structlin.memory.require`)."""
        vectors = self._dense_vectors(joint)
        if vectors:
            memory.require(8 * vectors * joint.size,
                           f"{self.name}'s training ({vectors} vectors of {joint.n_rows:,} feature rows × "
                           f"{joint.n_labels:,} labels)",
                           f"fewer hash buckets (--bits), fewer labels, or {memory.PAIRS_LEARNER}")

    def _dense_vectors(self, joint) -> int:
        """:attr:`dense_vectors` of a run over ``joint`` (a learner whose settings or labels change it says so)."""
        return self.dense_vectors

    def held_out_score(self, joint, decoder, X, y, held: tuple, *, bias_row: int | None = None) -> float:
        """The best accuracy on the held-out instances ``held = (X_held, y_held)`` of a fit on ``X`` (the learner's
        model is then that fit's; a learner that can score its choices without making them may leave it unmade)."""
        self.fit(joint, decoder, X, y, held, bias_row=bias_row)
        return self.best_dev_accuracy()

    def best_dev_accuracy(self) -> float:
        """The best dev accuracy of the run that is the model (``history_``); 0 when none was measured."""
        return max((r["dev_accuracy"] for r in self.history_ if r["dev_accuracy"] is not None), default=0.0)

    def _keep_best_run(self, name: str, runs: Iterable) -> None:
        """Choose the option ``name`` on dev: ``runs`` yields each candidate value once a run with it is the
        learner's model (``weights_``, ``history_``, ``best_epoch_``, ``stopped_``, ``chosen_``); the run of the
        best dev accuracy is kept (the first of equals), and ``candidates_`` holds every value's score."""
        best, candidates = None, []
        for value in runs:
            score = self.best_dev_accuracy()
            candidates.append({name: value, "dev_accuracy": score})
            if best is None or score > best[0]:  # one run's weights kept at a time
                best = (score, value, self.weights_, self.history_, self.best_epoch_, self.stopped_, self.chosen_)
            self.weights_ = None
        self.candidates_ = candidates
        _, value, self.weights_, self.history_, self.best_epoch_, self.stopped_, chosen = best
        self.chosen_ = {name: value, **chosen}

    def check_streams(self) -> None:
        """Refuse, before anything is read, settings that keep something per training instance in memory and so
        cannot train from a corpus on disk (``stream``; a learner without ``capabilities.streams`` is refused by
        the model); ``OptionValueError`` naming the setting."""

    def check_distributes(self) -> None:
        """Refuse, before a cluster is started, settings that keep state tied to one sequence of visits or to the
        instances where they are, and so cannot train on a Dask cluster (a learner without
        ``capabilities.distributed`` is refused by its caller); ``OptionValueError`` naming the setting."""

    def support_size(self) -> int | None:
        """How many training instances a dual model keeps to score with (None: the model is its weights)."""
        return None

    def params(self) -> dict:
        """The hyper-parameters, as a model file stores them: the stored options, JSON values."""
        return {option.name: getattr(self, option.name) for option in self.options if option.stored}

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.get_params().items() if not is_default(v, self.option(k).default)}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


def is_default(value, default) -> bool:
    """Whether a parameter's ``value`` is its ``default`` (the same object, or an equal scalar): what a ``repr``
    leaves out."""
    return value is default or (isinstance(value, (bool, int, float, str)) and value == default)


def with_defaults(options: tuple[Option, ...], **defaults) -> tuple[Option, ...]:
    """``options`` with the defaults of the named ones replaced (a learner's own default for a shared option)."""
    unknown = set(defaults) - {option.name for option in options}
    if unknown:
        raise TypeError(f"no option {', '.join(sorted(unknown))} to give a default")
    return tuple(replace(option, default=defaults[option.name]) if option.name in defaults else option
                 for option in options)


def model_options(cls: type[Learner], defaults: dict, given: dict) -> dict:
    """The options a model makes a learner of class ``cls`` with, of those ``cls`` declares: the model's
    ``defaults``, then the options ``given``.  A value given for an option ``X`` drops the default of ``relative_X``,
    which it excludes (``margin`` / ``relative_margin``, ``l2`` / ``relative_l2``, ``C`` / ``relative_C``); both given
    are refused (:class:`OptionValueError`)."""
    declared = {option.name for option in cls.options}
    excluded = {f"relative_{name}" for name in given}
    both = sorted(excluded & given.keys())
    if both:  # whatever the values (a learner can tell a relative value from its default only)
        raise OptionValueError(f"give {both[0].removeprefix('relative_')} or {both[0]}, not both (a "
                               f"{both[0].removeprefix('relative_')} is used as it is)")
    options = {**{name: value for name, value in defaults.items() if name not in excluded}, **given}
    return {name: value for name, value in options.items() if name in declared}


# --- options several learners share (a learner may give one its own default: with_defaults) ----------

EPOCHS = Option("epochs", int, 10, "passes over the training data", minimum=1)
#: The largest seed (32 bits, as scikit-learn's ``random_state``): a larger one is refused, not reduced.
SEED_MAX = 2**32 - 1
SEED = Option("seed", int, 0, "seed of the shuffling (and of every other random choice of the run)", minimum=0,
              maximum=SEED_MAX)
SHUFFLE = Option("shuffle", bool, True, "visit the instances in a seeded random order each epoch", cli=False)
BATCH_SIZE = Option("batch_size", int, 1, "instances decoded with the same weights before their updates "
                    "are applied (a batch larger than the data is all of it)", minimum=1, maximum=2**31 - 1)
PATIENCE = Option("patience", int, None, "stop after this many dev evaluations without improvement "
                  "(unset: never)", minimum=1, nullable=True)
EVAL_EVERY = Option("eval_every", int, 1, "evaluate on dev every this many epochs (iterations), and at the last",
                    minimum=1)
CALLBACK = Option("callback", object, None, "callback(record, learner) after every step; a true return stops "
                  "the run", nullable=True, special=("callable",), stored=False, cli=False)
PROGRESS = Option("progress", bool, None, "show a progress bar (default: when stderr is a terminal)",
                  nullable=True, stored=False, cli=False)
CLIENT = Option("client", object, None, "a dask.distributed.Client to train on, data-parallel (declared by the "
                "learners that can: capabilities.distributed)", nullable=True, stored=False, cli=False,
                convert=check_client)
COST = Option("cost", float, 1.0, "the cost of a wrong token (a wrong document) in the margin", minimum=0,
              exclusive_minimum=True)
RUN_OPTIONS = (SEED, SHUFFLE, BATCH_SIZE, PATIENCE, EVAL_EVERY, CALLBACK, PROGRESS)
