"""Where a run's processes come from (experiments/processes.py): the main
job's forkserver, started as the command line loads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

MAIN_JOB = textwrap.dedent("""
    import sys
    sys.argv = ["p4scope", "main"]
    from multiprocessing import forkserver

    from p4scope import cli  # the main job's forkserver starts here
    from p4scope.experiments import processes


    def in_a_run_process():
        # what a run's process does when it loads the `p4scope` script again
        cli._processes_early()
        return forkserver._forkserver._forkserver_pid is None


    if __name__ == "__main__":
        started = forkserver._forkserver._forkserver_pid is not None
        with processes.pool(1, None, ()) as pool:
            none_of_its_own = pool.apply(in_a_run_process)
        print(started, none_of_its_own)
""")


def test_the_main_job_starts_its_forkserver_once_and_its_processes_none(tmp_path):
    """`p4scope main` starts the forkserver before its commands load; the
    processes it forks load the `p4scope` script again, with the same
    arguments, and must not start a server of their own (one that did
    failed every case: a process cannot start another while it starts)."""
    script = tmp_path / "main_job.py"
    script.write_text(MAIN_JOB)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_the_runs_that_measure_in_processes_start_the_forkserver_early():
    from p4scope.cli import _measures_in_processes as early

    assert early(["p4scope", "main"])
    assert early(["p4scope", "run", "rfc2544", "--sizes", "64"])
    assert early(["p4scope", "run", "microburst", "--jobs", "2"])
    for argv in (["p4scope", "run", "rfc2544", "--jobs", "1"],
                 ["p4scope", "run", "rfc2544", "--jobs=1"],
                 ["p4scope", "run", "features", "--mode", "mininet"],
                 ["p4scope", "run", "features", "--mode=mininet"],
                 ["p4scope", "run", "all", "--cluster", "local:2"],
                 ["p4scope", "run", "rfc2889", "--chain", "3"],
                 ["p4scope", "run", "rfc2544", "--help"],
                 ["p4scope", "run", "tcp-incast"], ["p4scope", "run"],
                 ["p4scope", "compile", "x.p4"], ["p4scope"]):
        assert not early(argv), argv
