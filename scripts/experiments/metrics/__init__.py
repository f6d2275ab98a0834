"""Telemetry for the monitoring stack: a Prometheus endpoint beside a run.

    telemetry  what is exposed (queue occupancy, current and max since the
               last scrape; per (egress, ingress) bytes and packets; bursts;
               drops) and its exposition as a prometheus_client collector
    feed       a run into the telemetry: the runner's events (runner.RunEvent)
               and the ground-truth trace of the case in flight
    cli        `p4scope run microburst|fairness --metrics-port N`

As for the live dashboard, the run tells this package what happens through
the runner's generic `on_event` hook; nothing in the experiments' framework
imports it. grafana-dashboard.json draws these metrics.
"""
