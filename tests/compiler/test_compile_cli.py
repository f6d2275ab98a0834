"""`p4scope compile` as a user runs it: outputs, p4c option spellings, and
errors as file:line:col with exit status 1 and no traceback."""

import json
import os
import select
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "p4scope.cli", "compile", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def write(tmp_path: Path, text: str, name="prog.p4") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


BASE = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
BODY
    }
}
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def program_with(body: str) -> str:
    return BASE.replace("BODY", body)


@pytest.mark.parametrize("body, message, line, col", [
    ("        hdr.h.a = nosuch;", "nosuch: not declared", 12, 19),
    ("        hdr.h.a = hdr.h.b;", "width mismatch", 12, 19),
    ("        hdr.h.a = 1", "syntax error", 13, 5),
    ("        bit<8> x = true;", "cannot use bool where bit<8> is expected", 12, 20),
    ("        hdr.h.a = hdr.h.a / hdr.h.a;", "not supported", 12, 19),
])
def test_user_errors_are_reported_at_their_position(tmp_path, body, message, line, col):
    prog = write(tmp_path, program_with(body))
    r = run(prog, "-o", tmp_path / "out.json")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{prog}:{line}:{col}: error: "), r.stderr
    assert message in r.stderr
    assert not (tmp_path / "out.json").exists()


def test_writing_an_in_parameter_names_the_parameter(tmp_path):
    src = program_with("").replace(
        "control D(packet_out pkt, in hs_t hdr) { apply {",
        "control D(packet_out pkt, in hs_t hdr) { apply { hdr.h.a = 1;")
    r = run(write(tmp_path, src), "-o", tmp_path / "o.json")
    assert r.returncode == 1
    assert "hdr is an 'in' parameter" in r.stderr


def test_missing_include_is_a_preprocessor_error(tmp_path):
    prog = write(tmp_path, '#include "nowhere.p4"\n')
    r = run(prog)
    assert r.returncode == 1
    assert r.stderr.startswith(f"{prog}:1:")
    assert "nowhere.p4" in r.stderr


def test_p4c_option_spellings_are_accepted(tmp_path):
    prog = GOLDEN / "l2_learning.p4"
    info = tmp_path / "x.p4info.txtpb"
    r = subprocess.run([sys.executable, "-m", "p4scope.cli", "compile", "--p4v", "16",
                        "--std", "p4-16", "--target", "bmv2", "--arch", "v1model",
                        "--p4runtime-files", str(info), "--p4runtime-format", "text",
                        "-o", str(tmp_path / "x.json"), str(prog)],
                       capture_output=True, text=True, timeout=120)
    # The BMv2 back end may still reject constructs; the P4Info must be written
    # exactly when compilation succeeds.
    if r.returncode == 0:
        assert info.read_text() == prog.with_suffix(".p4info.txtpb").read_text()
    else:
        assert "Traceback" not in r.stderr and "error" in r.stderr


def test_unsupported_p4_version_is_refused(tmp_path):
    r = run(GOLDEN / "l2_learning.p4", "--p4v", "14")
    assert r.returncode == 2
    assert "only P4-16" in r.stderr


# Output and input paths (hostile-input review): outputs go only into folders
# that exist, never over the program, and non-regular files are used in place.

def copy_program(tmp_path: Path, name="tap.p4") -> Path:
    prog = tmp_path / name
    prog.write_text((GOLDEN / "l2_learning.p4").read_text())
    return prog


def assert_clean_error(r, code: int, *needles: str):
    assert r.returncode == code, r.stderr
    assert "Traceback" not in r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr


@pytest.mark.parametrize("option, name", [
    ("-o", "nodir/sub/x.json"),
    ("-o", "nodir/"),
    ("--p4info", "nodir/x.p4info.txtpb"),
    ("--p4runtime-files", "nodir/x.p4info.txtpb"),
])
def test_output_into_a_missing_folder_is_refused_not_created(tmp_path, option, name):
    prog = copy_program(tmp_path)
    args = [prog, option, tmp_path / name]
    if option != "-o":
        args += ["-o", tmp_path / "x.json"]
    if name.endswith("/"):
        args[2] = f"{tmp_path}/{name}"
    r = run(*args, cwd=tmp_path)
    assert_clean_error(r, 1, "No such file or directory", str(tmp_path / "nodir"))
    assert not (tmp_path / "nodir").exists()


@pytest.mark.parametrize("args", [
    ["-o", "tap.p4"],
    ["-o", "link.json"],
    ["-o", "x.json", "--p4info", "tap.p4", "--p4runtime-format", "text"],
    ["-o", "x.json", "--p4runtime-files", "link.json"],
])
def test_output_that_is_the_program_is_refused(tmp_path, args):
    prog = copy_program(tmp_path)
    (tmp_path / "link.json").symlink_to("tap.p4")
    before = prog.read_text()
    r = run("tap.p4", *args, cwd=tmp_path)
    assert_clean_error(r, 2, "input program")
    assert prog.read_text() == before
    assert (tmp_path / "link.json").is_symlink()
    assert not (tmp_path / "x.json").exists()


def test_unknown_p4runtime_format_names_the_option_and_the_choices(tmp_path):
    prog = copy_program(tmp_path)
    r = run(prog, "-o", tmp_path / "x.json", "--p4info", tmp_path / "i.txt",
            "--p4runtime-format", "xml")
    assert_clean_error(r, 2, "--p4runtime-format xml", "text, binary, json")
    assert not (tmp_path / "x.json").exists()


def test_p4info_of_unknown_kind_names_the_option(tmp_path):
    prog = copy_program(tmp_path)
    r = run(prog, "-o", tmp_path / "x.json", "--p4info", tmp_path / "i.xml")
    assert_clean_error(r, 2, "--p4info", "unknown file kind")
    assert not (tmp_path / "x.json").exists()


def test_output_write_failure_gives_path_and_reason(tmp_path):
    prog = copy_program(tmp_path)
    (tmp_path / "plain").write_text("")
    r = run(prog, "-o", tmp_path / "plain" / "x.json")
    assert_clean_error(r, 1, str(tmp_path / "plain" / "x.json"), "Not a directory")
    too_long = tmp_path / ("x" * 300 + ".json")
    r = run(prog, "-o", too_long)
    assert_clean_error(r, 1, str(too_long), "File name too long")


def test_dev_null_input_is_an_empty_program(tmp_path):
    r = run("/dev/null", "-o", tmp_path / "x.json")
    assert_clean_error(r, 1, "main")
    assert "no such file" not in r.stderr.lower()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not (tmp_path / "x.json").exists()


def test_directory_input_says_so(tmp_path):
    r = run(tmp_path, "-o", tmp_path / "x.json")
    assert_clean_error(r, 1, "Is a directory")


def test_fifo_input_is_read_as_the_program(tmp_path):
    fifo = tmp_path / "prog.p4"
    os.mkfifo(fifo)
    source = (GOLDEN / "l2_learning.p4").read_text()

    def feed():
        with open(fifo, "w") as f:
            f.write(source)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    r = run(fifo, "-o", tmp_path / "x.json")
    if feeder.is_alive():  # the compiler never opened the FIFO: release the writer
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        feeder.join(5)
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "x.json").read_text())["pipelines"]


def test_fifo_output_is_written_in_place_not_replaced(tmp_path):
    """As p4c does; renaming over it would replace a device node such as
    /dev/null (as root) with a regular file."""
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    chunks = []
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "p4scope.cli", "compile", str(GOLDEN / "l2_learning.p4"),
             "-o", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = proc.poll() is not None
            select.select([fd], [], [], 0.1)
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                data = None
            if data:
                chunks.append(data)
            elif done:
                break
            elif data == b"":  # no writer yet
                time.sleep(0.05)
        proc.communicate(timeout=10)
    finally:
        os.close(fd)
    assert proc.returncode == 0
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(b"".join(chunks))["pipelines"]
