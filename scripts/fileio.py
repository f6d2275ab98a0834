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


def sync_files(paths: "list[Path]") -> None:
    """Makes files written with `durable=False` durable, with their
    folders' entries: one syncfs(2) of their filesystem when they share the
    first one's (a journal commit for all instead of two for each file),
    else an fsync of each file and folder."""
    paths = [Path(p) for p in paths]
    if not paths:
        return
    if all(_same_fs(p, paths[0]) for p in paths[1:]) and _syncfs(paths[0].parent):
        return
    for p in paths:
        _fsync(p)
    for folder in dict.fromkeys(p.parent for p in paths):
        _fsync_dir(folder)


def _same_fs(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _syncfs(folder: Path) -> bool:
    """syncfs(2) of `folder`'s filesystem (Linux); False when it is not there
    or fails (the caller then syncs file by file)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syncfs = libc.syncfs
    except (OSError, AttributeError):
        return False
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return False
    try:
        return syncfs(fd) == 0
    finally:
        os.close(fd)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    """Best effort: some filesystems cannot sync a folder."""
    try:
        _fsync(folder)
    except OSError:
        pass
