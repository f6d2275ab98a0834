"""The virtual testbed's setup_switch hook: entries an experiment needs
beyond forwarding are written after every trial's reset (the switch starts
each trial empty), and reach the data plane."""

from __future__ import annotations

from p4scope.control.apps.acl import Acl, AclRule


def _streams():
    from p4scope.experiments.tester.streams import Rate, Stream

    return [Stream(1, 2, Rate.pct(50), 64, frames=300), Stream(2, 1, Rate.pct(50), 64, frames=300)]


def test_setup_switch_writes_entries_after_every_reset(virtual_switch):
    from p4scope.experiments.tester.virtual import VirtualTestbed

    bed = VirtualTestbed(virtual_switch)
    calls = []

    def deny_all(sw):
        calls.append(sw)
        Acl(sw).add(AclRule(1, "deny", src="10.0.0.0/8"))

    bed.setup_switch = deny_all
    for _ in range(2):  # the second trial starts from a fresh switch too
        t = bed.trial(_streams(), 20_000)
        assert t.tx_frames == 600 and t.rx_frames == 0
    assert len(calls) == 2 and calls[0] is virtual_switch.sw
    bed.setup_switch = None
    t = bed.trial(_streams(), 20_000)
    assert t.rx_frames == 600  # no hook: forwarding only, nothing denied
