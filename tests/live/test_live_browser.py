"""The dashboard as a user sees it, in real headless Chromium: a live
virtual-time microburst run (`--live`) and the replay of a stored run
(`p4scope watch`); the page's figures against the run's stored ground
truth and the collector's (instrument's) figures; a screenshot of each
under the test's tmp dir."""

from __future__ import annotations

import signal

import pandas as pd

from tests.live.live_browser import chromium, number, page_errors, value, wait_for
from tests.live.live_procs import TINY_RUN

LIVE_RUN = ["run", "microburst", "--sizes", "64,512,1518", "--sizes-4to1", "512",
            "--burst-frames", "40000", "--profiles", "fair", "--jobs", "1", "--no-report",
            "--no-progress"]


def _stored_figures(run):
    err = pd.read_parquet(run / "instrument_errors.parquet")
    be = pd.read_parquet(run / "burst_events.parquet")
    mb = pd.read_parquet(run / "microburst.parquet")
    return {"peak-truth": err["peak_truth"].max(), "peak-instrument": err["peak_instrument"].max(),
            "burst-count": int((be["source"] == "instrument").sum()),
            "burst-count-truth": int((be["source"] == "truth").sum()),
            "drops": int(mb["lost_frames"].sum())}


def _check_page_figures(drv, run):
    for element, want in _stored_figures(run).items():
        raw, text = value(drv, element)
        assert float(raw) == want, (element, raw, want)
        assert number(text) == want, (element, text, want)  # what the user reads


def test_live_run_in_chromium(tmp_path, served):
    results = tmp_path / "results"
    s = served(*LIVE_RUN, "--results", str(results), "--run-id", "live", "--live",
               "--live-linger", "300")
    url = s.url()
    with chromium(tmp_path / "profile") as drv:
        drv.get(url)
        # a picture of a case in flight, when the page shows one
        wait_for(drv, "window.p4scopeLive && (window.p4scopeLive.ended || "
                      "window.p4scopeLive.inflightSeen >= 2)", 300, "a case in flight")
        if not drv.execute_script("return window.p4scopeLive.ended"):
            drv.save_screenshot(str(tmp_path / "live-inflight.png"))
        wait_for(drv, "window.p4scopeLive && window.p4scopeLive.ended", 300, "the run's end")
        stats = drv.execute_script("return window.p4scopeLive")
        run = results / "live"
        assert '"status": "complete"' in (run / "run.json").read_text()
        # pushed while the run went: statuses in running state, every case
        assert stats["states"].get("running", 0) >= 5, stats["states"]
        assert stats["statusCount"] >= 10 and stats["casesSeen"] == 7
        assert stats["inflightSeen"] >= 3  # the case in flight, drawn as virtual time ran
        _check_page_figures(drv, run)
        assert "7/7 cases" in drv.find_element("id", "progress-text").text
        assert drv.find_element("id", "state").text == "complete"
        rows = drv.find_elements("css selector", "#cases-table tbody tr")
        assert len(rows) == 7
        assert drv.find_elements("css selector", "#bursts-table tbody tr")
        assert drv.find_element("id", "case-select").get_attribute("value") == (
            "microburst/4to1-test1/512B/fair")  # the newest case, followed
        assert not page_errors(drv)
        shot = tmp_path / "live.png"
        assert drv.save_screenshot(str(shot)) and shot.stat().st_size > 20_000
    assert s.stop(signal.SIGINT) == 0  # Ctrl-C ends the linger; the run was complete
    assert "dashboard stays at" in "".join(s.err)


def test_replay_in_chromium_with_the_time_slider(stored_run, tmp_path, served):
    s = served("watch", str(stored_run))
    url = s.url()
    with chromium(tmp_path / "profile") as drv:
        drv.get(url)
        wait_for(drv, "window.p4scopeLive && window.p4scopeLive.ended", 60, "the replay's data")
        wait_for(drv, "document.querySelector('#occupancy-plot .scatterlayer .trace')", 30,
                 "the occupancy plot")
        _check_page_figures(drv, stored_run)
        assert drv.find_element("id", "mode").text == "replay"
        # the slider at 30 % of the case: the burst (37..720 us) is going on
        drv.execute_script("const s = document.getElementById('slider'); s.value = 300;"
                           "s.dispatchEvent(new Event('input'));")
        clock = drv.find_element("id", "virtual-clock").text
        assert clock == "221.472 µs of 738.240 µs", clock
        bursts = drv.find_element("id", "bursts-table").text
        assert "ongoing" in bursts
        shot = tmp_path / "replay.png"
        assert drv.save_screenshot(str(shot)) and shot.stat().st_size > 20_000
        # zoomed in, the window comes from the server again, one column per pixel
        drv.execute_script("document.getElementById('slider').value = 1000;"
                           "document.getElementById('slider').dispatchEvent(new Event('input'));"
                           "Plotly.relayout('occupancy-plot', {'xaxis.range': [360, 380]});")
        z = wait_for(drv, "S.zoom && S.zoom.data", 30, "the zoomed window")
        q = z["queues"][0]
        assert 360_000 <= z["t0"] < z["t1"] <= 380_000 and len(q["t"]) == z["px"] >= 200
        gt = pd.read_parquet(stored_run / "ground_truth.parquet")
        top = gt[gt["case_id"] == "microburst/2to1-test2/1518B/fair"]["occupancy_bytes"].max()
        assert max(q["v"]) == top  # the peak (at 369 us) kept, a column of 20 ns or less
        # another case, picked in the table, is fetched and drawn
        drv.find_elements("css selector", "#cases-table tbody tr")[0].click()
        wait_for(drv, "document.querySelector('#occupancy-plot .gtitle') && document"
                      ".querySelector('#occupancy-plot .gtitle').textContent.includes('Test 1')",
                 30, "the first case drawn")
        assert not drv.find_element("id", "follow").is_selected()
        assert not page_errors(drv)
    assert s.stop(signal.SIGINT) == 0
