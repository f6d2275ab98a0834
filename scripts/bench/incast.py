"""Virtual-time speed and determinism: N:1 incast at 100GbE with iMIX
(Tolly's fairness test, seed report 000): N ingress ports each at 100% of
line rate, 100 source MACs per stream, all routed to one 100GbE port.

    .venv/bin/python -m p4scope.bench.incast [--ports 16] [--ms 10] [--seed 1]

Runs the simulation twice with the same seed, prints the wall time per run,
the simulated packets and events per second, each stream's received rate
and the Jain fairness index, and checks that both runs agree byte for byte
(a hash of every frame that left the switch, and every statistic).
"""

from __future__ import annotations

import argparse
import time

import p4scope_dataplane as dp

from p4scope.bench.engine import l2l3_json

EGRESS = 31


ARBITRATION = {
    "fifo": "fifo",
    "fair": "fair",
    # Tomahawk-like: ingress ports in groups of 8 (1-8, 9-16, ...), groups first
    "groups": {"mode": "groups", "group_size": 8, "first_port": 1},
}


def build(n_ports: int, seed: int, arbitration: str, first_port: int = 9):
    e = dp.Engine(l2l3_json(), seed=seed)
    e.tm_configure({
        "defaults": {"rate_bps": "100G", "arbitration": ARBITRATION[arbitration]},
        "buffer": {"size_bytes": "16M", "alpha": 1},
    })
    # everything to 10.0.255.0/24 leaves on the congested port
    e.table_add("ingress.ipv4_lpm", "ingress.set_nhop", [("lpm", (10 << 24) | (255 << 8), 24)],
                [1, EGRESS])
    e.table_add("ingress.forward", "ingress.set_dmac", [1], [0x020000000031])
    for i in range(n_ports):
        e.add_stream(first_port + i, rate_pct=100, imix=True, macs=100,
                     dst_ip=(10 << 24) | (255 << 8) | 1, name=f"port{first_port + i}")
    return e


def check(n_ports: int, ms: float, first_port: int) -> str | None:
    """What is wrong with the options, if anything."""
    if n_ports < 1:
        return f"--ports {n_ports}: at least 1"
    if not 0 < ms <= 10_000:
        return f"--ms {ms:g}: give more than 0 and at most 10000 ms of virtual time"
    last = first_port + n_ports - 1
    if first_port < 0 or last > 510:
        return f"--first-port {first_port}, --ports {n_ports}: the ingress ports must lie in 0..510"
    if first_port <= EGRESS <= last:
        return f"--first-port {first_port}, --ports {n_ports}: the ingress ports {first_port}-{last} " \
               f"include the congested egress port {EGRESS}"
    return None


def run_once(n_ports: int, ms: float, seed: int, arbitration: str, first_port: int):
    e = build(n_ports, seed, arbitration, first_port)
    t0 = time.perf_counter()
    events = e.run(duration_ns=int(ms * 1e6))
    wall = time.perf_counter() - t0
    return e, wall, events


def jain(xs):
    s = sum(xs)
    return s * s / (len(xs) * sum(x * x for x in xs)) if xs and s else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m p4scope.bench.incast",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--ports", type=int, default=16)
    ap.add_argument("--ms", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arbitration", default="fair", choices=sorted(ARBITRATION),
                    help="ingress arbitration at the congested port (groups: Tomahawk-like, "
                         "8-port groups served group first)")
    ap.add_argument("--first-port", type=int, default=9,
                    help="the ingress ports are FIRST..FIRST+N-1 (Tolly used 9-24, 8-23, ...)")
    args = ap.parse_args()
    bad = check(args.ports, args.ms, args.first_port)
    if bad:
        ap.error(bad)
    runs = [run_once(args.ports, args.ms, args.seed, args.arbitration, args.first_port)
            for _ in range(2)]
    e, wall, events = runs[0]
    st = e.stream_stats()
    rx = sum(s["rx_frames"] for s in st)
    tx = sum(s["tx_frames"] for s in st)
    print(f"{args.ports}x100GbE iMIX {args.ports}:1 incast, {args.ms:g} ms of virtual time, seed {args.seed}, "
          f"ports {args.first_port}-{args.first_port + args.ports - 1} -> {EGRESS}, {args.arbitration} arbitration")
    for i, (_, w, ev) in enumerate(runs):
        print(f"  run {i + 1}: {w:.2f} s wall, {ev:,} events, {tx / w:,.0f} offered packets/s simulated")
    gbps = [s["rx_l1_bps"] / 1e9 for s in st]
    print(f"  offered {tx:,} frames, forwarded {rx:,} ({100 * rx / max(tx, 1):.1f}%)")
    print("  per-stream Gbps: " + " ".join(f"{g:.1f}" for g in gbps) + f"  (sum {sum(gbps):.1f})")
    print(f"  Jain fairness index {jain(gbps):.4f}")
    d = [r[0].sim_digest() for r in runs]
    same = d[0] == d[1] and runs[0][0].stream_stats() == runs[1][0].stream_stats() \
        and runs[0][0].tm_queue_stats() == runs[1][0].tm_queue_stats()
    print(f"  determinism: digests {d[0]} / {d[1]}: {'identical' if same else 'DIFFERENT'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    from . import as_script

    as_script(main)
