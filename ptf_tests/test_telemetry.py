"""The telemetry instrument: report format, per-ingress counters, queue
depth under congestion, burst detection, reports to the controller."""

from ptf.testutils import group

from tel_features import TelemetryTest


@group("telemetry")
class ReportFormat(TelemetryTest):
    """Postcards are INT Telemetry Reports v2.0 over UDP to the collector,
    every field as specified, numbered one by one."""

    def runTest(self):
        p = self.need_ports(4)
        self.run_postcards(p[0], p[2], p[3], sizes=(100, 61, 300, 1514))


@group("telemetry")
class IngressCounters(TelemetryTest):
    """Per (egress, ingress) counters add up to what each port sent."""

    def runTest(self):
        p = self.need_ports(4)
        for sent, out in (({p[0]: 7, p[1]: 5}, p[2]), ({p[0]: 1, p[1]: 4, p[3]: 3}, p[2])):
            self.run_pair_counters(sent, out)


@group("telemetry")
class QueueDepthGrows(TelemetryTest):
    """A rate-limited queue builds up under a burst; postcards and the
    occupancy histogram agree."""

    def runTest(self):
        p = self.need_ports(4)
        self.run_queue_growth(burst=24, in_ports=p[:2], out=p[2], collector=p[3], min_peak=4)


@group("telemetry")
class BurstReports(TelemetryTest):
    """Burst reports appear when, and only when, the threshold is crossed."""

    def runTest(self):
        p = self.need_ports(4)
        self.run_burst_detection(threshold=3, end=1, burst=20, in_ports=p[:2], out=p[2],
                                 collector=p[3])


@group("telemetry")
class ReportsToController(TelemetryTest):
    """With the CPU port as the collector port, reports arrive as packet-ins."""

    def runTest(self):
        p = self.need_ports(3)
        self.run_reports_as_packet_ins(3, p[0], p[2])
