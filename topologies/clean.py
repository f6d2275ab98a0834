"""Removing exactly what a run created, from its manifest.

Order matters: first the recorded processes (switch daemons, node shells),
then whatever still runs inside the run's own network namespaces (host
programs started by tests or experiments), then the namespaces themselves
(which takes their interfaces, and the veth peers, with them), and last the
root-namespace interfaces still there with their recorded ifindex (links
between two switches, bridges). Every step checks identity first, so a
second clean-up, or one after a reboot, does nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import procs
from .manifest import NETNS_DIR, Manifest, load_registered, registered_runs


@dataclass
class CleanReport:
    run_dir: Path
    processes: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.run_dir}: stopped {len(self.processes)} processes, removed "
                f"{len(self.namespaces)} namespaces and {len(self.interfaces)} interfaces"
                + (f"; problems: {'; '.join(self.problems)}" if self.problems else ""))


class OwnerAlive(RuntimeError):
    """The run's owner is still running: it will clean up itself."""


def ifindex(name: str) -> Optional[int]:
    """The interface's index in this namespace, or None when it does not exist."""
    r = subprocess.run(["ip", "-j", "link", "show", "dev", name], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    try:
        return int(json.loads(r.stdout)[0]["ifindex"])
    except (ValueError, KeyError, IndexError):
        return None


def leftovers(run_dir: Path | str) -> list[str]:
    """What the runs recorded under `run_dir` (every manifest.json below it)
    made that still exists: namespaces, root interfaces with their recorded
    ifindex, processes, and runs not marked cleaned. Empty when a run left
    nothing behind."""
    out: list[str] = []
    netns = set(os.listdir(NETNS_DIR)) if os.path.isdir(NETNS_DIR) else set()
    for mf in sorted(Path(run_dir).rglob("manifest.json")):
        m = Manifest.load(mf.parent)
        out += [f"namespace {n}" for n in m.namespaces if n in netns]
        out += [f"interface {i['name']}" for i in m.interfaces
                if ifindex(i["name"]) == i["ifindex"]]
        out += [p["what"] for p in m.processes
                if procs.is_same(p["pid"], p["start"]) and not procs.is_zombie_or_gone(p["pid"])]
        if m.state != "cleaned":
            out.append(f"run {m.run_id} in state {m.state}")
    return out


def _kill_namespace_members(path: str) -> list[int]:
    members = procs.netns_members(path)
    ids = [(p, st) for p in members if (st := procs.start_time(p)) is not None]
    for p, st in ids:
        procs.signal_process(p, st, signal.SIGTERM, group=False)
    left = procs.wait_gone(ids, 1.0)
    for p, st in left:
        procs.signal_process(p, st, signal.SIGKILL, group=False)
    procs.wait_gone(left, 2.0)
    return [p for p, _ in ids]


def clean_run(run_dir: Path | str, force: bool = False) -> CleanReport:
    """Removes what the run in `run_dir` created. Refuses (OwnerAlive) while
    the process that built it still runs, unless `force`."""
    return clean_manifest(Manifest.load(Path(run_dir)), force)


def clean_manifest(m: Manifest, force: bool = False) -> CleanReport:
    """Removes what the run `m` describes (see clean_run)."""
    run_dir = m.run_dir
    rep = CleanReport(Path(run_dir))
    if m.boot_id != procs.boot_id():
        # a reboot removed all of it already
        m.set_state("cleaned")
        m.unregister()
        return rep
    if not force and m.state != "cleaned" and m.owner_alive() and m.owner["pid"] != os.getpid():
        raise OwnerAlive(f"{run_dir}: run {m.run_id} is still owned by running process "
                         f"{m.owner['pid']}; stop it there (or force)")
    live = [(p["pid"], p["start"], p) for p in m.processes if procs.is_same(p["pid"], p["start"])]
    for group in (True, False):
        batch = [(pid, st) for pid, st, p in live if p.get("group", False) == group]
        left = procs.terminate(batch, group=group)
        rep.processes += [p["what"] for pid, st, p in live if (pid, st) in batch]
        rep.problems += [f"process {pid} did not stop" for pid in left]
    for name in m.namespaces:
        path = NETNS_DIR / name
        if not path.exists():
            continue
        rep.processes += [f"pid {p} in {name}" for p in _kill_namespace_members(str(path))]
        r = subprocess.run(["ip", "netns", "delete", name], capture_output=True, text=True)
        if r.returncode != 0:
            rep.problems.append(f"ip netns delete {name}: {r.stderr.strip()}")
        else:
            rep.namespaces.append(name)
    same_ns = m.root_netns == procs.own_netns()
    for itf in m.interfaces:
        idx = ifindex(itf["name"])
        if idx is None or idx != itf["ifindex"]:
            continue  # gone, or a different interface that reuses the name
        if not same_ns:
            rep.problems.append(f"{itf['name']}: not removed, run from another network namespace")
            continue
        r = subprocess.run(["ip", "link", "delete", "dev", itf["name"]], capture_output=True, text=True)
        if r.returncode == 0:
            rep.interfaces.append(itf["name"])
        elif ifindex(itf["name"]) is not None:
            rep.problems.append(f"ip link delete {itf['name']}: {r.stderr.strip()}")
    m.set_state("cleaned" if not rep.problems else "clean-failed")
    if not rep.problems:
        m.unregister()
    return rep


def clean_stale(log: Callable[[str], None] = lambda s: None) -> list[CleanReport]:
    """Cleans every registered run whose owner died without cleaning up."""
    out = []
    for entry in registered_runs():
        try:
            m = load_registered(entry)
        except (FileNotFoundError, ValueError) as e:
            log(f"p4scope: forgetting registered run {entry.name}: {e}")
            entry.unlink(missing_ok=True)
            continue
        if m.state == "cleaned":
            entry.unlink(missing_ok=True)
            continue
        if m.owner_alive():
            continue
        rep = clean_manifest(m)
        log(f"p4scope: cleaned a run left behind: {rep.summary()}")
        out.append(rep)
    return out
