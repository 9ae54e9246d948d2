"""Output files that are never left half-written and never replace what they should not.

:func:`atomic_output` writes a file through a temporary file in the same folder and renames it over the
target only when everything is written, so that a failure (an error, Ctrl-C, a SIGTERM turned into an
exception, a full disk) leaves the old file as it was and no temporary file behind.  The new file keeps
the permission mode of the file it replaces.  :func:`check_output` says beforehand whether a path can be
written, so that a command can refuse it before hours of training.  Errors are :class:`OutputError`
naming the path as the caller gave it, never the temporary file.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError, StructlinError


def check_output(path) -> None:
    """Raise :class:`OutputError` when ``path`` cannot be written: a folder, a read-only file (not replaced,
    even where the user could), or a missing, non-folder or read-only parent folder."""
    if os.path.isdir(path):
        raise OutputError(path, "is a folder (expected a file name)")
    if is_special(path) or descriptor_of(path) is not None:
        return
    if os.path.exists(path):
        if not os.stat(path).st_mode & 0o222 or not os.access(path, os.W_OK):
            raise OutputError(path, "is read-only; not replaced (make it writable, or write elsewhere)")
        return
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.exists(folder):
        raise OutputError(path, f"folder {os.path.dirname(path) or '.'} does not exist")
    if not os.path.isdir(folder):
        raise OutputError(path, f"{os.path.dirname(path)} is not a folder")
    if not os.access(folder, os.W_OK):
        raise OutputError(path, f"folder {os.path.dirname(path) or '.'} is not writable")


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` both exist and are the same file (through links and ``..``)."""
    return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)


@contextmanager
def atomic_output(path, mode: str = "w", *, encoding: str | None = None, durable: bool = True):
    """``path`` opened for writing (``mode`` ``"w"`` or ``"wb"``): a temporary file beside it, renamed over it
    when the block ends normally and removed when the block raises anything (``BaseException``).  ``durable``:
    the data reach the disk before the rename (``fsync``); a file that lives for seconds in a run's own folder
    (weights passed between processes) skips it, which would otherwise cost more than the work it serves.

    ``encoding`` defaults to UTF-8 in text mode.  A device or pipe is written in place, since it cannot be
    replaced; so is a path naming one of this process's open descriptors (``/dev/stdout``, ``/dev/fd/3``), through
    that descriptor, whatever it is open on: replacing the file a shell redirected it to would lose what it held
    (``>>``) and what is written after.  A symbolic link to a file keeps pointing at it: its target is replaced.
    """
    check_output(path)
    encoding = (encoding or "utf-8") if "b" not in mode else None
    descriptor = descriptor_of(path)
    if descriptor is not None or is_special(path):
        try:
            with (open(path, mode, encoding=encoding) if descriptor is None else
                  os.fdopen(os.dup(descriptor), mode, encoding=encoding)) as file:
                yield file
        except OSError as err:
            if isinstance(err, (StructlinError, BrokenPipeError)) or err.filename not in (None, str(path)):
                raise
            raise _write_error(path, err) from None
        return
    target = Path(os.path.realpath(path))
    permissions = stat.S_IMODE(os.stat(target).st_mode) if target.exists() else 0o666 & ~_umask()
    try:
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as err:
        raise _write_error(path, err) from None
    try:
        with os.fdopen(descriptor, mode, encoding=encoding) as file:
            yield file
            file.flush()
            if durable:
                os.fsync(file.fileno())
        os.chmod(temporary, permissions)
        os.replace(temporary, target)
    except BaseException as err:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(err, OSError) and not isinstance(err, StructlinError) and err.filename in (None, temporary):
            raise _write_error(path, err) from None
        raise


@contextmanager
def text_output(path):
    """``path`` written atomically as UTF-8 text (:func:`atomic_output`), gzipped when its name ends in ``.gz``, as
    the readers read such a file (without a time stamp: the same text, the same bytes)."""
    if not os.fspath(path).endswith(".gz"):
        with atomic_output(path) as out:
            yield out
        return
    with atomic_output(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped, \
            io.TextIOWrapper(zipped, encoding="utf-8") as out:
        yield out


#: Paths that name an open descriptor of the process (Linux and the BSDs): the standard streams, and ``/dev/fd/N``.
_STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_PATH = re.compile(r"/(?:dev|proc/self)/fd/([0-9]+)")


def descriptor_of(path) -> int | None:
    """The descriptor a path such as ``/dev/stdout`` or ``/dev/fd/3`` names when the process has it open, else None."""
    try:
        text = os.fspath(path)
    except TypeError:
        return None
    match = _DESCRIPTOR_PATH.fullmatch(text) if isinstance(text, str) else None
    descriptor = int(match.group(1)) if match else _STANDARD_STREAMS.get(text)
    if descriptor is None:
        return None
    try:
        os.fstat(descriptor)
    except (OSError, OverflowError):
        return None
    return descriptor


def is_special(path) -> bool:
    """Whether ``path`` is an existing file that is neither a regular one nor a folder (a device, a pipe): written
    in place, and read only once."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _write_error(path, err: OSError) -> OutputError:
    return OutputError(path, f"cannot write: {err.strerror or err}")
