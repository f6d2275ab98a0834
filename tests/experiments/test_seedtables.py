"""Seed-shaped tables from tidy tables."""

import pandas as pd

from p4scope.experiments import seedtables as st
from p4scope.experiments.rundir import RunDir, load_meta
from p4scope.experiments.fairness import tables as ft
from p4scope.experiments.microburst import tables as mt
from p4scope.experiments.seedcsv import derive_csvs

from tests.experiments.fixture_run import make_run


def _streams():
    rows = []
    for prof, g in (("fair", [33.3, 33.3, 33.4]), ("unfair", [50.0, 25.1, 24.9])):
        for p, x in zip((25, 26, 27), g):
            rows.append({"experiment": "fairness", "n": 3, "combination": "25-27", "profile": prof,
                         "ingress_port": p, "gbps_l1": x})
    return pd.DataFrame(rows)


def test_table3_shape():
    rows = ft.table3_fairness(_streams())
    assert rows[0] == ["Three Source Ports Test"]
    assert rows[1] == ["Stream (Source Port)", "Port 25", "Port 26", "Port 27"]
    assert rows[2] == ["p4scope fair", 33.3, 33.3, 33.4]
    assert rows[3] == ["p4scope unfair", 50.0, 25.1, 24.9]
    assert rows[-1][0].startswith("Note")


def test_table4_shape():
    rows = []
    for prof in ("fair", "unfair"):
        for comb, ports in (("Test 1", "1 2"), ("Test 2", "1 9")):
            for size, mb in ((64, 4.991), (9216, 9.25)):
                rows.append({"scenario": "2:1", "profile": prof, "combination": comb,
                             "ingress_ports": ports, "egress_port": 31, "frame_size": size,
                             "buffered_mb": mb, "buffered_frames": 100})
    t = mt.table4_microburst(pd.DataFrame(rows))
    assert t[0] == ["Frame Size (Bytes)", "", 64, 9216]
    assert t[1] == ["p4scope fair", "Test 1", 4.99, 9.25]
    assert t[2] == ["", "Test 2", 4.99, 9.25]
    assert t[3][0] == "p4scope unfair"
    assert "Port 1 --> Port 31 and Port 9 --> Port 31" in t[-1][0]
    f = mt.table4_microburst(pd.DataFrame(rows), "buffered_frames", digits=0)
    assert f[1] == ["p4scope fair", "Test 1", 100, 100]
    assert mt.burst_4to1(pd.DataFrame(rows)) == []


def test_seed_csvs_from_a_stored_run(tmp_path):
    run = RunDir(make_run(tmp_path))
    run.meta = load_meta(run.path)
    names = derive_csvs(run)
    assert set(names) == {"table3_fairness_gbps", "fairness_summary", "table4_microburst_mb",
                          "table4_microburst_frames", "burst_4to1_mb"}
    text = (run.path / "table4_microburst_mb.csv").read_text().splitlines()
    assert text[0] == "Frame Size (Bytes),,64,512,1518"
    t3 = (run.path / "table3_fairness_gbps.csv").read_text().splitlines()
    assert t3[1] == "Stream (Source Port),Port 25,Port 26,Port 27"
