"""A started embedded switch with the reference DUT, shared by the tester's
engine tests (compiling and starting it once). Tests that need no engine
(the Mininet testbed's, the searches') run without it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def virtual_switch():
    from p4scope.experiments.params import default_profiles
    from p4scope.experiments.testbed import VirtualSwitch, compile_dut
    from p4scope.experiments.traffic import apply_profile

    with VirtualSwitch(compile_dut(), default_profiles()["fair"], 1,
                       apply_profile=apply_profile) as vs:
        yield vs
