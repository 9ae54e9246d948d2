"""The memory a run may still take, so that arrays that cannot fit are refused before they are made.

Linux lends memory it does not have: an array larger than the free memory is allocated without complaint and the
process is killed by the system once its pages are written, after the work before it is lost.  So a learner whose
arrays grow with ``feature rows × labels`` checks their size first (:func:`require`), against the least of the
machine's available memory, its control groups' limits less their use (a container's) and the process's own limit
of address space (``ulimit -v``) less its size::

    available = min(MemAvailable, limit − (usage − inactive file pages), RLIMIT_AS − VmSize)

(the inactive file pages are the page cache the kernel gives back when asked, as ``MemAvailable`` counts it too;
swap is not counted: weights read at disk speed at every pass make no run).  Where none is known (not Linux),
nothing is refused.
"""

from __future__ import annotations

from pathlib import Path

try:
    import resource
except ImportError:  # not a Unix
    resource = None

from .errors import OptionValueError

#: The way out every refusal names: what keeps only the weights it learns.
PAIRS_LEARNER = "a learner whose memory grows with the (feature, label) pairs it learns (averaged-perceptron)"

_CGROUP_FILES = {  # the limit, the use and the statistics of a control group, by version
    2: ("memory.max", "memory.current", "memory.stat", "inactive_file"),
    1: ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat", "total_inactive_file"),
}


def available(root: Path = Path("/")) -> int | None:
    """The bytes this process may still allocate (see the module docstring), None where it is not known; ``root``
    is where ``proc`` and ``sys`` are found."""
    free = [amount for amount in (_meminfo_available(root), _cgroup_room(root), _address_room(root))
            if amount is not None]
    return min(free) if free else None


def require(nbytes: int, what: str, ways_out: str, root: Path = Path("/")) -> None:
    """Refuse (``OptionValueError``) ``what``, which needs ``nbytes`` more bytes, when fewer are available, naming
    both sizes and the ``ways_out``."""
    free = available(root)
    if free is not None and nbytes > free:
        raise OptionValueError(f"{what} needs {readable_size(nbytes)}, more than the {readable_size(free)} of memory "
                               f"available: {ways_out}")


def fits(nbytes: int, root: Path = Path("/")) -> bool:
    """Whether ``nbytes`` more bytes are available (True where that is not known)."""
    free = available(root)
    return free is None or nbytes <= free


def readable_size(nbytes: float) -> str:
    """A size for people: ``512 bytes``, ``3.4 MB``, ``11.1 GB`` (powers of 1000)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} bytes"


def _meminfo_available(root: Path) -> int | None:
    """Linux's estimate of the memory available to new work without swapping (``MemAvailable``)."""
    return _kilobytes(_read(root / "proc/meminfo"), "MemAvailable")


def _address_room(root: Path) -> int | None:
    """The address space this process may still map under its limit (``ulimit -v``), None without one."""
    if resource is None:
        return None
    limit, size = resource.getrlimit(resource.RLIMIT_AS)[0], _kilobytes(_read(root / "proc/self/status"), "VmSize")
    if limit == resource.RLIM_INFINITY or size is None:
        return None
    return max(0, limit - size)


def _kilobytes(table: str, name: str) -> int | None:
    """The bytes of the ``name:  N kB`` line of a ``/proc`` table."""
    for line in table.splitlines():
        key, _, value = line.partition(":")
        if key == name and value.split() and value.split()[0].isdigit():
            return int(value.split()[0]) * 1024
    return None


def _cgroup_room(root: Path) -> int | None:
    """What the control groups of this process may still take: the least, over its group and the groups above it,
    of a limit less that group's use (without its inactive page cache); None without a limit."""
    rooms = []
    for line in _read(root / "proc/self/cgroup").splitlines():
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and controllers == "":
            base, version = root / "sys/fs/cgroup", 2
        elif "memory" in controllers.split(","):
            base, version = root / "sys/fs/cgroup/memory", 1
        else:
            continue
        parts = [part for part in path.split("/") if part]
        rooms += [room for depth in range(len(parts) + 1)
                  if (room := _group_room(base.joinpath(*parts[:depth]), *_CGROUP_FILES[version])) is not None]
    return min(rooms) if rooms else None


def _group_room(folder: Path, limit_file: str, usage_file: str, stat_file: str, inactive_key: str) -> int | None:
    """One control group's limit less its use without the inactive page cache; None without a limit."""
    limit, usage = _number(_read(folder / limit_file)), _number(_read(folder / usage_file))
    if limit is None or usage is None or limit >= 1 << 60:  # "max", or v1's page-rounded 2^63 − 1: no limit
        return None
    stats = dict(row.partition(" ")[::2] for row in _read(folder / stat_file).splitlines())
    inactive = _number(stats.get(inactive_key, "")) or 0
    return max(0, limit - max(0, usage - inactive))


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeError):
        return ""
