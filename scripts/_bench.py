"""Helpers shared by the benchmark scripts (``bench_pos.py``, ``bench_textcat.py``).

Timing blocks, running one system in its own forked child (so that its peak resident set size is
its own), printing a table of rows, and the state of the checkout.  The scripts import this module
as ``_bench`` (``python scripts/NAME.py`` puts ``scripts/`` on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context


@contextmanager
def stopwatch(row: dict, key: str):
    """Store the wall-clock seconds of the block as ``row[key]`` and its CPU seconds as ``row[key + "_cpu"]``."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    row[key], row[key + "_cpu"] = time.perf_counter() - wall, time.process_time() - cpu


# --- memory, and one system per child process -------------------------------------------------------


def current_rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_in_child(function: Callable[..., dict], *args) -> dict:
    """``function(*args)`` (a module-level function returning a row dict) in a freshly forked child,
    whose peak RSS starts at its RSS; the row gets the load average after the run.  The child sees
    the parent's globals as they were at the fork, without pickling them."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("fork")) as pool:
        row = pool.submit(function, *args).result()
    row["load_average_after"] = os.getloadavg()[0]
    return row


# --- report -----------------------------------------------------------------------------------------


def fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def percent(fraction) -> float | None:
    return None if fraction is None else 100 * fraction


Column = tuple[str, Callable[[dict], object], str]  # header, row -> value (None: missing), format spec


def table(rows: list[dict], columns: Sequence[Column]) -> str:
    """The rows as a plain-text table: the ``system`` name left-aligned, then one column each."""
    cells = [["system", *(header for header, _, _ in columns)]]
    cells += [[r["system"], *(fmt(field(r), spec) for _, field, spec in columns)] for r in rows]
    widths = [max(len(line[k]) for line in cells) for k in range(len(cells[0]))]
    cells.insert(1, ["-" * w for w in widths])
    return "\n".join("  ".join(c.rjust(w) if k else c.ljust(w) for k, (c, w) in enumerate(zip(line, widths)))
                     for line in cells)


# --- the checkout -----------------------------------------------------------------------------------


def source_state() -> str:
    """The checkout's commit, and the files changed since it (results depend on the code on disk)."""
    def git(*command):
        try:
            return subprocess.run(["git", *command], cwd=os.path.dirname(os.path.abspath(__file__)),
                                  capture_output=True, text=True, timeout=30, check=False).stdout
        except OSError:
            return ""
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    commit = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    return commit + (f" + changes to {', '.join(changed)}" if changed else "")


def write_json(path: str, document: dict) -> None:
    """Write a benchmark's results (settings, rows, ratios ...) as indented JSON, numpy numbers as floats."""
    with open(path, "w", encoding="utf-8") as out:
        json.dump(document, out, indent=2, default=float)
        out.write("\n")
