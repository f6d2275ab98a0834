"""Benchmarks that print figures (never timed tests): compile time, the
engine's packet rate and a 16x100GbE incast, the P4Runtime server's write
and read rates, the real-time loop between veth pairs, the traffic
generator, TCP through one switch in Mininet, the engine's instructions a
packet under callgrind. `p4scope bench ...` runs
them; `python -m p4scope.bench.engine` and `.incast` run on their own."""

import signal
import sys
from typing import Any, Callable, NoReturn


def as_script(main: Callable[[], Any]) -> NoReturn:
    """Runs a benchmark as `python -m p4scope.bench.X` does, its exit status
    what `main` returns: a reader that goes away (`| head -1`) ends it as
    it ends Unix tools (SIGPIPE), not with a traceback."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
