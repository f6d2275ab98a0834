"""Compiles kept by their inputs' hash (compiler.cache): the main job
compiles each program once, and not at all when nothing changed."""

import json
import os
import shutil
from pathlib import Path

import pytest

from p4scope.compiler import cache, compile_file
from p4scope.compiler import driver as compiler_driver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def src(tmp_path, monkeypatch):
    """A copy of p4src/, an empty memo, and compile_file's calls counted."""
    shutil.copytree(ROOT / "p4src", tmp_path / "p4src")
    monkeypatch.setattr(cache, "_RESULTS", {})
    calls = []
    real = compiler_driver.compile_file
    monkeypatch.setattr(cache, "compile_file", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    return tmp_path / "p4src", calls


def _same(a, b):
    assert json.dumps(a.bmv2_json) == json.dumps(b.bmv2_json)
    assert a.p4info.SerializeToString(deterministic=True) == \
        b.p4info.SerializeToString(deterministic=True)


def test_the_same_inputs_compile_once_per_process(src):
    folder, calls = src
    inc = [str(folder / "include")]
    first = cache.compile_cached(folder / "dut.p4", inc)
    again = cache.compile_cached(folder / "dut.p4", inc)
    assert calls == [folder / "dut.p4"]
    _same(again, compile_file(folder / "dut.p4", inc))
    _same(first, again)
    again.bmv2_json["mutated"] = True  # each caller has its own copy
    assert "mutated" not in cache.compile_cached(folder / "dut.p4", inc).bmv2_json


def test_a_changed_input_compiles_again(src):
    folder, calls = src
    inc = [str(folder / "include")]
    cache.compile_cached(folder / "dut.p4", inc)
    header = sorted((folder / "include").glob("*.p4"))[0]
    header.write_text(header.read_text() + "\n// changed\n")
    cache.compile_cached(folder / "dut.p4", inc)
    cache.compile_cached(folder / "dut.p4", inc, {"X": "1"})
    assert len(calls) == 3


def test_a_store_serves_the_next_process(src, tmp_path):
    folder, calls = src
    inc = [str(folder / "include")]
    store = tmp_path / "build" / ".cache"
    fresh = cache.compile_cached(folder / "tap.p4", inc, store=store)
    cache._RESULTS.clear()  # as a new process starts
    again = cache.compile_cached(folder / "tap.p4", inc, store=store)
    assert calls == [folder / "tap.p4"]
    _same(again, fresh)


def test_a_store_keeps_the_results_used_last(src, tmp_path, monkeypatch):
    """Every edit of a program is a new key: the store keeps the
    STORE_KEEPS results used last, a result read counting as used."""
    folder, calls = src
    inc = [str(folder / "include")]
    store = tmp_path / "build" / ".cache"
    monkeypatch.setattr(cache, "STORE_KEEPS", 2)
    for n in ("1", "2"):
        cache.compile_cached(folder / "tap.p4", inc, {"EDIT": n}, store=store)
    first = cache.inputs_key(folder / "tap.p4", inc, {"EDIT": "1"})
    cache._RESULTS.clear()
    os.utime(store / f"{first}.json", (0, 0))  # long unused, until read again:
    cache.compile_cached(folder / "tap.p4", inc, {"EDIT": "1"}, store=store)
    cache.compile_cached(folder / "tap.p4", inc, {"EDIT": "3"}, store=store)
    kept = {p.name.split(".")[0] for p in store.iterdir()}
    assert kept == {first, cache.inputs_key(folder / "tap.p4", inc, {"EDIT": "3"})}
    assert len(list(store.iterdir())) == 4  # a .json and a .p4info.bin each
    assert len(calls) == 3


def test_the_main_job_compile_step_twice_writes_the_same_files(src, tmp_path, monkeypatch):
    from p4scope.commands.compile import compile_all

    folder, calls = src
    monkeypatch.chdir(tmp_path)
    assert compile_all(Path("p4src"), Path("build")) == 0
    first = {p.name: p.read_bytes() for p in Path("build").glob("*.*") if p.is_file()}
    cache._RESULTS.clear()
    assert compile_all(Path("p4src"), Path("build")) == 0
    assert {p.name: p.read_bytes() for p in Path("build").glob("*.*") if p.is_file()} == first
    assert sorted(first) == ["dut.json", "dut.p4info.txtpb", "tap.json", "tap.p4info.txtpb"]
    assert len(calls) == 2, "the second compile step compiled nothing"
