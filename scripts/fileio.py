"""Writing a file so that a reader never sees half of it: the bytes go to
a temporary file beside the target, which then replaces it in one rename.
Every part of p4scope writes its outputs this way (run folders, compiled
programs, manifests); this is the one implementation."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Union



def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once at import: os.umask can only be read by setting it, which is not
# safe while other threads create files.
_UMASK = _read_umask()


def _is_special(path: Path) -> bool:
    """An existing device, FIFO or socket (links followed)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_atomic(path: Union[str, os.PathLike], data: Union[bytes, str], *,
                 durable: bool = True) -> None:
    """Writes `data` (text as UTF-8) to `path` through a temporary file and
    a rename; with `durable`, the file and its folder are synced first, so
    a crash leaves the old file or the new one. An existing non-regular
    file (/dev/null, a FIFO) is written in place, as p4c does: renaming
    over it would replace the device node or the pipe."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if _is_special(path):
        with open(path, "wb") as f:
            f.write(data)
        return
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
