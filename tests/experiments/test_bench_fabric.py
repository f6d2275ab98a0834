"""p4scope bench fabric: a tiny run (a smoke test, not a timing) and its
option errors."""

import pytest


from typer.testing import CliRunner  # noqa: E402

from p4scope.bench import fabric as bench  # noqa: E402
from p4scope.cli import app  # noqa: E402


def test_cost_rows_count_frames_and_hops(capsys):
    assert bench.main(["--us", "20", "--repeats", "1", "--chain", "3", "--no-latency"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {ln.split("  ")[0]: ln.split() for ln in lines[2:5]}
    assert list(rows) == ["one switch, Engine.run", "one switch, Fabric", "chain of 3, Fabric"]
    frames = [int(v[-8].replace(",", "")) for v in rows.values()]
    hops = [int(v[-7].replace(",", "")) for v in rows.values()]
    # 20 us at 100 % of 100GbE, 64 B, both ways: about 2 x 2976 frames,
    # all through every set-up, crossing 1, 1 and 3 switches
    assert frames[0] == frames[1] == frames[2] and abs(frames[0] - 5952) <= 4
    assert hops == [frames[0], frames[0], 3 * frames[0]]


@pytest.mark.parametrize("args, option", [(["--us", "0"], "--us"), (["--chain", "0"], "--chain"),
                                          (["--size", "63"], "--size"),
                                          (["--program", "nope.p4"], "--program")])
def test_bad_options_exit_2_naming_them(args, option):
    res = CliRunner().invoke(app, ["bench", "fabric", *args])
    assert res.exit_code == 2 and option in res.output
    with pytest.raises(SystemExit) as e:
        bench.main(args)
    assert e.value.code == 2
