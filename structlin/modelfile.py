"""Model files: named numpy arrays plus JSON metadata in one zip archive, never pickle.

Layout: ``metadata.json`` and one ``NAME.npy`` per array (numpy's own array format, read with
``allow_pickle=False``), so loading a model cannot run code.  The metadata records the format name
and version and the shape and dtype of every array; :func:`load_model` checks them, and zip's CRC-32
catches truncated or corrupted members, so a damaged file gives a clear :class:`ModelFormatError`.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .errors import ModelFormatError

FORMAT = "structlin-model"
VERSION = 1


def save_model(path, metadata: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write ``metadata`` and ``arrays`` to ``path`` atomically (a temporary file, then a rename)."""
    path = Path(path)
    header = {"format": FORMAT, "version": VERSION, **metadata,
              "arrays": {name: {"shape": list(a.shape), "dtype": a.dtype.str} for name, a in arrays.items()}}
    descriptor, temporary = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("metadata.json", json.dumps(header, ensure_ascii=False))
            for name, array in arrays.items():
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp creates 0600; a model is an ordinary file
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_model(path, kind: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model of ``kind`` (e.g. ``"tagger"``); every defect raises :class:`ModelFormatError`."""
    path = _existing(path)
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = _metadata(archive)
            _check_header(path, metadata, kind)
            arrays = {}
            for name, spec in metadata["arrays"].items():
                array = np.lib.format.read_array(io.BytesIO(archive.read(f"{name}.npy")), allow_pickle=False)
                if list(array.shape) != spec["shape"] or array.dtype.str != spec["dtype"]:
                    raise ModelFormatError(f"{path}: array {name!r} has shape {list(array.shape)} {array.dtype.str}, "
                                           f"metadata says {spec['shape']} {spec['dtype']} (file was modified)")
                arrays[name] = array
    except ModelFormatError:
        raise
    except (zipfile.BadZipFile, KeyError, EOFError, ValueError, TypeError, OSError) as err:
        raise ModelFormatError(f"{path}: not a readable structlin model (truncated or corrupted: {err})") from None
    return metadata, arrays


def _check_header(path: Path, metadata: dict, kind: str) -> None:
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFormatError(f"{path}: not a structlin model file")
    if metadata.get("version") != VERSION:
        raise ModelFormatError(f"{path}: model format version {metadata.get('version')!r}; "
                               f"this structlin reads version {VERSION}")
    if metadata.get("kind") != kind:
        raise ModelFormatError(f"{path}: holds a {metadata.get('kind')!r} model, expected a {kind!r} model")
    if not isinstance(metadata.get("arrays"), dict):
        raise ModelFormatError(f"{path}: metadata lists no arrays")


def model_kind(path) -> str:
    """The ``kind`` recorded in a model file (``"tagger"``, ``"classifier"`` ...)."""
    path = _existing(path)
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = _metadata(archive)
    except (zipfile.BadZipFile, KeyError, EOFError, ValueError, OSError) as err:
        raise ModelFormatError(f"{path}: not a readable structlin model (truncated or corrupted: {err})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFormatError(f"{path}: not a structlin model file")
    return str(metadata.get("kind"))


def _existing(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ModelFormatError(f"{path}: model file not found")
    return path


def _metadata(archive: zipfile.ZipFile):
    return json.loads(archive.read("metadata.json").decode("utf-8"))
