"""Hostile options to the experiments (`p4scope run microburst | fairness |
all | rfc2544`): run ids that are paths, numbers that are not finite or
out of range, lists that do not parse.  Each is a usage error: exit status
2 naming the option, before anything runs, and nothing made (not even a run
folder under --results).  A probe whose run starts is stopped at once and
counted wrong."""

from __future__ import annotations

from pathlib import Path

from hostile_core import Area, Expect, Probe, cli_probe, no_environment
from hostile_programs import DUT

NAME = "experiment options"
RESULTS = "a/b/res"  # --results, two folders down: room for ../../x to land in the probe's folder

COMMON = ["--results", RESULTS, "--no-progress", "--no-report", "--program", str(DUT)]
SMALL = {  # options that keep a run short if a bad value is taken anyway
    "microburst": ["--quick", "--sizes", "64", "--sizes-4to1", "none", "--profiles", "fair"],
    "fairness": ["--quick", "--n", "3", "--profiles", "fair", "--duration-us", "50",
                 "--warmup-us", "10"],
    "all": ["--quick", "--sizes", "64", "--sizes-4to1", "none", "--n", "3", "--profiles", "fair",
            "--duration-us", "50", "--warmup-us", "10"],
    "rfc2544": ["--sizes", "64", "--tests", "throughput"],
}


def _setup(cwd: Path) -> None:
    (cwd / "a" / "b").mkdir(parents=True)
    (cwd / "plain").write_text("")


def _run_started(cwd: Path) -> bool:
    res = cwd / RESULTS
    try:
        return any(p.is_dir() for p in res.iterdir())
    except OSError:
        return False


def bad_option(command: str, option: str, value: str, names: str = "") -> Probe:
    """`p4scope run COMMAND OPTION VALUE`: exit 2 naming `names` (the
    option by default), nothing made but an empty --results folder."""
    def argv(cwd: Path, env):
        v = value.replace("{cwd}", str(cwd))
        small = [a for a in SMALL[command]]
        if option in small:  # the bad value replaces the small one
            i = small.index(option)
            del small[i:i + 2]
        return ["run", command, *COMMON, *small, option, v]

    expect = Expect(codes=(2,), says=(names or option,), may_make=("a/b/res",),
                    unchanged=("plain",))
    return cli_probe(f"{command} {option} {_shown(value)}", argv, expect, _setup, timeout=60,
                     stop_when=_run_started)


def _shown(value: str) -> str:
    """The value as the probe's name shows it: short, one line."""
    value = value.replace("{cwd}", "/tmp/...")
    if len(value) > 24:
        return f"{value[:8]}...({len(value)} chars)"
    if not value or not value.isprintable() or " " in value:
        return repr(value)
    return value


RUN_IDS = ["../../x", "{cwd}/abs", "", ".", "..", "-x", "a/b", "x" * 200, "a b", "x\\y", "~",
           "x\ny", "x;rm -rf x"]
NOT_FINITE = ["nan", "inf", "-inf"]


def probes(fast: bool) -> list[Probe]:
    out: list[Probe] = []
    mb = "microburst"
    for v in RUN_IDS:
        out.append(bad_option(mb, "--run-id", v))
    for v in NOT_FINITE + ["1e9", "0", "-1", "1e-9"]:
        out.append(bad_option(mb, "--buffer-mb", v))
    for v in NOT_FINITE + ["0", "-1", "1e9"]:
        out.append(bad_option(mb, "--alpha", v))
    for v in ["0", "-1", "1000000000", "1.5"]:
        out.append(bad_option(mb, "--cell-bytes", v))
    for v in ["-1", str(2 ** 64), str(2 ** 70), "x"]:
        out.append(bad_option(mb, "--seed", v))
    for v in ["0", "-1", str(10 ** 12)]:
        out.append(bad_option(mb, "--burst-frames", v))
    for v in ["0", "1000000", "abc", "", ",,", "64,nan", "64.5"]:
        out.append(bad_option(mb, "--sizes", v))
    for v in ["x", "-64"]:
        out.append(bad_option(mb, "--sizes-4to1", v))
    for v in ["nope", ""]:
        out.append(bad_option(mb, "--profiles", v))
    out.append(bad_option(mb, "--results", "plain"))
    out.append(bad_option(mb, "--results", "plain/res"))
    out.append(bad_option(mb, "--program", "nope.p4", names="nope.p4"))

    fa = "fairness"
    for v in NOT_FINITE + ["-1", "0", "1e12"]:
        out.append(bad_option(fa, "--duration-us", v))
    for v in ["nan", "-1", "inf"]:
        out.append(bad_option(fa, "--warmup-us", v))
    for v in ["64:nan", "x", "64:-1", "10:1", "", "64:inf"]:
        out.append(bad_option(fa, "--mix", v))
    for v in ["0", "-1", "x", "1000"]:
        out.append(bad_option(fa, "--n", v))
    for v in ["99", "1,1", "x", "-1"]:
        out.append(bad_option(fa, "--ports", v))
    for opt, v in [("--run-id", "../../x"), ("--buffer-mb", "nan"), ("--seed", "-1"),
                   ("--alpha", "nan")]:
        out.append(bad_option(fa, opt, v))

    for opt, v in [("--run-id", "../../x"), ("--alpha", "nan"), ("--buffer-mb", "inf"),
                   ("--seed", "-1")]:
        out.append(bad_option("all", opt, v))

    rf = "rfc2544"
    for opt, values in [("--buffer-mb", NOT_FINITE + ["1e9", "0"]), ("--alpha", ["nan", "0", "-1"]),
                        ("--seed", ["-1", str(2 ** 64)]), ("--run-id", ["../../x", "{cwd}/abs"]),
                        ("--sizes", ["0", "x", "100000"]), ("--pairs", ["1-1", "x", "1-99", ""]),
                        ("--tests", ["nope", ""]), ("--tolerance-pct", ["nan", "-1", "101"]),
                        ("--resolution-pct", ["0", "nan", "100"]),
                        ("--trial-frames", ["0", "-1"]), ("--latency-trials", ["0", "-1"]),
                        ("--b2b-max-frames", ["0", "-1"]),
                        ("--dut-rate-pct", ["0", "nan", "1000"])]:
        for v in values:
            out.append(bad_option(rf, opt, v))
    return out


AREA = Area(NAME, probes, no_environment)
