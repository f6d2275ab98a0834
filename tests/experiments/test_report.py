"""Report rendering from a small stored results folder."""

import re

from p4scope.experiments import report

from tests.experiments.fixture_run import make_run
from tests.experiments.runner_workers import run_processes


def test_report_is_self_contained_with_pngs(tmp_path):
    run = make_run(tmp_path)
    out = report.render(run)
    html = out.read_text()
    assert out == run / "report.html"
    # no network fetches: no external scripts, stylesheets or images
    assert not re.search(r'<script[^>]+src=', html)
    assert not re.search(r'<link[^>]+href="https?:', html)
    assert "cdn.plot.ly" not in html.split("</script>", 1)[1]
    assert "Plotly.newPlot" in html
    for section in ("Microburst absorption", "Fairness", "The instrument against ground truth",
                    "Theory", "Checks"):
        assert section in html
    assert "α·B / (1 + α)" in html
    assert "Stream (Source Port)" in html and "Frame Size (Bytes)" in html
    pngs = {p.name for p in (run / "figures").glob("*.png")}
    for name in ("microburst_absorption", "microburst_occupancy", "microburst_heatmap",
                 "microburst_by_ingress", "microburst_instrument", "fairness_shares_3to1",
                 "fairness_jain", "instrument_errors"):
        assert f"{name}.png" in pngs
        assert f"figures/{name}.png" in html
    # rendering only reads: the tables are untouched
    assert sorted(p.name for p in run.glob("*.parquet")) == sorted(
        f"{n}.parquet" for n in ("microburst", "ground_truth", "ground_truth_ingress",
                                 "instrument_series", "burst_events", "instrument_errors",
                                 "streams", "instrument_shares", "fairness"))


def test_partial_run_with_one_table_renders(tmp_path):
    run = make_run(tmp_path)
    for p in run.glob("*.parquet"):
        if p.stem != "microburst":
            p.unlink()
    meta = (run / "run.json").read_text().replace('"complete"', '"partial"')
    (run / "run.json").write_text(meta)
    html = report.render(run).read_text()
    assert "partial" in html
    assert "Microburst absorption" in html
    assert 'id="fairness"' not in html


def test_the_instrument_clock_as_the_run_names_it_or_as_its_times_show():
    import numpy as np
    import pandas as pd

    ev = pd.DataFrame({"source": ["truth", "instrument", "instrument"],
                       "start_ns": [1234.0, 2000.0, 7000.0], "end_ns": [9876.0, np.nan, 9000.0]})
    assert report.clock_step_ns({}, ev) == 1000  # whole microseconds: v1model's clock
    assert report.clock_step_ns({}, ev.assign(start_ns=[1234.0, 2000.0, 7003.0])) == 1
    assert report.clock_step_ns({"clock_step_ns": 1}, ev) == 1


def test_report_states_the_nanosecond_clock_of_the_instrument(tmp_path):
    html = report.render(make_run(tmp_path)).read_text()  # instrument times off whole µs
    assert "nanosecond clock" in html and "rounded down" not in html


def test_pngs_drawn_in_processes_are_the_ones_drawn_here(tmp_path):
    """jobs > 1: the PNGs are drawn in processes of their own meanwhile,
    byte for byte the same, and no drawing process is left behind."""
    run = make_run(tmp_path)
    here = report.render(run, tmp_path / "here" / "report.html")
    there = report.render(run, tmp_path / "there" / "report.html", jobs=2)
    pngs = sorted(p.name for p in (here.parent / "figures").glob("*.png"))
    assert pngs and pngs == sorted(p.name for p in (there.parent / "figures").glob("*"))
    for name in pngs:
        assert (here.parent / "figures" / name).read_bytes() == \
            (there.parent / "figures" / name).read_bytes(), name
    assert there.read_text().count("Plotly.newPlot") == here.read_text().count("Plotly.newPlot")
    assert not run_processes()


def test_a_report_starts_a_few_drawing_processes_however_many_jobs():
    from p4scope.experiments import drawing

    with drawing.pool(64) as pool:
        assert pool.submit(sum, (1, 2)).result() == 3
        drawers = run_processes()
        assert 1 <= len(drawers) <= drawing.MAX_PROCESSES
    with drawing.pool(1) as pool:
        assert pool is None
