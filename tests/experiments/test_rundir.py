"""Run folders: atomic writes, parts, partial runs, interrupts."""

import io
import json
import os
import signal

import pandas as pd
import pytest

from p4scope.experiments import rundir as rd
from p4scope.experiments.runner import Case, run_cases, sigterm_interrupts


def _cases(n):
    return [Case(f"g/c{i}/x", "g", f"case {i}", {"i": i, "ports": [1, 2]}) for i in range(n)]


def _measure(case, tick):
    tick(0.5)
    i = case.params["i"]
    return {"streams": pd.DataFrame({"case_id": [case.case_id] * 2, "port": [1, 2],
                                     "rx": [i, i + 1]})}


def test_atomic_write_leaves_no_temporary(tmp_path):
    p = tmp_path / "a.txt"
    rd.atomic_write_text(p, "one")
    rd.atomic_write_text(p, "two")
    assert p.read_text() == "two"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_run_id_unique_and_names_checked(tmp_path):
    a = rd.RunDir.create(tmp_path, "microburst", run_id="r")
    b = rd.RunDir.create(tmp_path, "microburst", run_id="r")
    assert (a.run_id, b.run_id) == ("r", "r-2")
    with pytest.raises(ValueError):
        rd.RunDir.create(tmp_path, "Bad Name")
    assert rd.new_run_id("fairness").endswith("Z-fairness")


@pytest.mark.parametrize("run_id", ["../x", "/abs", "a/b", "a\\b", "..", ".", "", "-x", "a\0b"])
def test_run_id_is_never_a_path(tmp_path, run_id):
    root = tmp_path / "results"
    with pytest.raises(ValueError, match="--run-id"):
        rd.RunDir.create(root, "microburst", run_id=run_id)
    assert list(tmp_path.iterdir()) == []
    assert rd.RunDir.create(root, "microburst", run_id="r1.v2_a-b+c").run_id == "r1.v2_a-b+c"


def test_complete_run(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g", "parameters": {"x": 1}, "seed": 7})
    meta = rd.load_meta(run.path)
    assert meta["status"] == "partial" and meta["ended"] is None

    def derive(r):
        df = rd.load_table(r.path, "streams")
        r.write_csv("seed_table", [["Stream", "Port 1", "Port 2"], ["p4scope", 1.0, 2.0]])
        r.write_csv("tidy", df)

    out = run_cases(run, _cases(3), _measure, derive=derive, progress=False)
    assert out.complete and out.done == 3
    meta = rd.load_meta(run.path)
    assert meta["status"] == "complete" and meta["ended"]
    assert meta["cases"] == {"planned": 3, "done": 3}
    assert "streams" in meta["tables"] and "cases" in meta["tables"]
    assert not (run.path / "parts").exists()
    df = pd.read_parquet(run.path / "streams.parquet")
    assert len(df) == 6 and list(df["rx"]) == [0, 1, 1, 2, 2, 3]
    assert (run.path / "seed_table.csv").read_text().splitlines()[1] == "p4scope,1.0,2.0"
    cases = pd.read_parquet(run.path / "cases.parquet")
    assert list(cases["status"]) == ["complete"] * 3
    assert list(cases["param_ports"]) == ["1 2"] * 3


def test_interrupt_keeps_measured_cases_and_marks_partial(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})

    def measure(case, tick):
        if case.params["i"] == 2:
            raise KeyboardInterrupt
        return _measure(case, tick)

    derived = []
    out = run_cases(run, _cases(5), measure, derive=lambda r: derived.append(1), progress=False)
    assert not out.complete and out.done == 2
    meta = rd.load_meta(run.path)
    assert meta["status"] == "partial"
    assert "Ctrl-C" in meta["partial_reason"]
    assert meta["cases"] == {"planned": 5, "done": 2}
    assert len(pd.read_parquet(run.path / "streams.parquet")) == 4
    assert list(pd.read_parquet(run.path / "cases.parquet")["status"]) == [
        "complete", "complete", "interrupted"]
    assert derived == [1]


def test_real_sigint_during_a_case(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})

    def measure(case, tick):
        if case.params["i"] == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return _measure(case, tick)

    out = run_cases(run, _cases(4), measure, progress=False)
    assert not out.complete
    assert rd.load_meta(run.path)["status"] == "partial"
    # the case that was running when the signal came finished its own work
    # or was dropped; never half-stored
    df = pd.read_parquet(run.path / "streams.parquet")
    assert len(df) in (2, 4)


def test_sigterm_during_a_case_ends_the_run_as_ctrl_c_does(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})
    before = signal.getsignal(signal.SIGTERM)

    def measure(case, tick):
        if case.params["i"] == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return _measure(case, tick)

    with sigterm_interrupts():
        out = run_cases(run, _cases(4), measure, progress=False)
    assert signal.getsignal(signal.SIGTERM) is before
    assert not out.complete and out.signal == signal.SIGTERM and out.error is None
    meta = rd.load_meta(run.path)
    assert meta["status"] == "partial" and meta["partial_reason"] == "terminated (SIGTERM)"
    assert meta["ended"] and not (run.path / "parts").exists()
    assert list(pd.read_parquet(run.path / "cases.parquet")["status"])[0] == "complete"


def test_failed_case_is_recorded(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})

    def measure(case, tick):
        if case.params["i"] == 1:
            raise RuntimeError("engine went away")
        return _measure(case, tick)

    out = run_cases(run, _cases(3), measure, progress=False)
    assert not out.complete and isinstance(out.error, RuntimeError)
    meta = rd.load_meta(run.path)
    assert meta["status"] == "partial" and "engine went away" in meta["partial_reason"]
    assert "RuntimeError" in meta["error_traceback"]


def test_killed_run_parts_are_still_readable(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})
    run.add_part("streams", pd.DataFrame({"a": [1]}))
    run.add_part("streams", pd.DataFrame({"a": [2]}))
    run.add_part("streams", pd.DataFrame())  # empty frames are not stored
    # no finish(): as after SIGKILL
    assert rd.load_meta(run.path)["status"] == "partial"
    assert list(rd.load_table(run.path, "streams")["a"]) == [1, 2]
    assert rd.list_tables(run.path) == ["streams"]
    assert rd.load_table(run.path, "nothing") is None
    with pytest.raises(FileNotFoundError):
        rd.load_meta(tmp_path)
    # a later finish picks the parts up
    again = rd.RunDir(run.path)
    again.meta = json.loads((run.path / "run.json").read_text())
    again.finish(False, "recovered")
    assert list(pd.read_parquet(run.path / "streams.parquet")["a"]) == [1, 2]


def test_consolidation_uses_the_parts_it_stored_without_reading_them_back(tmp_path, monkeypatch):
    """The parts a RunDir stored (as frames or encoded by a worker) are
    consolidated from memory, into the very table reading them back gives;
    parts another process left are read from disk."""
    frames = [pd.DataFrame({"case_id": [f"c{i}"] * 3, "v": [i, i + 0.5, None],
                            "s": ["a", None, "b"]}) for i in range(3)]
    earlier = rd.RunDir.create(tmp_path, "g", "r")
    earlier.add_part("left", frames[0])  # a killed run's part
    run = rd.RunDir(earlier.path)
    run.add_part("left", frames[1])
    run.add_part("t", frames[0])
    run.add_part("t", rd.StoredPart.of(frames[1]))
    run.add_part("t", pd.DataFrame())
    run.add_part("t", frames[2])
    expect = rd.read_parts(run.path / rd.PARTS / "t")
    read = []
    real = pd.read_parquet
    monkeypatch.setattr(pd, "read_parquet", lambda p, *a, **k: read.append(p) or real(p, *a, **k))
    assert sorted(run.consolidate()) == ["left", "t"]
    assert read == [run.path / rd.PARTS / "left" / n for n in ("00000.parquet", "00001.parquet")]
    pd.testing.assert_frame_equal(run.tables["t"], expect)
    pd.testing.assert_frame_equal(real(run.path / "t.parquet"), expect)
    assert (run.path / "t.parquet").read_bytes() == rd.parquet_bytes(expect)
    assert len(run.tables["left"]) == 6


def test_consolidated_parts_whose_column_types_differ(tmp_path):
    """Parts whose columns differ in type (a column all missing in one
    case, integers in one and floats in another) make the table pandas'
    concatenation makes of them, in memory and (as Parquet) on disk."""
    frames = [pd.DataFrame({"s": ["a", "b"], "n": [1, 2]}),
              pd.DataFrame({"s": [None, None], "n": [0.5, 1.5]}),
              pd.DataFrame({"s": ["c"], "n": [3]})]
    run = rd.RunDir.create(tmp_path, "g", "r")
    for f in frames:
        run.add_part("t", f)
    expect = rd.read_parts(run.path / rd.PARTS / "t")
    run.consolidate()
    pd.testing.assert_frame_equal(run.tables["t"], expect)
    assert (run.path / "t.parquet").read_bytes() == rd.parquet_bytes(expect)
    assert list(expect["n"]) == [1.0, 2.0, 0.5, 1.5, 3.0]


def test_consolidated_categorical_parts_are_joined_as_pandas_joins_them(tmp_path):
    """Categorical columns whose categories differ from case to case: the
    table is what reading the parts back and concatenating them gives."""
    frames = [pd.DataFrame({"k": pd.Categorical(c), "n": [i] * len(c)})
              for i, c in enumerate((["x", "y"], ["z"], ["y", "x"]))]
    run = rd.RunDir.create(tmp_path, "g", "r")
    for f in frames:
        run.add_part("t", rd.StoredPart.of(f))
    expect = rd.read_parts(run.path / rd.PARTS / "t")
    run.consolidate()
    pd.testing.assert_frame_equal(run.tables["t"], expect)
    assert (run.path / "t.parquet").read_bytes() == rd.parquet_bytes(expect)


def test_parts_of_one_schema_make_the_table_reading_them_back_makes(tmp_path, monkeypatch):
    """Parts of one schema (a worker's, each case's rows) are joined as
    Arrow tables and converted once, without a frame per part: the table
    is the one reading the parts back and concatenating them gives, for
    every kind of column the experiments store, in memory and on disk."""
    import numpy as np

    df = pd.DataFrame({
        "i": np.arange(6, dtype="int64"), "u": np.arange(6, dtype="uint32"),
        "f": [0.5, np.nan, 2.0, 3.0, np.nan, 1.0], "n": pd.array([1, None, 3, 4, 5, None], "Int64"),
        "b": [True, False, True, True, False, False], "s": ["a", None, "c", "d", None, "f"],
        "t": pd.to_datetime([1, 2, 3, 4, 5, 6], unit="s"),
        "lists": [[1, 2], [], [3], [4], [], [5, 6]]})
    run = rd.RunDir.create(tmp_path, "g", "r")
    for rows in (slice(0, 2), slice(2, 3), slice(3, 6)):
        run.add_part("t", rd.StoredPart.of(df.iloc[rows]))
    expect = rd.read_parts(run.path / rd.PARTS / "t")
    monkeypatch.setattr(rd, "_concat_parts", lambda frames: pytest.fail("parts made into frames"))
    run.consolidate()
    pd.testing.assert_frame_equal(run.tables["t"], expect, check_exact=True)
    assert list(run.tables["t"].dtypes) == list(expect.dtypes)
    assert (run.path / "t.parquet").read_bytes() == rd.parquet_bytes(expect)
    back = pd.read_parquet(run.path / "t.parquet")  # every column through table_options' encodings
    pd.testing.assert_frame_equal(back, expect, check_exact=True)
    assert list(back.dtypes) == list(expect.dtypes)


def test_a_stored_part_holds_the_frame_its_bytes_read_back_as():
    """Every kind of column the experiments store: the frame a worker sends
    along is the one the part file gives, dtypes and missing values too."""
    import numpy as np

    df = pd.DataFrame({
        "i": np.array([1, -2, 3], dtype="int64"), "u": np.array([1, 2, 3], dtype="uint32"),
        "f": [0.5, np.nan, 2.0], "int_none": [1, None, 3], "b": [True, False, True],
        "s": ["a", None, "c"], "none": [None, None, None], "mixed_num": [1, 2.5, None],
        "cat": pd.Categorical(["x", "y", "x"]), "t": pd.to_datetime([1, 2, 3], unit="s"),
        "lists": [[1, 2], [], [3]]})
    for frame in (df, df.iloc[1:]):  # empty frames are never stored
        part = rd.StoredPart.of(frame)
        back = pd.read_parquet(io.BytesIO(part.data))
        pd.testing.assert_frame_equal(part.frame, back, check_exact=True)
        assert list(part.frame.dtypes) == list(back.dtypes)


def test_a_case_is_counted_only_once_its_parts_are_on_disk(tmp_path, monkeypatch):
    """The runner writes a case's parts without a sync each, syncs them
    together, and only then says in run.json that the case is done."""
    events = []
    real_sync = rd.sync_files
    monkeypatch.setattr(rd, "sync_files", lambda paths: (
        events.append(("sync", sorted(p.parent.name for p in paths))), real_sync(paths)))
    real_update = rd.RunDir.update
    monkeypatch.setattr(rd.RunDir, "update", lambda self, **f: (
        events.append(("run.json", f.get("cases"))), real_update(self, **f)))
    run = rd.RunDir.create(tmp_path, "g")
    run.start({})
    events.clear()
    assert run_cases(run, _cases(2), _measure, progress=False).complete
    counted = [e for e in events if e[0] == "run.json" and e[1] and e[1]["done"]]
    assert [c[1]["done"] for c in counted] == [1, 2]
    for n in (1, 2):
        at = events.index(("run.json", {"planned": 2, "done": n}))
        assert events[at - 1] == ("sync", ["cases", "streams"]), events


def test_synced_files_without_syncfs_are_each_synced(tmp_path, monkeypatch):
    """Where syncfs(2) is missing (or fails), every file and its folder
    is synced one by one instead."""
    from p4scope import fileio

    paths = [tmp_path / "a" / "1.parquet", tmp_path / "b" / "2.parquet"]
    for p in paths:
        p.parent.mkdir()
        fileio.write_atomic(p, b"x", durable=False)
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(fileio, "_syncfs", lambda folder: False)
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}"))
                        or real_fsync(fd))
    fileio.sync_files(paths)
    assert sorted(synced) == sorted(str(p) for p in paths + [p.parent for p in paths])
    fileio.sync_files([])  # nothing to sync
