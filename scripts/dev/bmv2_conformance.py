"""BMv2 backend conformance on p4c's test programs (a developer's tool).

    .venv/bin/python scripts/dev/bmv2_conformance.py TESTDATA [--reference DIR] [--out DIR] [-k PATTERN]

TESTDATA is a local copy of p4c's ``testdata`` folder (never part of this
repository).  For every v1model program ``p4_16_samples/*-bmv2.p4`` it

1. compiles the program with p4scope (counting successes, unsupported
   constructs and other errors);
2. runs the program's STF test, if it has one, on p4scope's engine;
3. with ``--reference DIR`` (p4c-bm2-ss's JSON for the same programs),
   runs a differential test: the same packets (every packet of every STF
   file, plus a few random ones) through the engine loaded with p4c's JSON
   and with ours, table entries from the program's STF and random default
   actions in both, and compares the outputs packet by packet.

Engine runs happen in a child process each, with a time limit, so one
misbehaving program cannot stop the run.  Prints one line per problem and
the totals.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import multiprocessing as mp
import random
import sys
import traceback
from pathlib import Path
from typing import Any, Optional

TIME_LIMIT_S = 60


def compile_program(path: Path) -> tuple[str, Any]:
    """("ok", json) | ("unsupported", message) | ("error", message)."""
    from p4scope.compiler import CompileError, compile_file
    try:
        return "ok", compile_file(path).bmv2_json
    except CompileError as e:
        msgs = [d.message for d in e.diagnostics]
        unsup = [m for m in msgs if "not supported yet" in m]
        return ("unsupported", unsup[0]) if unsup else ("error", msgs[0] if msgs else "?")
    except Exception:
        return "error", "internal: " + traceback.format_exc().strip().splitlines()[-1]


def packet_pool(samples: Path, n: int = 60) -> list[bytes]:
    from p4scope.commands.stf import parse_stf
    pool: set[bytes] = set()
    for stf in samples.glob("*.stf"):
        try:
            for _, cmd, a in parse_stf(stf.read_text()):
                if cmd == "packet":
                    pool.add(bytes.fromhex(a[1]))
        except Exception:
            continue
    rnd = random.Random(1)
    ordered = sorted(pool, key=lambda b: (len(b), b))
    rnd.shuffle(ordered)
    return ordered[:n] + [bytes(rnd.getrandbits(8) for _ in range(k)) for k in (14, 34, 60, 64, 100)]


def _engine(json_text: str, stf_text: Optional[str], name: str):
    import p4scope_dataplane as dp
    from p4scope.commands.stf import StfRunner, parse_stf
    e = dp.Engine(json_text)
    if stf_text:
        runner = StfRunner(e)
        try:
            runner.run([s for s in parse_stf(stf_text) if s[1] not in ("packet", "expect")])
        except Exception:
            pass
    rnd = random.Random(name)
    actions = dict(e.action_info())
    for table, _mt, _keys, acts in sorted(e.table_info()):
        if table.startswith("tbl_") or not acts:
            continue
        act = rnd.choice(sorted(acts))
        args = [rnd.getrandbits(w) if w else 0 for _, w in actions.get(act, [])]
        try:
            e.table_set_default(table, act, args)
        except Exception:
            pass
    return e


def _differential(ours: str, ref: str, stf_text: Optional[str], name: str, pool: list[bytes], q) -> None:
    try:
        engines = [_engine(ref, stf_text, name), _engine(ours, stf_text, name)]
    except Exception as e:
        q.put(("load-error", str(e)[:200]))
        return
    t = 0
    for i, pkt in enumerate(pool):
        for port in (0, 1):
            t += 1000
            outs = []
            for e in engines:
                try:
                    outs.append(sorted((p, bytes(b)) for p, b, _ in e.process([(port, pkt, t)])))
                except Exception as ex:
                    outs.append([("exception", str(ex)[:80])])
            if outs[0] != outs[1]:
                q.put(("differ", f"packet {i} on port {port}: p4c {str(outs[0])[:160]} p4scope {str(outs[1])[:160]}"))
                return
    q.put(("same", ""))


def _stf(ours: str, stf_text: str, q) -> None:
    from p4scope.commands.stf import run_stf
    try:
        r = run_stf(ours, stf_text)
        q.put(("pass" if r.passed else "fail", r.messages[0] if r.messages else ""))
    except Exception as e:
        q.put(("fail", repr(e)[:200]))


def in_child(target, *args) -> tuple[str, str]:
    q: Any = mp.Queue()
    p = mp.Process(target=target, args=(*args, q))
    p.start()
    p.join(TIME_LIMIT_S)
    if p.is_alive():
        p.kill()
        p.join()
        return "timeout", ""
    return q.get() if not q.empty() else ("crash", f"exit code {p.exitcode}")


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("testdata", type=Path)
    ap.add_argument("--reference", type=Path, help="folder of p4c-bm2-ss JSON files (<name>.json)")
    ap.add_argument("--out", type=Path, help="write p4scope's JSON files here")
    ap.add_argument("-k", default="*", help="glob on program names")
    args = ap.parse_args(argv)
    samples = args.testdata / "p4_16_samples"
    programs = [p for p in sorted(samples.glob("*-bmv2.p4"))
                if fnmatch.fnmatch(p.stem, args.k) and "v1model.p4" in p.read_text(errors="replace")]
    pool = packet_pool(samples) if args.reference else []
    totals: dict[str, int] = {}

    def count(key: str) -> None:
        totals[key] = totals.get(key, 0) + 1

    for prog in programs:
        name = prog.stem
        status, result = compile_program(prog)
        count(f"compile {status}")
        if status != "ok":
            print(f"{status.upper()} {name}: {result}")
            continue
        text = json.dumps(result)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{name}.json").write_text(text)
        stf = prog.with_suffix(".stf")
        stf_text = stf.read_text() if stf.exists() else None
        if stf_text is not None:
            st, msg = in_child(_stf, text, stf_text)
            count(f"stf {st}")
            if st != "pass":
                print(f"STF {st.upper()} {name}: {msg}")
        if args.reference is not None:
            ref = args.reference / f"{name}.json"
            if ref.exists():
                st, msg = in_child(_differential, text, ref.read_text(), stf_text, name, pool)
                count(f"differential {st}")
                if st != "same":
                    print(f"DIFFERENTIAL {st.upper()} {name}: {msg}")
    print(f"{len(programs)} programs: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
