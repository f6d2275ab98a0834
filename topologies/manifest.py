"""The run manifest: a record of everything a run created, kept on disk.

``RUN_DIR/manifest.json`` is rewritten atomically after every change. A
thing is recorded *before* it is created when its name alone identifies it
(network namespaces: their names hold the run id), and right *after* it is
created when only its identity does (processes: pid + start time;
interfaces in the root namespace: name + ifindex). Clean-up (clean.py)
removes exactly what the manifest lists, and only while the identity still
matches.

Runs in progress are registered in /run/p4scope/runs (one file per run
holding the run directory), so the next run can find and clean the runs of
owners that died without stopping (crash, SIGKILL). /run is emptied at boot,
as are the namespaces and processes the entries refer to.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from . import procs

REGISTRY = Path(os.environ.get("P4SCOPE_RUN_REGISTRY", "/run/p4scope/runs"))
NETNS_DIR = Path("/run/netns")
VERSION = 1


def new_run_id() -> str:
    """Short (namespace names carry it) and random (two runs never share it)."""
    return secrets.token_hex(3)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class Manifest:
    run_dir: Path
    run_id: str
    boot_id: str
    owner: dict
    state: str = "building"
    namespaces: list[str] = field(default_factory=list)
    processes: list[dict] = field(default_factory=list)
    """{"pid", "start", "what", "group"}; group: signal its process group."""
    interfaces: list[dict] = field(default_factory=list)
    """Root-namespace interfaces: {"name", "ifindex"}."""
    ports: dict[str, dict] = field(default_factory=dict)
    root_netns: list[int] = field(default_factory=procs.own_netns)
    """The namespace the run's root-namespace interfaces live in."""
    created: float = field(default_factory=time.time)

    @property
    def path(self) -> Path:
        return self.run_dir / "manifest.json"

    @classmethod
    def create(cls, run_dir: Path, run_id: Optional[str] = None) -> "Manifest":
        run_dir.mkdir(parents=True, exist_ok=True)
        m = cls(run_dir=run_dir, run_id=run_id or new_run_id(), boot_id=procs.boot_id(),
                owner=procs.identity(os.getpid()))
        m.save()
        m.register()
        return m

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "run_id": self.run_id, "boot_id": self.boot_id,
                "owner": self.owner, "state": self.state, "namespaces": self.namespaces,
                "processes": self.processes, "interfaces": self.interfaces,
                "ports": self.ports, "root_netns": self.root_netns, "created": self.created}

    def save(self) -> None:
        _write_atomic(self.path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, run_dir: Path) -> "Manifest":
        p = Path(run_dir) / "manifest.json"
        try:
            d = json.loads(p.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{p}: no manifest (not a p4scope run directory?)") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: unreadable manifest: {e}") from None
        if d.get("version") != VERSION:
            raise ValueError(f"{p}: manifest version {d.get('version')!r}, expected {VERSION}")
        return cls(run_dir=Path(run_dir), run_id=d["run_id"], boot_id=d["boot_id"], owner=d["owner"],
                   state=d["state"], namespaces=d["namespaces"], processes=d["processes"],
                   interfaces=d["interfaces"], ports=d.get("ports", {}), root_netns=d["root_netns"],
                   created=d.get("created", 0))

    # -- recording

    def netns_name(self, node: str) -> str:
        return f"p4s-{self.run_id}-{node}"

    def add_namespace(self, name: str) -> None:
        self.namespaces.append(name)
        self.save()

    def add_process(self, pid: int, what: str, group: bool) -> None:
        st = procs.start_time(pid)
        if st is None:
            return  # already gone: nothing to clean
        self.processes.append({"pid": pid, "start": st, "what": what, "group": group})
        self.save()

    def add_interface(self, name: str, ifindex: int) -> None:
        self.interfaces.append({"name": name, "ifindex": ifindex})
        self.save()

    def set_state(self, state: str) -> None:
        self.state = state
        self.save()

    # -- liveness and registry

    def owner_alive(self) -> bool:
        return self.boot_id == procs.boot_id() and procs.is_same(self.owner["pid"], self.owner["start"])

    def _reg_path(self) -> Path:
        return REGISTRY / self.run_id

    def register(self) -> None:
        REGISTRY.mkdir(parents=True, exist_ok=True)
        _write_atomic(self._reg_path(), str(self.run_dir.resolve()) + "\n")

    def unregister(self) -> None:
        try:
            self._reg_path().unlink()
        except FileNotFoundError:
            pass


def registered_runs() -> list[tuple[Path, Path]]:
    """(registry entry, run directory) of every registered run."""
    if not REGISTRY.is_dir():
        return []
    out = []
    for e in sorted(REGISTRY.iterdir()):
        if e.name.startswith("."):
            continue
        try:
            out.append((e, Path(e.read_text().strip())))
        except OSError:
            continue
    return out
