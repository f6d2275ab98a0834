"""Virtual-time speed and determinism: N:1 incast at 100GbE with iMIX
(Tolly's fairness test, seed report 000): N ingress ports each at 100% of
line rate, 100 source MACs per stream, all routed to one 100GbE port.

    .venv/bin/python -m p4scope.bench.incast [--ports 16] [--ms 10] [--seed 1] [--repeats 2]

Runs the simulation --repeats times (at least twice) with the same seed,
prints the wall time per run and their median, the simulated packets and
events per second, each stream's received rate and the Jain fairness
index, and checks that every run agrees with the first byte for byte (a
hash of every frame that left the switch, and every statistic). On a
shared machine, whose speed moves from one run to the next, the median of
more runs is the figure to quote.
"""

from __future__ import annotations

import argparse
import statistics
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


def check(n_ports: int, ms: float, first_port: int, repeats: int = 2) -> str | None:
    """What is wrong with the options, if anything."""
    if not 2 <= repeats <= 50:
        return f"--repeats {repeats}: give 2..50 runs (each is held byte for byte to the first)"
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


def outcome_of(e) -> tuple:
    """What a run must repeat exactly: the digest of every frame that left
    the switch, the streams' and the queues' statistics."""
    return e.sim_digest(), e.stream_stats(), e.tm_queue_stats()


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
    ap.add_argument("--repeats", type=int, default=2,
                    help="runs, 2..50; the summary gives their median wall time (default 2)")
    args = ap.parse_args()
    bad = check(args.ports, args.ms, args.first_port, args.repeats)
    if bad:
        ap.error(bad)
    e, wall, events = run_once(args.ports, args.ms, args.seed, args.arbitration, args.first_port)
    outcome = outcome_of(e)
    runs, same = [(wall, events)], True
    for _ in range(args.repeats - 1):
        other, wall, events = run_once(args.ports, args.ms, args.seed, args.arbitration, args.first_port)
        runs.append((wall, events))
        same = same and outcome_of(other) == outcome
        del other
    st = e.stream_stats()
    rx = sum(s["rx_frames"] for s in st)
    tx = sum(s["tx_frames"] for s in st)
    print(f"{args.ports}x100GbE iMIX {args.ports}:1 incast, {args.ms:g} ms of virtual time, seed {args.seed}, "
          f"ports {args.first_port}-{args.first_port + args.ports - 1} -> {EGRESS}, {args.arbitration} arbitration")
    for i, (w, ev) in enumerate(runs):
        print(f"  run {i + 1}: {w:.2f} s wall, {ev:,} events, {tx / w:,.0f} offered packets/s simulated")
    walls = [w for w, _ in runs]
    print(f"  wall: median {statistics.median(walls):.2f} s of {len(walls)} runs "
          f"(best {min(walls):.2f}, worst {max(walls):.2f})")
    gbps = [s["rx_l1_bps"] / 1e9 for s in st]
    print(f"  offered {tx:,} frames, forwarded {rx:,} ({100 * rx / max(tx, 1):.1f}%)")
    print("  per-stream Gbps: " + " ".join(f"{g:.1f}" for g in gbps) + f"  (sum {sum(gbps):.1f})")
    print(f"  Jain fairness index {jain(gbps):.4f}")
    print(f"  determinism: digest {outcome[0]}, every run's output and statistics "
          f"{'identical' if same else 'NOT identical'} to the first's")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    from . import as_script

    as_script(main)
