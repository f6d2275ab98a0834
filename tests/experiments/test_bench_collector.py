"""python -m p4scope.bench.collector: one run (a smoke test, not a
timing) and its option errors."""

import pytest

from p4scope.bench import collector as bench


def test_every_stage_is_timed_on_a_whole_capture(capsys):
    bench.main(["--repeat", "1"])
    lines = capsys.readouterr().out.splitlines()
    # a report per burst packet of the 2:1 case: about 10^5 of them
    frames = int(lines[0].split(": ")[1].split()[0].replace(",", ""))
    assert 50_000 < frames < 200_000
    assert [ln.split()[0] for ln in lines[1:5]] == list(bench.STAGES)
    assert all(float(ln.split()[1]) > 0 for ln in lines[1:5])
    assert lines[5].startswith("  a case's: ")


@pytest.mark.parametrize("args, option", [(["--size", "63"], "--size"),
                                          (["--repeat", "0"], "--repeat")])
def test_bad_options_exit_2_naming_them(args, option, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(args)
    assert e.value.code == 2 and option in capsys.readouterr().err
