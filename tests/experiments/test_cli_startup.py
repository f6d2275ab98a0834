"""Ctrl-C while `p4scope` loads its modules or typer builds the command
ends it as an interrupted command (status 130) without a traceback; once
loaded, Ctrl-C is Python's again (each command handles it)."""

import signal
import subprocess
import sys

import pytest

# SIGINT delivered while p4scope.cli imports one of its commands' modules
INTERRUPTED = """
import os, signal, sys

class InterruptAt:
    def find_spec(self, name, path=None, target=None):
        if name == "p4scope.experiments.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptAt())
import p4scope.cli
print("loaded")
"""

LOADED = """
import signal
import p4scope.cli
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_ctrl_c_while_loading_ends_with_130_and_no_traceback():
    r = subprocess.run([sys.executable, "-c", INTERRUPTED], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr and "loaded" not in r.stdout


def test_once_loaded_ctrl_c_is_pythons_again():
    r = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr
    # and in this process, which imported it already or does now
    import p4scope.cli  # noqa: F401

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_while_typer_builds_the_command_ends_with_130(monkeypatch):
    import p4scope.cli as cli

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "app", interrupted)
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 130 and e.value.__suppress_context__


def test_an_ignored_sigint_stays_ignored_while_loading():
    code = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            + INTERRUPTED.replace("import p4scope.cli", "import p4scope.cli\n"
                                  "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "loaded", r.stderr
