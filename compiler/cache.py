"""A program compiled again with the same inputs gives the earlier
compile's result: within the process (the main job compiles every program
in p4src/, then its run compiles the DUT) and, with a `store` folder,
across processes (build/.cache: the next main job compiles nothing).

The key is a SHA-256 of everything the output depends on: the compiler's
own files (its code, grammar and p4include/), the program's path and
text, the P4 files beside it and in the include folders, and the macros.
A stored result is the BMv2 JSON and the serialized P4Info; a result
read back is the one the compiler gives (diagnostics aside: a program
that compiled has no errors). A store keeps the STORE_KEEPS results
used last (every edit of a program is a new key): reading a result marks
it used, and a save removes the least recently used beyond that.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable, Optional

from .driver import CompileResult, compile_file

_HERE = Path(__file__).resolve().parent
_COMPILER_KEY: list[str] = []
STORE_KEEPS = 64
_RESULTS: dict[str, tuple[str, bytes]] = {}
"""key -> (BMv2 JSON text, serialized P4Info) of this process's compiles."""


def _files(folder: Path, patterns: Iterable[str]) -> list[Path]:
    return sorted({p for pat in patterns for p in folder.rglob(pat) if p.is_file()})


def compiler_key() -> str:
    """The compiler's own files, hashed (once per process)."""
    if not _COMPILER_KEY:
        h = hashlib.sha256()
        for p in _files(_HERE, ("*.py", "*.lark", "*.p4")):
            h.update(str(p.relative_to(_HERE)).encode() + b"\0" + p.read_bytes() + b"\0")
        _COMPILER_KEY.append(h.hexdigest())
    return _COMPILER_KEY[0]


def inputs_key(path: Path, include_dirs: Iterable[str],
               defines: Optional[dict[str, str]] = None) -> str:
    path = Path(path)
    h = hashlib.sha256()
    h.update(compiler_key().encode() + b"\0" + str(path).encode() + b"\0")
    h.update(path.read_bytes() + b"\0")
    for folder in (path.parent, *map(Path, include_dirs)):
        h.update(b"dir\0" + str(folder).encode() + b"\0")
        if folder.is_dir():
            for p in _files(folder, ("*.p4", "*.h")):
                h.update(str(p).encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(json.dumps(sorted((defines or {}).items())).encode())
    return h.hexdigest()


def _result(json_text: str, p4info: bytes) -> CompileResult:
    from finsy.proto import p4i

    return CompileResult(bmv2_json=json.loads(json_text), p4info=p4i.P4Info.FromString(p4info))


def compile_cached(path: Path, include_dirs: Iterable[str] = (),
                   defines: Optional[dict[str, str]] = None,
                   store: Optional[Path] = None) -> CompileResult:
    """compile_file(path, include_dirs, defines), or the result of an
    earlier compile of the same inputs (this process's, or one kept in
    `store`, which a fresh compile is kept in). Each call returns its own
    copy. Raises CompileError as compile_file does."""
    include_dirs = list(include_dirs)
    key = inputs_key(path, include_dirs, defines)
    got = _RESULTS.get(key) or (_load(store, key) if store is not None else None)
    if got is None:
        res = compile_file(path, include_dirs, defines)
        got = (json.dumps(res.bmv2_json), res.p4info.SerializeToString(deterministic=True))
        if store is not None:
            _save(store, key, got)
        _RESULTS[key] = got
        return res
    _RESULTS[key] = got
    return _result(*got)


def _load(store: Path, key: str) -> Optional[tuple[str, bytes]]:
    js, info = store / f"{key}.json", store / f"{key}.p4info.bin"
    try:
        got = js.read_text(encoding="utf-8"), info.read_bytes()
        js.touch()  # used now: kept longest
        return got
    except OSError:
        return None


def _prune(store: Path) -> None:
    """Removes the results beyond the STORE_KEEPS used last (their .json's
    time of last use)."""
    by_use = sorted(store.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for js in by_use[STORE_KEEPS:]:
        js.with_name(js.name[:-len(".json")] + ".p4info.bin").unlink(missing_ok=True)
        js.unlink(missing_ok=True)


def _save(store: Path, key: str, got: tuple[str, bytes]) -> None:
    """Kept for the next process; a store that cannot be written is no error."""
    from p4scope.fileio import write_atomic

    try:
        store.mkdir(parents=True, exist_ok=True)
        write_atomic(store / f"{key}.p4info.bin", got[1], durable=False)
        write_atomic(store / f"{key}.json", got[0], durable=False)
        _prune(store)
    except OSError:
        pass
