"""Reading the instrument of the reference DUT in a virtual-time case, as
the experiments that measure it (microburst, fairness) share it.

Each such case: reset the switch (fresh engine with the case's profile,
static forwarding, the instrument on the egress port, all over
P4Runtime), start the sources, run virtual time, then read the sinks, the
ground-truth trace, the instrument's reports (through the controller's
collector) or its registers and counters (over P4Runtime).
"""

from __future__ import annotations

from . import collector_port, instrument
from .params import Profile
from .testbed import COLLECTOR_PORT, COLLECTOR_UDP, TelemetryConfig, VirtualSwitch
from .traffic import Traffic

TABLES = {
    "ground_truth": "the traffic manager's occupancy trace per egress queue",
    "ground_truth_ingress": "the same per ingress port",
    "instrument_series": "what the instrument reported over time",
    "burst_events": "bursts found by the instrument and in the ground truth",
    "instrument_errors": "per case: the instrument against the ground truth",
}
"""The tables of every case measured this way (registry descriptions)."""

INTERVAL_LOG2_US = 0  # 1 us intervals of occupancy maxima (with reports)
POLL_LOG2_US = 4  # without reports: 16 us intervals, polled over P4Runtime at their ends


def collector_view(tr: Traffic):
    """The collector's view of the case's captured reports, parsed at once
    (a microburst's capture holds a report per burst packet)."""
    from p4scope.control.apps.capture import collect_capture

    return collect_capture(tr.output_block(COLLECTOR_PORT)[1], COLLECTOR_UDP)


def depth_unit(vs: VirtualSwitch) -> str:
    """What the instrument can measure depth in on this DUT build."""
    return "bytes" if vs.program.byte_depths else "frames"


def telemetry_config(capture: bool, on: int, off: int, unit: str, per_packet: bool) -> TelemetryConfig:
    """With reports captured: 1 us interval maxima and (for bursts) a report
    per packet while a burst lasts. Without: no reports; 16 us intervals
    whose maxima (and the burst registers) are polled over P4Runtime.
    Reports take no shared buffer (the collector port's rate and reserve,
    collector_port.py): a case measures the same with or without them."""
    if capture:
        return TelemetryConfig(on, off, INTERVAL_LOG2_US, report_intervals=True,
                               report_burst_packets=per_packet, bytes_mode=unit == "bytes")
    return TelemetryConfig(on, off, POLL_LOG2_US, report_intervals=False,
                           report_burst_packets=False, bytes_mode=unit == "bytes")


class InstrumentReader:
    """Reads the instrument for one case: its reports captured at the
    collector port, or (`reports` False) its registers and counters polled
    over P4Runtime at the end of every interval."""

    def __init__(self, vs: VirtualSwitch, tr: Traffic, egress: int, unit: str,
                 reports: bool = True):
        self.vs, self.tr, self.egress, self.unit = vs, tr, egress, unit
        self.captured = reports
        if reports:
            tr.capture(COLLECTOR_PORT)
        self.poller = None if reports else instrument.RegisterPoller(vs, egress, POLL_LOG2_US)

    @property
    def every_ns(self) -> int:
        return 0 if self.poller is None else self.poller.interval_ns

    @property
    def on_step(self):
        return None if self.poller is None else self.poller.poll

    def collector_within_reserve(self, prof: Profile) -> dict[str, int]:
        """The collector queue's peak; raises when reports took shared buffer."""
        with self.vs.locked() as e:
            stats = e.tm_queue_stats()
        reserved = int(prof.ports.get(COLLECTOR_PORT, {}).get("reserved_bytes", 0))
        return collector_port.check_reserve(stats, reserved, prof.cell_bytes)

    def seen(self, case_id: str) -> instrument.Seen:
        if self.poller is None:
            return instrument.from_collector(case_id, collector_view(self.tr), INTERVAL_LOG2_US,
                                             self.unit)
        return self.poller.seen(case_id, self.unit)
