"""Parse p4c's v1model test programs with p4scope's parser (a hand check).

    .venv/bin/python scripts/dev/parse_corpus.py /path/to/p4c [-v] [--pp p4scope]

CORPUS is a p4c checkout (or any folder with testdata/p4_16_samples/ and
p4include/).  Every testdata/p4_16_samples/*-bmv2.p4 that mentions
v1model.p4 is preprocessed (system `cpp` by default, or p4scope's own
preprocessor) with CORPUS/p4include on the include path, then parsed.
Prints the failures with their first error, the count that parse, and the
parse time of the slowest programs.  Exit status 1 when any fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from p4scope.compiler.diagnostics import Diagnostics
from p4scope.compiler.parser import parse


def preprocess(path: Path, include: Path, how: str) -> str:
    if how == "cpp":
        out = subprocess.run(
            ["cpp", "-undef", "-nostdinc", "-I", str(include), str(path)],
            capture_output=True, text=True, check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip())
        return out.stdout
    from p4scope.compiler.preprocess import preprocess as p4pp

    diags = Diagnostics()
    text = p4pp(path.read_text(), str(path), [str(include)], {}, diags)
    if diags.errors:
        raise RuntimeError(diags.errors[0].render())
    return text


def bench(largest: Path, include: Path, how: str) -> None:
    """Time core.p4 + v1model.p4 + a program of 500 lines or more: the
    largest sample, topped up with a generated control."""
    text = preprocess(largest, include, how)
    own = len(largest.read_text().splitlines())
    actions = "".join(f"    action a{i}(bit<32> v) {{ x = (x << 2) | v + {i}; }}\n" for i in range(max(0, 500 - own)))
    text += f"control Extra(inout bit<32> x) {{\n{actions}    apply {{ }}\n}}\n"
    best = min(_timed(text) for _ in range(5))
    print(f"core.p4 + v1model.p4 + {largest.name} topped up to {max(own, 500)} lines: {best * 1000:.1f} ms (best of 5)")


def _timed(text: str) -> float:
    diags = Diagnostics()
    t0 = time.perf_counter()
    parse(text, diags, "bench.p4")
    assert not diags.errors, diags.errors[0].render()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="p4c checkout (testdata/p4_16_samples, p4include)")
    ap.add_argument("--pp", choices=["cpp", "p4scope"], default="cpp" if shutil.which("cpp") else "p4scope")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every error, not just the first")
    ns = ap.parse_args()

    samples = ns.corpus / "testdata" / "p4_16_samples"
    include = ns.corpus / "p4include"
    files = sorted(p for p in samples.glob("*-bmv2.p4") if "v1model.p4" in p.read_text(errors="replace"))
    failed = 0
    timings = []
    for path in files:
        try:
            text = preprocess(path, include, ns.pp)
        except RuntimeError as e:
            print(f"{path.name}: preprocessing failed: {e}")
            failed += 1
            continue
        diags = Diagnostics()
        t0 = time.perf_counter()
        parse(text, diags, str(path))
        timings.append((time.perf_counter() - t0, len(text.splitlines()), path.name))
        if diags.errors:
            failed += 1
            for d in diags.errors if ns.verbose else diags.errors[:1]:
                print(d.render(diags.sources))
    print(f"{len(files) - failed}/{len(files)} parse")
    if timings:
        bench(samples / max(timings, key=lambda t: t[1])[2], include, ns.pp)
    timings.sort(reverse=True)
    total = sum(t for t, _, _ in timings)
    print(f"parse time: total {total:.2f} s, mean {total / max(len(timings), 1) * 1000:.1f} ms")
    for t, lines, name in timings[:5]:
        print(f"  {t * 1000:6.1f} ms  {lines:5d} lines  {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
