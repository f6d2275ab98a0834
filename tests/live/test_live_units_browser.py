"""The dashboard's time x port heatmap and its occupancy unit (bytes or
packets), in real headless Chromium over a stored run (`p4scope watch`):
what they draw is the stored ground truth, and they follow the unit
toggle and the time slider; each burst names the ingress ports and flows
that built it; a screenshot of each unit under the test's tmp dir."""

from __future__ import annotations

import signal

import pandas as pd

from tests.live.live_browser import chromium, number, page_errors, value, wait_for

HEAT = "document.getElementById('heatmap-plot')"
CASE = "microburst/2to1-test2/1518B/fair"  # the newest case, shown first


def _heat(drv):
    """(rows, columns, the largest cell, colour bar title) of the drawn heatmap."""
    return drv.execute_script(
        f"const d = {HEAT}.data[0]; const z = d.z.flat().filter((v) => v !== null);"
        f"return [d.y, d.z[0].length, Math.max(...z), d.colorbar.title.text, d.type];")


def _slide(drv, at):
    drv.execute_script(f"const s = document.getElementById('slider'); s.value = {at};"
                       "s.dispatchEvent(new Event('input'));")


def test_heatmap_and_packets_unit_in_chromium(stored_run, tmp_path, served):
    gt = pd.read_parquet(stored_run / "ground_truth.parquet")
    gt = gt[gt["case_id"] == CASE]
    s = served("watch", str(stored_run))
    with chromium(tmp_path / "profile") as drv:
        drv.get(s.url())
        wait_for(drv, "window.p4scopeLive && window.p4scopeLive.ended", 60, "the replay's data")
        wait_for(drv, "document.querySelector('#heatmap-plot .heatmaplayer image')", 30,
                 "the heatmap drawn")
        rows, cols, top, bar, kind = _heat(drv)
        assert kind == "heatmap" and rows == ["port 31 q0"] and cols >= 200
        assert top == gt["occupancy_bytes"].max() and bar == "bytes"
        drv.save_screenshot(str(tmp_path / "replay-bytes.png"))

        drv.find_element("id", "unit-packets").click()
        wait_for(drv, f"{HEAT}.data[0].colorbar.title.text === 'packets'", 10, "packets drawn")
        rows, cols2, top, bar, _ = _heat(drv)
        assert top == gt["occupancy_frames"].max() == 3000 and cols2 == cols
        occ = drv.execute_script("const p = document.getElementById('occupancy-plot');"
                                 "return [p.layout.yaxis.title.text,"
                                 " Math.max(...p.data.find((d) => d.mode === 'lines').y)]")
        assert occ == ["packets", 3000]
        raw, text = value(drv, "peak-truth")
        assert float(raw) == 3000 and number(text) == 3000 and "packets" in text
        assert "peak packets" in drv.find_element("id", "bursts-table").text
        drv.save_screenshot(str(tmp_path / "replay-packets.png"))

        # the slider cuts the heatmap at its instant: the peak (369 us) not reached at 30 %
        _slide(drv, 300)
        _, cut, top_then, _, _ = _heat(drv)
        assert cut < cols and top_then < 3000
        _slide(drv, 1000)
        assert _heat(drv)[1] == cols

        # who built the bursts: the case's two ingress ports, half each, and their streams
        rows = drv.find_elements("css selector", "#bursts-table tbody tr")
        assert len(rows) == 2
        for r in rows:
            assert "port 1 50 % · port 9 50 %" in r.text, r.text
            assert "stream 0: port 1 → 31" in r.text and "stream 1: port 9 → 31" in r.text
        assert drv.find_element("css selector", "#drops-table tbody").text.count(" 3,000 0 ") == 2

        drv.find_element("id", "unit-bytes").click()  # and back
        wait_for(drv, f"{HEAT}.data[0].colorbar.title.text === 'bytes'", 10, "bytes drawn")
        assert _heat(drv)[2] == gt["occupancy_bytes"].max()
        assert not page_errors(drv)
    assert s.stop(signal.SIGINT) == 0
