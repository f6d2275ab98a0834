"""The experiments' parameter classes check every value themselves, so each
way of making a run (CLI, Mininet mode, plug-ins) gets the same checks."""

import math

import pytest

from p4scope.experiments import theory
from p4scope.experiments.fairness.params import FairnessParams
from p4scope.experiments.microburst.params import MicroburstParams
from p4scope.experiments.params import (EngineOptions, ParamError, Profile, default_profiles,
                                        ns_from_us)


@pytest.mark.parametrize("kw, option", [
    ({"buffer_mb": math.nan}, "--buffer-mb"), ({"buffer_mb": math.inf}, "--buffer-mb"),
    ({"buffer_mb": 1e9}, "--buffer-mb"), ({"buffer_mb": 0}, "--buffer-mb"),
    ({"alpha": math.nan}, "--alpha"), ({"alpha": 0}, "--alpha"), ({"alpha": 65}, "--alpha"),
    ({"cell_bytes": 0}, "--cell-bytes"), ({"cell_bytes": 1 << 20}, "--cell-bytes"),
    ({"seed": -1}, "--seed"), ({"seed": 2**64}, "--seed"),
])
def test_engine_options_name_the_bad_option(kw, option):
    with pytest.raises(ParamError, match=option):
        EngineOptions(**kw).profiles("fair")


def test_engine_options_in_range_make_the_profiles():
    profs = EngineOptions(1024, 64, 1, 2**64 - 1).profiles("fair,unfair")
    assert set(profs) == {"fair", "unfair"} and profs["fair"].buffer_bytes == 1 << 30
    assert EngineOptions(0.125, 1 / 128, 16384, 0).profiles("unfair")["unfair"].alpha == 1 / 128
    with pytest.raises(ParamError, match="unknown profile 'x'"):
        EngineOptions().profiles("fair,x")


def test_profiles_made_in_code_are_checked_too():
    with pytest.raises(ParamError, match="--alpha nan"):
        default_profiles(alpha=math.nan)["fair"].check()
    with pytest.raises(ParamError, match="buffer_bytes"):
        Profile("p", -5, 1.0, {"mode": "fair"}).check()


def test_fairness_and_microburst_params_refuse_non_finite_values():
    with pytest.raises(ParamError, match="--mix"):
        FairnessParams(mix=((64, math.nan),)).check()
    with pytest.raises(ParamError, match="--mix"):
        FairnessParams(mix=((64, math.inf), (128, 1.0))).check()
    with pytest.raises(ParamError, match="load"):
        FairnessParams(load=math.nan).check()
    with pytest.raises(ParamError, match="--burst-frames"):
        MicroburstParams(burst_frames=10**12).check()
    with pytest.raises(ParamError, match="--duration-us nan"):
        ns_from_us(math.nan, "--duration-us")
    assert ns_from_us(2000.0, "--duration-us") == 2_000_000


def test_buffer_theory_is_quick_at_the_largest_buffer():
    """--buffer-mb 1024 with 1-byte cells plans at once (it looped frame by
    frame for seconds per case before), with the same answer."""
    import time

    t0 = time.perf_counter()
    assert theory.dt_admitted_frames(1 << 30, 1.0, 60, voqs=4) == 14316558
    assert theory.dt_admitted_frames(1 << 30, 64.0, 1, voqs=4) == 1069563841
    assert time.perf_counter() - t0 < 0.5
    # small cases, against the frame-by-frame rule
    for B, a, c, v in ((10_000, 1.0, 60, 2), (1 << 20, 0.5, 256, 4), (123_457, 2.0, 7, 3)):
        q, used, progress = [0] * v, 0, True
        while progress:
            progress = False
            for i in range(v):
                if q[i] + c <= a * (B - used) + 1e-9:
                    q[i] += c
                    used += c
                    progress = True
        assert theory.dt_admitted_frames(B, a, c, voqs=v) == used // c
