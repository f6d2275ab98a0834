"""Clean-up from the manifest: identity checks, and runs whose owner died."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap

from p4scope.topologies import procs
import pytest

from p4scope.topologies.clean import OwnerAlive, clean_run, clean_stale, leftovers
from p4scope.topologies.manifest import Manifest, registered_runs

LAB = textwrap.dedent("""
    import subprocess, sys, time
    from p4scope.topologies.vethlab import VethLab
    lab = VethLab([("cla", "clb")], run_dir=sys.argv[1]).__enter__()
    subprocess.Popen(["ip", "netns", "exec", lab.netns, "sleep", "300"])
    print(lab.netns, flush=True)
    time.sleep(300)
""")


def netns_list() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_dead_owner_is_cleaned_even_without_its_run_directory(tmp_path, netns_ok):
    run_dir = tmp_path / "lab"
    p = subprocess.Popen([sys.executable, "-c", LAB, str(run_dir)], stdout=subprocess.PIPE, text=True)
    netns = p.stdout.readline().strip()
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert netns and netns in netns_list()
    shutil.rmtree(run_dir)  # e.g. a temporary directory removed meanwhile
    reps = [r for r in clean_stale() if r.run_dir == run_dir]
    assert len(reps) == 1 and reps[0].namespaces == [netns], reps
    assert any(netns in x for x in reps[0].processes)  # the sleep inside it
    assert netns not in netns_list()
    assert not any(e.stem in netns for e in registered_runs())


def test_identity_protects_reused_pids(tmp_path):
    """A recorded process whose pid now belongs to another process (start
    time differs) is not signalled; neither is a live owner's run."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        m = Manifest.create(tmp_path / "run")
        m.owner = procs.identity(sleeper.pid)  # as if another live process built it
        m.processes.append({"pid": sleeper.pid, "start": procs.start_time(sleeper.pid) + 1,
                            "what": "not ours", "group": False})
        m.save()
        with pytest.raises(OwnerAlive, match="still owned"):
            clean_run(tmp_path / "run")
        rep = clean_run(tmp_path / "run", force=True)
        assert rep.processes == [] and sleeper.poll() is None
        assert Manifest.load(tmp_path / "run").state == "cleaned"
        assert clean_run(tmp_path / "run").processes == []  # twice is harmless
    finally:
        sleeper.kill()
        sleeper.wait()


def test_procs_identity():
    me = os.getpid()
    st = procs.start_time(me)
    assert st and procs.is_same(me, st) and not procs.is_same(me, st + 1)
    assert procs.start_time(2**22 + 12345) is None
    assert procs.identity(me) == {"pid": me, "start": st}


def test_leftovers_lists_what_a_run_still_holds_until_it_is_cleaned(tmp_path):
    """clean.leftovers: a live recorded process and an uncleaned state are
    listed; a process whose identity differs (a reused pid), a namespace
    and an interface that are gone are not; after clean_run, nothing."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        m = Manifest.create(tmp_path / "runs" / "a")
        m.processes += [{"pid": sleeper.pid, "start": procs.start_time(sleeper.pid),
                         "what": "sleeper", "group": False},
                        {"pid": sleeper.pid, "start": procs.start_time(sleeper.pid) + 1,
                         "what": "a reused pid", "group": False}]
        m.namespaces.append("p4scope-test-gone")
        m.interfaces.append({"name": "p4s-gone0", "ifindex": 999999})
        m.set_state("running")
        assert leftovers(tmp_path / "runs") == ["sleeper", f"run {m.run_id} in state running"]
        clean_run(tmp_path / "runs" / "a", force=True)
        assert sleeper.wait(timeout=10) is not None
        assert leftovers(tmp_path / "runs") == []
    finally:
        sleeper.kill()
        sleeper.wait()
