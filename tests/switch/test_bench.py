"""The P4Runtime benchmark runs (tiny sizes: a smoke test, not a timing)."""

from __future__ import annotations

from p4scope.bench.p4runtime import print_results, run_bench


def test_bench_smoke():
    for kind in ("exact", "lpm", "ternary"):
        res = run_bench(None, entries=200, batch=50, single=20, kind=kind, repeat=1,
                        p4info_path=None, json_path=None)
        assert [r.entries for r in res] == [200, 200, 200, 200, 20]
        assert all(r.rate > 0 for r in res)
    lines = []
    print_results(res, lines.append)
    assert "entries/s" in lines[0] and len(lines) == 6
