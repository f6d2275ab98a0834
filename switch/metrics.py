"""The switch's traffic-manager statistics for Prometheus (`p4scope switch
... -- --metrics-port N`): per egress port and queue, what it holds now
(in all and per ingress port), the most it held since the last scrape
(queue_maxima.py) and since the switch started, what went in and out, and
the drops by reason, read from the running engine (tm_queue_stats,
tm_occupancy) at each scrape.

Series names and labels are those of a run's endpoint
(p4scope.experiments.metrics) where they mean the same, so one Grafana
dashboard draws both: `switch` (here "device-<device id>"), `port`,
`queue`, `ingress`.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from .queue_maxima import QueueMaxima, device_engine

Metric = Any


class QueueStatsCollector:
    """A prometheus_client collector over a Device's current engine (read
    under the device's lock, as every engine call). With `maxima` (its
    thread started by the caller) it adds each queue's most since the
    last scrape."""

    def __init__(self, device: Any, switch: str, maxima: Optional[QueueMaxima] = None):
        self.device = device
        self.switch = switch
        self.maxima = maxima
        self.since_scrape: dict[tuple[int, int], tuple[float, float]] = {}

    def read(self) -> tuple[list[dict[str, Any]], dict[tuple[int, int], dict[int, tuple[int, int]]]]:
        """(tm_queue_stats, per queue the ingress ports' (pkts, bytes) held
        now); the maxima since the last scrape into `since_scrape`."""
        with self.device.lock:
            raw = device_engine(self.device)
            if raw is None:  # no program loaded yet
                self.since_scrape = {}
                return [], {}
            traced = self.maxima is not None and self.maxima.safe_fold()
            stats = list(raw.tm_queue_stats())
            if traced:
                self.since_scrape = self.maxima.take(
                    {(int(q["port"]), int(q["queue"])): (float(q["bytes"]), float(q["pkts"]))
                     for q in stats})
            held = {}
            for q in stats:
                occ = raw.tm_occupancy(int(q["port"]), int(q["queue"]))
                held[(int(q["port"]), int(q["queue"]))] = dict(occ.get("ingress", {}))
        return stats, held

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        stats, held = self.read()
        lq = ["switch", "port", "queue"]

        def gauge(name: str, doc: str, key: str) -> Metric:
            g = GaugeMetricFamily(name, doc, labels=lq)
            for q in stats:
                g.add_metric([self.switch, str(q["port"]), str(q["queue"])], float(q[key]))
            return g

        def counter(name: str, doc: str, key: str) -> Metric:
            c = CounterMetricFamily(name, doc, labels=lq)
            for q in stats:
                c.add_metric([self.switch, str(q["port"]), str(q["queue"])], float(q[key]))
            return c

        yield gauge("p4scope_queue_occupancy_bytes", "Bytes held in an egress queue now.", "bytes")
        yield gauge("p4scope_queue_occupancy_packets", "Packets held in an egress queue now.", "pkts")
        if self.since_scrape:
            top = [GaugeMetricFamily(f"p4scope_queue_occupancy_max_{u}",
                                     f"The most {u} an egress queue held since the last scrape.",
                                     labels=lq) for u in ("bytes", "packets")]
            for (port, queue), (nbytes, pkts) in sorted(self.since_scrape.items()):
                top[0].add_metric([self.switch, str(port), str(queue)], nbytes)
                top[1].add_metric([self.switch, str(port), str(queue)], pkts)
            yield from top
        yield gauge("p4scope_queue_peak_bytes",
                    "The most bytes an egress queue held since the switch started.", "peak_bytes")
        yield gauge("p4scope_queue_peak_packets",
                    "The most packets an egress queue held since the switch started.", "peak_pkts")
        yield counter("p4scope_queue_enqueued_packets", "Packets enqueued.", "enq_pkts")
        yield counter("p4scope_queue_enqueued_bytes", "Bytes enqueued.", "enq_bytes")
        yield counter("p4scope_queue_dequeued_packets", "Packets dequeued (sent).", "deq_pkts")
        yield counter("p4scope_queue_dequeued_bytes", "Bytes dequeued (sent).", "deq_bytes")
        drops = CounterMetricFamily("p4scope_queue_drops", "Packets the traffic manager dropped "
                                    "at an egress queue, by reason.", labels=[*lq, "reason"])
        for q in stats:
            for reason, n in sorted(dict(q.get("drops", {})).items()):
                drops.add_metric([self.switch, str(q["port"]), str(q["queue"]), str(reason)],
                                 float(n))
        yield drops
        ing = [GaugeMetricFamily(f"p4scope_queue_ingress_occupancy_{u}",
                                 f"{u.capitalize()} an egress queue holds now that came in on "
                                 "an ingress port.", labels=[*lq, "ingress"])
               for u in ("packets", "bytes")]
        for (port, queue), per in sorted(held.items()):
            for i, (pkts, nbytes) in sorted(per.items()):
                labels = [self.switch, str(port), str(queue), str(i)]
                ing[0].add_metric(labels, float(pkts))
                ing[1].add_metric(labels, float(nbytes))
        yield from ing


class MetricsServer:
    """The endpoint (prometheus_client's HTTP server in a thread) of one
    device; binding happens here: OSError when the port is taken."""

    def __init__(self, device: Any, switch: str, port: int, address: str = "127.0.0.1"):
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry(auto_describe=False)
        self.maxima = QueueMaxima(device)
        registry.register(QueueStatsCollector(device, switch, self.maxima))
        self.httpd, self._thread = start_http_server(port, address, registry)
        host = f"[{address}]" if ":" in address else address
        self.address = f"{host}:{self.httpd.server_port}"
        self.maxima.start()

    def stop(self) -> None:
        self.maxima.stop()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
