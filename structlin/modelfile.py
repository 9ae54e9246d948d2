"""Model files: named numpy arrays plus JSON metadata in one zip archive, never pickle.

Layout: ``metadata.json`` and one ``NAME.npy`` per array (numpy's own array format, read with
``allow_pickle=False``), so loading a model cannot run code; the members are deflated (version 1 stored
them as they are).  The metadata records the format name and version and the shape and dtype of every
array; :func:`load_model` checks them, and zip's CRC-32 catches truncated or corrupted members, so a
damaged file gives a clear :class:`ModelFormatError`.  What the arrays are is the models' business: version 2
keeps only the non-zero emission weights (``structlin.models``); this module reads versions 1 and 2.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import reprlib
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import __version__
from .errors import ModelFormatError
from .outputs import atomic_output

FORMAT = "structlin-model"
#: The format version :func:`save_model` writes; :func:`load_model` reads every version from 1 to it.  Version 2
#: keeps only the non-zero emission weights; version 3, the same arrays, marks the default token pattern of Unicode's
#: words with each ideograph and hiragana alone (a feature set of a file before it read the runs of Python's ``\w``).
VERSION = 3


@dataclass(frozen=True)
class StreamedArray:
    """A vector of ``length`` items of ``dtype`` that is written a block at a time (``blocks()`` yields them in order,
    anew at each call), never made whole: a model's non-zero weights, which as one array would be a copy of its
    weights beside them."""

    dtype: np.dtype
    length: int
    blocks: Callable[[], Iterator[np.ndarray]]

    @property
    def shape(self) -> tuple[int]:
        return (self.length,)


def save_model(path, metadata: dict, arrays: dict[str, np.ndarray | StreamedArray]) -> None:
    """Write ``metadata`` and ``arrays`` to ``path`` atomically (:func:`~structlin.outputs.atomic_output`:
    a temporary file, then a rename; a failure leaves ``path`` as it was)."""
    _check_path(path)
    header = {"format": FORMAT, "version": VERSION, **metadata,
              "arrays": {name: {"shape": list(a.shape), "dtype": np.dtype(a.dtype).str} for name, a in arrays.items()}}
    with atomic_output(path, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("metadata.json", json.dumps(header, ensure_ascii=False))
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                _write_array(member, array)


def _write_array(stream, array: np.ndarray | StreamedArray) -> None:
    """``array`` in numpy's format (``.npy``) to the binary ``stream``; a :class:`StreamedArray` a block at a time,
    the same bytes as the whole array's."""
    if not isinstance(array, StreamedArray):
        np.lib.format.write_array(stream, np.ascontiguousarray(array), allow_pickle=False)
        return
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(array.dtype)), "fortran_order": False,
              "shape": array.shape}
    np.lib.format.write_array_header_1_0(stream, header)
    written = 0
    for block in array.blocks():
        block = np.ascontiguousarray(block, dtype=array.dtype)
        stream.write(memoryview(block).cast("B"))
        written += len(block)
    if written != array.length:
        raise ValueError(f"a streamed array of {array.length} items gave {written}")


def _check_path(path) -> None:
    """Refuse a ``path`` that names no file (an open file object, None): a model is written to or read from a path."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a model file's path must be a str or os.PathLike, got {reprlib.repr(path)}")


def load_model(path, kind: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model of ``kind`` (e.g. ``"tagger"``); every defect raises :class:`ModelFormatError`.

    Before an array is read, its ``.npy`` header must agree with the metadata, and its shape and item
    size with the member's size in the archive, which the file's own size bounds: a tampered shape
    cannot make loading allocate more than the file holds.  Whether the arrays suit the model that
    reads them is :func:`check_arrays`' job.
    """
    _check_path(path)
    path = _existing(path)
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = _metadata(path, archive)
            _check_header(path, metadata, kind)
            arrays = {name: _read_array(path, archive, name, spec) for name, spec in metadata["arrays"].items()}
    except ModelFormatError:
        raise
    except _UNREADABLE as err:
        raise _unreadable(path, err) from None
    return metadata, arrays


#: What reading a damaged archive raises besides zipfile's errors: a member missing (KeyError), cut
#: short (EOFError) or not of its format (ValueError, zlib.error, struct.error), an unsupported
#: compression method or an encryption flag (NotImplementedError, RuntimeError), JSON nested too deep
#: (RecursionError, a RuntimeError).
_UNREADABLE = (zipfile.BadZipFile, KeyError, EOFError, ValueError, TypeError, OSError, RuntimeError, zlib.error,
               struct.error)


def _unreadable(path: Path, err: Exception) -> ModelFormatError:
    if isinstance(err, PermissionError):
        return ModelFormatError(f"{path}: cannot read the model file ({err.strerror})")
    return ModelFormatError(f"{path}: not a readable structlin model (truncated or corrupted: {err})")


def _check_header(path: Path, metadata: dict, kind: str) -> None:
    """The format, its version, the model kind, the structlin version that wrote it and the array list.

    ``structlin_version`` must be a version string; a model written by a newer major version of
    structlin raises (it may mean its numbers differently even in the same format version).
    """
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFormatError(f"{path}: not a structlin model file")
    version = metadata.get("version")
    if type(version) is int and version > VERSION:
        raise ModelFormatError(f"{path}: model format version {version}, newer than this structlin {__version__} "
                               f"reads (1 to {VERSION}): upgrade structlin to load it")
    if type(version) is not int or version < 1:
        raise ModelFormatError(f"{path}: model format version {version!r}; this structlin reads versions 1 to "
                               f"{VERSION}")
    if metadata.get("kind") != kind:
        raise ModelFormatError(f"{path}: holds a {metadata.get('kind')!r} model, expected a {kind!r} model")
    written_by = metadata.get("structlin_version")
    major = re.match(r"(\d+)\.\d+", written_by) if isinstance(written_by, str) else None
    if major is None:
        raise ModelFormatError(f"{path}: structlin_version {written_by!r} is not a version such as {__version__!r}")
    if int(major[1]) > int(__version__.split(".")[0]):
        raise ModelFormatError(f"{path}: written by structlin {written_by}, a newer major version than this "
                               f"structlin {__version__}: upgrade structlin to load it")
    if not isinstance(metadata.get("arrays"), dict):
        raise ModelFormatError(f"{path}: metadata lists no arrays")


def model_kind(path) -> str:
    """The ``kind`` recorded in a model file (``"tagger"``, ``"classifier"`` ...)."""
    path = _existing(path)
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = _metadata(path, archive)
    except ModelFormatError:
        raise
    except _UNREADABLE as err:
        raise _unreadable(path, err) from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFormatError(f"{path}: not a structlin model file")
    return str(metadata.get("kind"))


def _existing(path) -> Path:
    path = Path(path)
    if path.is_dir():
        raise ModelFormatError(f"{path}: is a folder, not a model file")
    if path.exists() and not path.is_file():
        raise ModelFormatError(f"{path}: a device or pipe, not a model file")
    if not path.is_file():
        raise ModelFormatError(f"{path}: model file not found")
    return path


def _metadata(path: Path, archive: zipfile.ZipFile):
    return json.loads(archive.read(_member(path, archive, "metadata.json")).decode("utf-8"))


#: How much larger than its compressed size a member can be: 1 stored, deflate's limit 1032 : 1.
_EXPANSION = {zipfile.ZIP_STORED: 1, zipfile.ZIP_DEFLATED: 1032}


def _member(path: Path, archive: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    """The archive's member ``name``, whose declared sizes fit in the file (so that reading it is bounded)."""
    info = archive.getinfo(name)
    if info.compress_type not in _EXPANSION:
        raise ModelFormatError(f"{path}: member {name} is compressed with method {info.compress_type}; a model "
                               "is stored or deflated")
    most = _EXPANSION[info.compress_type] * max(info.compress_size, 1)
    if info.compress_size > path.stat().st_size or info.file_size > most:
        raise ModelFormatError(f"{path}: member {name} declares {info.file_size} bytes, more than the file holds "
                               "(file was modified)")
    return info


_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _read_array(path: Path, archive: zipfile.ZipFile, name: str, spec) -> np.ndarray:
    """The array ``name``, once its ``.npy`` header agrees with the metadata's ``spec`` and its member's size."""
    if not (isinstance(spec, dict) and isinstance(spec.get("shape"), list) and isinstance(spec.get("dtype"), str)):
        raise ModelFormatError(f"{path}: the metadata of array {name!r} is not a shape and a dtype")
    info = _member(path, archive, f"{name}.npy")
    with archive.open(info) as stream:
        version = np.lib.format.read_magic(stream)
        if version not in _NPY_HEADERS:
            raise ModelFormatError(f"{path}: array {name!r} is in .npy format version {version}, not 1.0 or 2.0")
        shape, _, dtype = _NPY_HEADERS[version](stream)
        header_size = stream.tell()
    if dtype.hasobject:
        raise ModelFormatError(f"{path}: not a readable structlin model: array {name!r} holds Python objects")
    if list(shape) != spec["shape"] or dtype.str != spec["dtype"]:
        raise ModelFormatError(f"{path}: array {name!r} has shape {list(shape)} {dtype.str}, "
                               f"metadata says {spec['shape']} {spec['dtype']} (file was modified)")
    if info.file_size != header_size + math.prod(shape) * dtype.itemsize:
        raise ModelFormatError(f"{path}: array {name!r} of shape {list(shape)} {dtype.str} does not fill its "
                               f"{info.file_size} bytes (file was modified)")
    with archive.open(info) as stream:  # read into the array (zip's CRC-32 checked at the member's end)
        array = np.lib.format.read_array(stream, allow_pickle=False)
        stream.read()
    return array


_KINDS = {"f": "floats", "i": "integers", "u": "unsigned integers"}


@dataclass(frozen=True)
class ArraySpec:
    """What a model expects of one of its arrays.

    ``kinds``: the numpy dtype kinds accepted, of at most 64 bits (``"f"``: floats, which must be finite;
    ``"iu"``: integers, which must not be negative).  ``shape``: one entry per dimension, a number or a size name
    (``"labels"``, ``"rows"`` ...; ``"name+1"`` is one more), a name being one size in all arrays of a
    model, known beforehand or set by the first array that has it.  ``below``: the size bounding integer
    values (indices), named as in ``shape`` (``"labels+1"``: at most the number of labels).  ``increasing``:
    values must increase strictly (sorted ids).
    """

    kinds: str
    shape: tuple[int | str, ...]
    below: str | None = None
    increasing: bool = False

    def problem(self, name: str, array: np.ndarray, sizes: dict[str, tuple[int, str]]) -> str | None:
        """What is wrong with the array ``name`` (None: nothing).  ``sizes`` maps size names to their value
        and where it comes from; the sizes this array is the first to have are added."""
        if array.dtype.kind not in self.kinds or array.dtype.itemsize > 8:
            kinds = " or ".join(_KINDS[k] for k in self.kinds)
            return f"has dtype {array.dtype.str}; expected {kinds} of at most 64 bits"
        if array.ndim != len(self.shape):
            return f"has shape {list(array.shape)}; expected {len(self.shape)} dimension(s)"
        for dimension, actual in zip(self.shape, array.shape):
            expected, why = dimension, ""
            if isinstance(dimension, str):
                size, more = _size_name(dimension)
                value, origin = sizes.setdefault(size, (actual - more, f"array {name!r}"))
                expected, why = value + more, f" ({dimension}, from {origin})"
            if actual != expected:
                return f"has shape {list(array.shape)} where {expected}{why} is expected"
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            return "holds NaN or infinite values"
        if array.dtype.kind in "iu" and array.size:
            if array.min() < 0:
                return "holds negative values"
            if self.below is not None:
                size, more = _size_name(self.below)
                value, origin = sizes[size]
                bound = value + more
                if array.max() >= bound:
                    return f"holds values outside [0, {bound}) ({self.below}, from {origin})"
        if self.increasing and (array[1:] <= array[:-1]).any():  # no np.diff: unsigned differences wrap
            return "does not increase strictly"
        return None


def _size_name(name: str) -> tuple[str, int]:
    """``"rows+1"`` → ``("rows", 1)``; ``"rows"`` → ``("rows", 0)``."""
    size, _, more = name.partition("+")
    return size, int(more or 0)


def check_arrays(path, arrays: dict[str, np.ndarray], specs: dict[str, ArraySpec],
                 sizes: dict[str, tuple[int, str]]) -> None:
    """Check that a model file's ``arrays`` are those ``specs`` name and hold what they expect, with the
    ``sizes`` known beforehand (``{name: (value, where it comes from)}``); the first defect raises
    :class:`ModelFormatError` naming the file and the array."""
    if set(arrays) != set(specs):
        raise ModelFormatError(f"{path}: holds arrays {sorted(arrays)}, expected {sorted(specs)} (file was modified)")
    sizes = dict(sizes)
    for name, spec in specs.items():
        problem = spec.problem(name, arrays[name], sizes)
        if problem:
            raise ModelFormatError(f"{path}: array {name!r} {problem} (file was modified)")


def deflated(array: np.ndarray | StreamedArray) -> bytes:
    """``array`` in numpy's own format, deflated as a model file's members are: how a pickled model keeps its
    arrays (never as pickled objects, so that unpickling them runs no code)."""
    sink = _Deflating()
    _write_array(sink, array)
    return sink.finish()


class _Deflating:
    """A binary stream that keeps what is written to it deflated (level 6, a model file's)."""

    def __init__(self):
        self._compressor, self._parts = zlib.compressobj(6), []

    def write(self, data) -> int:
        self._parts.append(self._compressor.compress(data))
        return len(data)

    def finish(self) -> bytes:
        return b"".join([*self._parts, self._compressor.flush()])


def inflated(data: bytes) -> np.ndarray:
    """The array of :func:`deflated`'s bytes."""
    return np.lib.format.read_array(io.BytesIO(zlib.decompress(data)), allow_pickle=False)
