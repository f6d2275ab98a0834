"""The test tree's one set of fixtures (tests/fixtures/, a module per
concern), registered for every folder."""

import signal

# A shell without job control starts a background command with SIGINT
# ignored (POSIX), which Python then leaves ignored and every process the
# tests start inherits: the Ctrl-C tests (a run interrupted, a dashboard
# stopped) need it delivered as a user's Ctrl-C is.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = [
    "tests.fixtures.lab",
    "tests.fixtures.p4runtime_switch",
    "tests.fixtures.controller",
    "tests.fixtures.thrift_cli",
    "tests.fixtures.virtual_switch",
    "tests.fixtures.live_dashboard",
    "tests.fixtures.processes",
]
