"""The exceptions structlin raises for bad input.

Every error a user can cause derives from :class:`StructlinError`; the command line prints such an
error as one line on stderr (no traceback) and exits non-zero.
"""

from __future__ import annotations


class StructlinError(Exception):
    """Base class of all errors caused by input, files or options (not by bugs)."""


class CorpusFormatError(StructlinError, ValueError):
    """Malformed corpus input, located by file and line (or by instance index).

    ``str(err)`` reads ``"PATH:LINE: what was wrong (expected ...)"``.  An error about one of the instances a model
    was given (not read from a file) names it by ``instance``, a pair (what it is, its 1-based number: ``("document",
    3)``), and ``detail`` says what is wrong with it, so that whoever read the instance from a file can say where
    (:meth:`located`).
    """

    def __init__(self, path: object, line: int | None, message: str, *, instance: tuple[str, int] | None = None,
                 detail: str | None = None):
        self.path = str(path)
        self.line = line
        self.message = message
        self.instance, self.detail = instance, detail
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")

    @classmethod
    def of_instance(cls, what: str, unit: str, number: int, detail: str) -> CorpusFormatError:
        """The error about ``unit`` ``number`` (1-based) of ``what`` (``"gold data"``): ``"<what>: <unit> <number>
        <detail>"``."""
        return cls(what, None, f"{unit} {number} {detail}", instance=(unit, number), detail=detail)

    def located(self, path: object, line: int | None) -> CorpusFormatError:
        """This error about an instance, said of the place it was read from: ``"PATH:LINE: the <unit> <detail>"``."""
        return CorpusFormatError(path, line, f"the {self.instance[0]} {self.detail}")


class OptionValueError(StructlinError, ValueError):
    """A setting that does not fit the data it is used with (e.g. a cost matrix over other labels)."""


class ModelFormatError(StructlinError, ValueError):
    """A model file that cannot be loaded: truncated, tampered with, or of another format version."""


class UnknownNameError(StructlinError, KeyError):
    """A name (learner, decoder, template, feature set, corpus ...) that is not registered.

    The message lists the accepted names, after a ``note`` on the name if any.
    """

    def __init__(self, kind: str, name: str, accepted, note: str = ""):
        self.kind = kind
        self.name = name
        self.accepted = sorted(accepted)
        super().__init__(f"unknown {kind} {name!r}{note}; accepted: {', '.join(self.accepted)}")

    def __str__(self) -> str:  # KeyError would add quotes around the message
        return self.args[0]


class SplitNeededError(UnknownNameError):
    """A corpus of a file per split read without naming one: the message says so and lists the splits."""

    def __init__(self, corpus: str, accepted):
        super().__init__("split", None, accepted)
        self.args = (f"corpus {corpus!r} has a file per split: name one (the command line: --corpus {corpus} --split "
                     f"NAME); accepted: {', '.join(self.accepted)}",)


class CorpusNotFoundError(StructlinError, FileNotFoundError):
    """A corpus file that is neither present locally nor downloadable."""


class ChecksumError(StructlinError):
    """A corpus file whose SHA-256 differs from the catalog's: a download, or a local copy."""


class LocalCopyError(ChecksumError):
    """A file in the data directory whose SHA-256 is neither the catalog's ``sha256`` nor one of its
    ``local_sha256``: another version of the corpus, or a damaged copy."""


class UnknownOptionError(StructlinError, TypeError):
    """A reading option that the corpus's format does not take (a ``TypeError``, as for any bad
    keyword argument)."""


class UnseenLabelWarning(UserWarning):
    """Dev (or gold) data with labels the training data never has: no model can predict them, so they count as
    errors in every dev accuracy and score (the run goes on)."""


class UsageError(StructlinError, ValueError):
    """Command-line options that contradict each other (an ``--output`` that is one of the inputs): the
    command line exits with status 2, as for the option values its parser refuses."""


class OutputError(StructlinError, OSError):
    """A file that cannot be written: its folder is missing or read-only, it is a folder or a read-only
    file, or the disk is full.  ``str(err)`` reads ``"PATH: what is wrong"``, ``PATH`` as the caller gave it."""

    def __init__(self, path: object, message: str):
        super().__init__(f"{path}: {message}")
        self.filename = str(path)

    def __str__(self) -> str:  # OSError would show the filename in its own format
        return self.args[0]


class NotFittedError(StructlinError, ValueError, AttributeError):
    """A model used before :meth:`fit` or ``load``: a ``ValueError`` and an ``AttributeError``, as
    scikit-learn's ``NotFittedError`` is (so ``hasattr(model, "classes_")`` is False before fit)."""


class CapabilityError(StructlinError, TypeError, AttributeError):
    """A method the model's learner cannot serve: probabilities from a learner that gives none, ``partial_fit``
    with a batch learner.  An ``AttributeError``, so that ``hasattr(model, "predict_proba")`` or
    ``hasattr(model, "partial_fit")`` is False for such a model (scikit-learn hides what an estimator cannot
    offer), and a ``TypeError``, as for any call an object does not take."""
