"""The test tree's one set of fixtures (tests/fixtures/, a module per
concern), registered for every folder."""

pytest_plugins = [
    "tests.fixtures.lab",
    "tests.fixtures.p4runtime_switch",
    "tests.fixtures.controller",
    "tests.fixtures.thrift_cli",
    "tests.fixtures.virtual_switch",
    "tests.fixtures.live_dashboard",
    "tests.fixtures.processes",
]
