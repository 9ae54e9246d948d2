"""The ``structlin`` command: train, evaluate and apply taggers and classifiers; describe corpora.

Errors caused by input (files, names, options) print one line on stderr and exit with status 1
(usage errors: status 2); they never show a traceback.
"""

from __future__ import annotations

import sys

from ..errors import StructlinError
from .commands import (
    _analyze,
    _classify,
    _compare,
    _cross_validate,
    _evaluate,
    _experiment,
    _stats,
    _tag,
    _train,
    _tune,
)
from .parser import build_parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    action = {"train": _train, "tune": _tune, "evaluate": _evaluate, "compare": _compare, "tag": _tag, "classify": _classify,
              "cross-validate": _cross_validate, "corpus": _stats, "experiment": _experiment,
              "analyze": _analyze}[args.command]
    try:
        action(args)
    except StructlinError as err:
        print(f"structlin: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"structlin: error: {err.filename or ''}: {err.strerror or err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("structlin: interrupted", file=sys.stderr)
        return 130
    return 0

