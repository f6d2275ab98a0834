"""`p4scope stf PROG.p4 TEST.stf`: compile with p4scope, run on the engine."""

import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).parents[1] / "compiler" / "golden"

STF = """
# dst 00:00:00:00:00:02 is known on port 3; everything else floods to group 1
add Bridge.dmac hdr.eth.dst:0x000000000002 Bridge.forward(port:3)
packet 1 000000000002 000000000001 0800 cafe
expect 3 000000000002 000000000001 0800 cafe
"""


def run(tmp_path, stf_text):
    stf = tmp_path / "t.stf"
    stf.write_text(stf_text)
    return subprocess.run([sys.executable, "-m", "p4scope.cli", "stf",
                           str(GOLDEN / "l2_learning.p4"), str(stf)],
                          capture_output=True, text=True, timeout=120)


def test_stf_on_p4_source_passes(tmp_path):
    r = run(tmp_path, STF)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout


def test_stf_on_p4_source_reports_a_wrong_output(tmp_path):
    r = run(tmp_path, STF.replace("expect 3", "expect 2"))
    assert r.returncode == 1
    assert "FAIL" in r.stdout
