"""Which code measures a run: a hash of the engine's sources (made when
the module was built: SOURCE_HASH) and one of this package's Python
sources. run.json records both; a Dask worker whose pair differs from the
machine that runs `p4scope run` is refused (cluster.py), since its tables
could differ from the ones this machine would measure; and a run from a
checkout whose engine sources moved on since setup built the engine says
so (`stale_engine`)."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Optional

SUBPACKAGES = ("compiler", "switch", "control", "topologies")
"""p4scope's subpackages that an editable install maps from folders of
their own (the rest of the package is the repository's scripts/)."""


def engine_sources() -> str:
    try:
        import p4scope_dataplane
    except ImportError:
        return "not installed"
    return str(getattr(p4scope_dataplane, "SOURCE_HASH", "unknown"))


def _package() -> Path:
    """The folder of the p4scope package itself (scripts/ in a checkout)."""
    import p4scope

    return Path(next(iter(p4scope.__path__)))


def checkout_engine() -> Optional[Path]:
    """The dataplane/ folder of the checkout this package runs from (an
    editable install, as setup.sh makes), if any."""
    d = _package().parent / "dataplane"
    return d if (d / "Cargo.toml").is_file() else None


def stale_engine() -> Optional[str]:
    """A warning when the installed engine was built from other sources
    than the checkout's dataplane/ holds now (a pull, an edit, without
    setup.sh since): its results are the old code's."""
    d = checkout_engine()
    try:
        import p4scope_dataplane
    except ImportError:
        return None
    if d is None or not hasattr(p4scope_dataplane, "source_hash"):
        return None
    now = p4scope_dataplane.source_hash(str(d))
    if now == p4scope_dataplane.SOURCE_HASH:
        return None
    return (f"warning: the installed engine was built from other sources than {d} holds now "
            f"({p4scope_dataplane.SOURCE_HASH} then, {now} now), so it measures the old code: "
            "run `bash scripts/setup.sh` to rebuild it")


def tell_if_stale(echo) -> None:
    """`stale_engine`'s warning, if any, as a run's first line."""
    stale = stale_engine()
    if stale:
        echo(f"p4scope run: {stale}")


def package_folders() -> list[tuple[str, Path]]:
    """(name prefix, folder) of each part of the package's code."""
    out = [("", _package())]
    for sub in SUBPACKAGES:
        spec = importlib.util.find_spec(f"p4scope.{sub}")
        if spec is not None and spec.submodule_search_locations:
            out.append((f"{sub}/", Path(next(iter(spec.submodule_search_locations)))))
    return out


@lru_cache(maxsize=1)
def python_sources() -> str:
    """16 hex digits of SHA-256 over the package's .py files (their names
    within the package and their bytes, in name order)."""
    files = {}
    for prefix, folder in package_folders():
        for f in folder.rglob("*.py"):
            files[prefix + f.relative_to(folder).as_posix()] = f
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0")
        h.update(files[name].read_bytes() + b"\0")
    return h.hexdigest()[:16]


def fingerprint() -> dict[str, str]:
    return {"p4scope_sources": python_sources(), "p4scope_dataplane_sources": engine_sources()}


def differences(here: dict[str, str], there: dict[str, str]) -> list[str]:
    """What differs between this machine's fingerprint and another's, as
    `name: HERE here, THERE there` phrases (none when equal)."""
    return [f"{k}: {here[k]} here, {there.get(k, 'none')} there" for k in here
            if there.get(k) != here[k]]
