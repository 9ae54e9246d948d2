"""Archives built in memory for the reader and download tests."""

from __future__ import annotations

import io
import tarfile


def tar_bytes(members: dict[str, bytes]) -> bytes:
    """An uncompressed tar of ``members`` (name → content), in that order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
