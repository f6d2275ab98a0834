"""Seed 001's 24 rules, written by the virtual testbed's setup_switch hook,
reach the data plane: they drop no test frame and count every one on a
permit or DSCP-rewrite rule; the hits come from the switch's counters."""

from __future__ import annotations

from pathlib import Path

import pytest


DUT = str(Path(__file__).resolve().parents[2] / "p4src" / "dut.p4")


@pytest.fixture(scope="module")
def bed():
    from p4scope.experiments.params import default_profiles
    from p4scope.experiments.testbed import VirtualSwitch, compile_dut
    from p4scope.experiments.tester.virtual import VirtualTestbed
    from p4scope.experiments.traffic import apply_profile

    prof = default_profiles()["fair"]
    with VirtualSwitch(compile_dut(Path(DUT)), prof, 1, apply_profile=apply_profile) as vs:
        yield VirtualTestbed(vs, profile=prof)


def _streams():
    from p4scope.experiments.features.rules import TEST_HEADERS
    from p4scope.experiments.tester.streams import Rate, Stream

    return [Stream(1, 2, Rate.pct(50), 64, frames=300, headers=TEST_HEADERS),
            Stream(2, 1, Rate.pct(50), 64, frames=300, headers=TEST_HEADERS)]


def test_the_seed_rules_are_hit_and_deny_no_test_frame(bed):
    from p4scope.experiments.features.params import ESG_PAIRS
    from p4scope.experiments.features.rules import RuleInstaller, esg_rules

    rules = esg_rules(ESG_PAIRS)
    assert len(rules.rules) == 24
    assert sum(r.ingress_port is None for r in rules.rules) == 12
    assert {r.action for r in rules.rules if r.ingress_port is not None} == {"set_dscp"}
    inst = RuleInstaller(rules)
    bed.setup_switch = inst
    try:
        t = bed.trial(_streams(), 20_000)
    finally:
        bed.setup_switch = None
    assert t.rx_frames == 600
    hits = {(h["action"], h["ingress_port"], h["match"]): h["packets"] for h in inst.hits()}
    # port 1 (first of pair 1-2) rewrites DSCP: its 300 frames on its two rules
    assert hits[("set_dscp", 1, "in 1 src 10.0.0.0/8 udp dport 5001-5003")] == 150
    assert hits[("set_dscp", 1, "in 1 src 10.0.0.0/8 udp dport 5004-5006")] == 150
    # port 2's frames meet no rewrite rule: the six permit rules, 50 each
    assert [v for (a, _, _), v in hits.items() if a == "permit"] == [50] * 6
    assert sum(v for (a, _, _), v in hits.items() if a == "deny") == 0


def test_without_the_rules_nothing_is_counted(bed):
    """The hit counts come from the switch: a trial without the rules
    leaves the installer's counters unread (it never installed them)."""
    from p4scope.experiments.features.params import ESG_PAIRS
    from p4scope.experiments.features.rules import RuleInstaller, esg_rules

    inst = RuleInstaller(esg_rules(ESG_PAIRS))
    bed.trial(_streams(), 20_000)
    with pytest.raises(RuntimeError, match="never installed"):
        inst.hits()
