"""Telemetry for the monitoring stack: a Prometheus endpoint beside a run or a watch.

    telemetry   what is exposed (queue occupancy, current and max since the
                last scrape; per (egress, ingress) bytes and packets; bursts;
                drops; INT hop latency) and its exposition as a
                prometheus_client collector
    hop_latency the hop-latency histograms and maxima per (switch, node, port)
    feed        a run into the telemetry: the runner's events (runner.RunEvent)
                and the ground-truth trace of the case in flight
    watch_feed  a watched switch into the telemetry (`p4scope watch`'s INT
                reports and P4Runtime reads, live/attach.py)
    cli         `p4scope run microburst|fairness --metrics-port N`, the
                endpoint `p4scope watch --metrics-port N` opens too

As for the live dashboard, the run tells this package what happens through
the runner's generic `on_event` hook; nothing in the experiments' framework
imports it. grafana-dashboard.json draws these metrics.
"""
