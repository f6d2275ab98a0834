"""The dashboard of a run with the instrument in the DUT's path
(--instrument tap): what the taps inferred is shown where the DUT's
instrument's reports are, gaps (lost reports) left empty; and `--live`
runs with the tap in virtual time."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.live import session as live_session
from p4scope.experiments.live.model import RunModel, digest


def tables(cid: str = "c") -> dict[str, pd.DataFrame]:
    truth = pd.DataFrame({"case_id": cid, "egress_port": 3, "queue": 0,
                          "t_ns": [0, 100, 200, 300], "occupancy_bytes": [0, 1500, 3000, 0],
                          "occupancy_frames": [0, 1, 2, 0]})
    tap = pd.DataFrame({"case_id": cid, "egress_port": 3, "queue": 0,
                        "t_ns": [0, 100, 150, 200, 300],
                        "occupancy_bytes": [0, 1500, np.nan, 3000, 0],
                        "occupancy_frames": [0, 1, np.nan, 2, 0],
                        "valid": [True, True, False, True, True]})
    return {"ground_truth": truth, "tap_series": tap}


def test_the_taps_occupancy_is_shown_as_the_instruments():
    c = digest("c", "case", 0, tables())
    rep = c.reports["port 3"]
    assert list(rep.t) == [0, 100, 200, 300] and list(rep.v) == [0, 1500, 3000, 0]
    assert list(c.reports_pkts["port 3"].v) == [0, 1, 2, 0]
    assert c.peak_instrument == 3000 and c.peak_instrument_pkts == 2
    assert c.queues["port 3 q0"].v.max() == 3000  # the truth as before
    s = c.series(0, 300, px=3)
    assert s["reports"][0]["name"] == "port 3" and max(s["reports"][0]["v"]) == 3000
    assert not any(isinstance(v, float) and math.isnan(v) for v in s["reports"][0]["v"])


def test_a_run_with_its_own_instrument_keeps_its_reports():
    t = tables()
    t["instrument_series"] = pd.DataFrame({"case_id": "c", "egress_port": 3, "t_ns": [150],
                                           "depth_bytes": [2000], "kind": ["interval"]})
    c = digest("c", "case", 0, t)
    assert list(c.reports["port 3"].v) == [2000]


def test_live_runs_with_the_tap_in_virtual_time(tmp_path, monkeypatch):
    """microburst --instrument tap --live: the dashboard serves, and each
    case it got shows the taps' inferred queue."""
    models: list[RunModel] = []
    close = live_session.LiveSession.close

    def keep(self, linger_s=0.0):
        close(self, linger_s)
        models.append(self.model)
    monkeypatch.setattr(live_session.LiveSession, "close", keep)
    r = CliRunner().invoke(app, ["run", "microburst", "--instrument", "tap", "--sizes", "1518",
                                 "--sizes-4to1", "none", "--profiles", "fair", "--buffer-mb", "1",
                                 "--live", "--no-progress", "--no-report", "--results",
                                 str(tmp_path), "--run-id", "lv"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "dashboard at http://127.0.0.1:" in r.output
    (m,) = models
    assert m.status()["state"] == "complete" and m.count() == 2
    for s in m.summaries():
        c = m.case(s["id"])
        assert c.reports and max(float(x.v.max()) for x in c.reports.values()) > 0
        assert c.peak_instrument == c.peak_instrument  # a number: the taps' peak
