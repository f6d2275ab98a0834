"""The run manifest: a record of everything a run created, kept on disk.

``RUN_DIR/manifest.json`` is rewritten atomically after every change. A
thing is recorded *before* it is created when its name alone identifies it
(network namespaces: their names hold the run id), and right *after* it is
created when only its identity does (processes: pid + start time;
interfaces in the root namespace: name + ifindex). Clean-up (clean.py)
removes exactly what the manifest lists, and only while the identity still
matches.

Runs in progress are registered in /run/p4scope/runs: each save also
writes a copy of the manifest there (<run id>.json), so the next run can
find and clean the runs of owners that died without stopping (crash,
SIGKILL), even when the run directory itself was deleted meanwhile (a test's
temporary directory). /run is emptied at boot, as are the namespaces and
processes the entries refer to.
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
    from ..fileio import write_atomic

    write_atomic(path, text)


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
        return {"version": VERSION, "run_id": self.run_id, "run_dir": str(self.run_dir.resolve()),
                "boot_id": self.boot_id,
                "owner": self.owner, "state": self.state, "namespaces": self.namespaces,
                "processes": self.processes, "interfaces": self.interfaces,
                "ports": self.ports, "root_netns": self.root_netns, "created": self.created}

    def save(self) -> None:
        text = json.dumps(self.to_json(), indent=1) + "\n"
        if self.run_dir.is_dir():
            _write_atomic(self.path, text)
        if self._reg_path().exists():
            _write_atomic(self._reg_path(), text)

    @classmethod
    def load(cls, run_dir: Path) -> "Manifest":
        return cls.load_file(Path(run_dir) / "manifest.json", Path(run_dir))

    @classmethod
    def load_file(cls, p: Path, run_dir: Optional[Path] = None) -> "Manifest":
        try:
            d = json.loads(p.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{p}: no manifest (not a p4scope run directory?)") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: unreadable manifest: {e}") from None
        if d.get("version") != VERSION:
            raise ValueError(f"{p}: manifest version {d.get('version')!r}, expected {VERSION}")
        if run_dir is None:
            run_dir = Path(d["run_dir"])
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
        return REGISTRY / f"{self.run_id}.json"

    def register(self) -> None:
        REGISTRY.mkdir(parents=True, exist_ok=True)
        _write_atomic(self._reg_path(), json.dumps(self.to_json(), indent=1) + "\n")

    def unregister(self) -> None:
        try:
            self._reg_path().unlink()
        except FileNotFoundError:
            pass


def registered_runs() -> list[Path]:
    """The registry's copies of the manifests of registered runs."""
    if not REGISTRY.is_dir():
        return []
    return sorted(e for e in REGISTRY.iterdir() if e.suffix == ".json" and not e.name.startswith("."))


def load_registered(entry: Path) -> "Manifest":
    """A registered run's manifest: its run directory's copy if that still
    exists (the same content), else the registry's."""
    m = Manifest.load_file(entry)
    if (m.run_dir / "manifest.json").exists():
        try:
            return Manifest.load(m.run_dir)
        except (FileNotFoundError, ValueError):
            pass
    return m
