"""Every thread's stack on demand: SIGUSR1 makes a p4scope process (the
command, or a run's case worker) print them to its stderr, so a run that
hangs can be asked where it is (the tests do so before they kill a run
that did not stop)."""

from __future__ import annotations

import faulthandler
import signal


def on_sigusr1() -> None:
    """Prints every thread's stack to stderr on SIGUSR1 from now on (where
    the platform has that signal)."""
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
