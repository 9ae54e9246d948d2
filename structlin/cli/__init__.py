"""The ``structlin`` command: train, evaluate and apply taggers and classifiers; describe corpora.

The command never shows a traceback.  :func:`main` is its one boundary: whatever ends a command is
one line on stderr and an exit status:

* 2: a usage error: an option value the parser refuses on its own (with the library's own check where
  there is one: ``--bits``, ``--encoding``, ``--columns``), or a :class:`~structlin.errors.UsageError`
  (an ``--output`` that is one of the inputs; a learner's option another learner takes, options that exclude each
  other, a ``--grid`` item or candidate the learner refuses);
* 1: an error of the input: a :class:`~structlin.errors.StructlinError` naming the file and the line,
  member or option (an option that does not fit the data is one), a file that cannot be read or
  written, an unknown codec, undecodable text, a module a feature set imports that cannot be imported,
  too little memory;
* 70 (``EX_SOFTWARE``): any other exception, a bug: ``structlin: internal error: ...``; with
  ``STRUCTLIN_DEBUG=1`` in the environment it is raised with its traceback instead;
* 130 on Ctrl-C, 143 on SIGTERM (raised as ``SystemExit`` so that temporary files are removed), and 0
  when the reader of standard output goes away (``structlin tag ... | head``), as for Unix tools.

Standard streams the shell closed or cannot write: a closed standard input or output ends a command that uses it
with one line naming the option that replaces it (``--input``, ``--output``); a write error on standard output (a
full disk) names it; a closed standard error drops the messages, and the exit status stays.

A warning (dev labels the training data never has, an empty label folder) is one line on stderr,
``structlin: warning: ...``, and the command goes on.

No file is destroyed: outputs are written atomically (:mod:`structlin.outputs`), and an ``--output``
that is an input or cannot be written is refused before any work
(:func:`~structlin.cli.commands.check_arguments`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import OutputError, StructlinError, UsageError
from .commands import (
    _analyze,
    _classify,
    _compare,
    _cross_validate,
    _clusters,
    _evaluate,
    _experiment,
    _explain,
    _stats,
    _tag,
    _train,
    _tune,
    check_arguments,
)
from .parser import build_parser

COMMANDS = {"train": _train, "tune": _tune, "evaluate": _evaluate, "compare": _compare, "tag": _tag,
            "classify": _classify, "cross-validate": _cross_validate, "corpus": _stats, "experiment": _experiment,
            "analyze": _analyze, "explain": _explain, "clusters": _clusters}
INTERNAL_ERROR = 70  # EX_SOFTWARE of sysexits.h


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return its exit status."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():  # restores the warnings' display after the command
        warnings.showwarning = _show_warning
        if threading.current_thread() is not threading.main_thread():  # only the main thread takes signals
            return _run(args)
        previous = signal.signal(signal.SIGTERM, _terminate)
        try:
            return _run(args)
        finally:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


class _ClosedStream:
    """Standard input or output that the shell closed (``<&-``, ``>&-``: Python makes it None): using it ends the
    command with one line naming the option that replaces it; flushing what was never written is nothing."""

    def __init__(self, error: StructlinError):
        self.error = error

    def flush(self) -> None:
        pass

    def __getattr__(self, name: str):
        raise self.error


class _NamedOutput:
    """Standard output whose write errors name it (``print`` raises a full disk's OSError without a file name); a
    closed pipe stays a BrokenPipeError, which ends the command quietly."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        with self._named():
            return self.stream.write(text)

    def flush(self) -> None:
        with self._named():
            self.stream.flush()

    @contextmanager
    def _named(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as err:
            raise OutputError("standard output", err.strerror or str(err)) from None

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def _run(args) -> int:
    """The command's exit status; what ended it early is one line on stderr (see the module's docstring)."""
    before = {"stdin": sys.stdin, "stdout": sys.stdout, "stderr": sys.stderr}
    if sys.stdin is None:
        sys.stdin = _ClosedStream(UsageError("standard input is closed: give the input as a file (--input)"))
    if sys.stdout is None:
        sys.stdout = _ClosedStream(OutputError("standard output", "closed, and the command writes to it: give "
                                                                  "--output (results) or --quiet (progress)"))
    else:
        sys.stdout = _NamedOutput(sys.stdout)
    if sys.stderr is None:  # closed (2>&-): the messages are dropped, as the shell asked; the exit status stays
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    try:
        return _status(args)
    finally:
        if before["stderr"] is None:
            sys.stderr.close()
        for name, stream in before.items():
            setattr(sys, name, stream)


def _status(args) -> int:
    """:func:`_run` with standard input and output open, or standing for closed ones."""
    try:
        check_arguments(args)
        COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here rather than at exit
    except BrokenPipeError:
        _stdout_to_devnull()
        return 0
    except KeyboardInterrupt:
        print("structlin: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        message, status = _diagnosis(err)
        if status == INTERNAL_ERROR and os.environ.get("STRUCTLIN_DEBUG", "") not in ("", "0"):
            raise
        print(" ".join(message.splitlines()), file=sys.stderr)
        return status
    return 0


def _diagnosis(err: Exception) -> tuple[str, int]:
    """The line to print and the exit status for an exception that ended a command."""
    if isinstance(err, StructlinError):
        return f"structlin: error: {err}", 2 if isinstance(err, UsageError) else 1
    if isinstance(err, OSError):
        where = f"{err.filename}: " if err.filename else ""
        return f"structlin: error: {where}{err.strerror or err}", 1
    if isinstance(err, UnicodeError) or type(err) is LookupError:  # a codec's error (KeyError, IndexError: bugs)
        return f"structlin: error: {err}", 1
    if isinstance(err, ImportError):
        return f"structlin: error: cannot import module {err.name!r}: {err}", 1
    if isinstance(err, MemoryError):
        return "structlin: error: out of memory (a smaller --bits, or less data, may fit)", 1
    return (f"structlin: internal error: {type(err).__name__}: {err} (please report; rerun with STRUCTLIN_DEBUG=1 "
            "for the traceback)", INTERNAL_ERROR)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line on stderr, without the place in structlin's code that issued it."""
    print("structlin: warning: " + " ".join(str(message).splitlines()), file=file or sys.stderr)


def _terminate(signum, frame):
    """SIGTERM ends the command as an exception does, so that ``finally`` blocks remove temporary files."""
    raise SystemExit(128 + signum)


def _stdout_to_devnull() -> None:
    """Point standard output at the null device, so that flushing it at exit does not fail again on the closed
    pipe (the recipe of Python's documentation on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
