"""A small stored run folder for report tests: made-up numbers with the
schema the experiments write (tables and columns), never measurements."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

PROFILES = {
    "fair": {"buffer_bytes": 1_000_000, "alpha": 1.0, "arbitration": "fair"},
    "unfair": {"buffer_bytes": 1_000_000, "alpha": 1.0, "arbitration": "unfair"},
}


def _tri(case_id, peak, rise_ns, fall_ns, n=50):
    t = np.concatenate([np.linspace(0, rise_ns, n), np.linspace(rise_ns, rise_ns + fall_ns, n)])
    v = np.concatenate([np.linspace(0, peak, n), np.linspace(peak, 0, n)])
    return pd.DataFrame({"case_id": case_id, "t_ns": t.astype(np.int64), "egress_port": 31,
                         "queue": 0, "occupancy_bytes": v.astype(np.int64),
                         "occupancy_frames": (v / 500).astype(np.int64)})


def make_run(root: Path) -> Path:
    run = Path(root) / "20260101T000000Z-all"
    run.mkdir(parents=True)
    micro, truth, truth_in, instr, events, errors = [], [], [], [], [], []
    for prof in PROFILES:
        for scen, comb, ports, sizes in (("2:1", "Test 1", "1 2", [64, 512, 1518]),
                                         ("2:1", "Test 2", "1 9", [64, 512, 1518]),
                                         ("4:1", "Test 1", "1 2 3 4", [512, 1518])):
            for size in sizes:
                cid = f"microburst/{scen.replace(':', 'to')}-{comb.replace(' ', '').lower()}/{size}B/{prof}"
                frames = 500_000 // (size - 4)
                micro.append({"case_id": cid, "experiment": "microburst", "profile": prof,
                              "scenario": scen, "combination": comb, "ingress_ports": ports,
                              "egress_port": 31, "frame_size": size, "burst_frames": frames * 2,
                              "forwarded_total": frames * 3, "buffered_frames": frames,
                              "buffered_bytes": frames * size,
                              "buffered_mb": frames * size / 2**20,
                              "expected_frames": frames, "error_rel": 0.0,
                              "expected_mb": frames * size / 2**20,
                              "peak_truth_bytes": 500_000})
                g = _tri(cid, 500_000, 40_000, 40_000)
                truth.append(g)
                for i, p in enumerate(ports.split()):
                    share = 0.5 if prof == "fair" else (0.8 if i == 0 else 0.2 / (len(ports.split()) - 1))
                    truth_in.append(g.assign(ingress_port=int(p),
                                             occupancy_bytes=(g["occupancy_bytes"] * share).astype(np.int64))
                                    [["case_id", "t_ns", "egress_port", "ingress_port", "occupancy_bytes"]])
                s = g.iloc[::5]
                instr.append(pd.DataFrame({"case_id": cid, "t_ns": s["t_ns"] + 300, "egress_port": 31,
                                           "queue": 0, "kind": "burst_pkt",
                                           "depth_bytes": (s["occupancy_bytes"] * 0.99).astype(np.int64),
                                           "depth_frames": s["occupancy_frames"], "ingress_port": 1}))
                for src, dt, pk in (("truth", 0, 500_000), ("instrument", 300, 495_000)):
                    events.append({"case_id": cid, "source": src, "egress_port": 31, "queue": 0,
                                   "burst_id": 1, "start_ns": 1000 + dt, "end_ns": 79_000 + dt,
                                   "peak": pk, "unit": "bytes", "peak_ns": 40_000 + dt})
                errors.append({"case_id": cid, "experiment": "microburst", "profile": prof,
                               "peak_unit": "bytes", "peak_truth": 500_000,
                               "peak_instrument": 495_000,
                               "peak_error_rel": -0.01, "start_error_ns": 300.0,
                               "end_error_ns": 300.0, "share_error_pp": np.nan,
                               "end_truth_ns": 79_000.0, "bursts_truth": 1,
                               "bursts_instrument": 1})
    streams, shares, fair = [], [], []
    for prof in PROFILES:
        for comb, ports in (("3-a", [25, 26, 27]), ("3-b", [24, 25, 26])):
            cid = f"fairness/3to1-{comb}/imix/{prof}"
            g = [33.3, 33.3, 33.4] if prof == "fair" else [50.0, 25.1, 24.9]
            pk = [1 / 3] * 3 if prof == "fair" else [0.4, 0.3, 0.3]
            for p, gb, ps in zip(ports, g, pk):
                streams.append({"case_id": cid, "experiment": "fairness", "profile": prof, "n": 3,
                                "combination": comb, "ingress_port": p, "egress_port": 31,
                                "gbps_l1": gb, "bw_share": gb / 100, "pkt_share": ps,
                                "rx_frames": 1000, "rx_bytes": 486_000, "tx_frames": 3000})
                shares.append({"case_id": cid, "profile": prof, "n": 3, "combination": comb,
                               "ingress_port": p, "egress_port": 31, "bw_share": gb / 100 + 0.001,
                               "pkt_share": ps, "truth_bw_share": gb / 100,
                               "truth_pkt_share": ps, "err_pp_bw": 0.1, "err_pp_pkt": 0.0})
            fair.append({"case_id": cid, "experiment": "fairness", "profile": prof, "n": 3,
                         "combination": comb, "ingress_ports": " ".join(map(str, ports)),
                         "jain_bw": 1.0 if prof == "fair" else 0.89, "jain_pkt": 1.0,
                         "max_min_bw": 1.0, "max_dev_bw": 0.0, "max_pkt_minus_bw_pp": 0.0,
                         "total_gbps_l1": 100.0, "instrument_jain_bw": 1.0,
                         "instrument_share_err_pp": 0.1, "fair_ok": prof == "fair"})
            g = _tri(cid, 400_000, 30_000, 10_000)
            truth.append(g)
            for i, p in enumerate(ports):
                truth_in.append(g.assign(ingress_port=p, occupancy_bytes=(g["occupancy_bytes"] / 3)
                                         .astype(np.int64))[["case_id", "t_ns", "egress_port",
                                                             "ingress_port", "occupancy_bytes"]])
            errors.append({"case_id": cid, "experiment": "fairness", "profile": prof,
                           "peak_unit": "bytes", "peak_truth": 400_000,
                           "peak_instrument": 399_000,
                           "peak_error_rel": -0.0025, "start_error_ns": np.nan,
                           "end_error_ns": np.nan, "share_error_pp": 0.1,
                           "end_truth_ns": np.nan, "bursts_truth": 1, "bursts_instrument": 2})
    tables = {
        "microburst": pd.DataFrame(micro), "ground_truth": pd.concat(truth, ignore_index=True),
        "ground_truth_ingress": pd.concat(truth_in, ignore_index=True),
        "instrument_series": pd.concat(instr, ignore_index=True),
        "burst_events": pd.DataFrame(events), "instrument_errors": pd.DataFrame(errors),
        "streams": pd.DataFrame(streams), "instrument_shares": pd.DataFrame(shares),
        "fairness": pd.DataFrame(fair),
    }
    for name, df in tables.items():
        df.to_parquet(run / f"{name}.parquet", index=False)
    meta = {"run_id": run.name, "experiment": "all", "status": "complete",
            "started": "2026-01-01T00:00:00Z", "ended": "2026-01-01T00:01:00Z",
            "seed": 1, "parameters": {"profiles": PROFILES, "line_rate_bps": 100e9},
            "program": {"name": "dut", "json_sha256": "0" * 64},
            "versions": {"p4scope": "0.1.0"}, "cases": {"planned": 28, "done": 28},
            "theory": [{"profile": p, "what": "queue limit", "formula": "alpha*B/(1+alpha)",
                        "value": 500_000, "unit": "B"} for p in PROFILES]}
    (run / "run.json").write_text(json.dumps(meta))
    return run
