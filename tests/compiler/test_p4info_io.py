"""P4Info files: text (p4c's layout), binary and JSON, written atomically."""

from __future__ import annotations

import json

import pytest
from finsy.proto import p4i

from p4scope.compiler.p4info_io import (
    P4InfoFormatError,
    format_for,
    read_p4info,
    to_text,
    write_p4info,
)


def sample() -> p4i.P4Info:
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    table = info.tables.add()
    table.preamble.id = 37375156
    table.preamble.name = "MyIngress.ipv4_lpm"
    table.preamble.alias = "ipv4_lpm"
    mf = table.match_fields.add()
    mf.id, mf.name, mf.bitwidth = 1, "hdr.ipv4.dstAddr", 32
    mf.match_type = p4i.MatchField.LPM
    ref = table.action_refs.add()
    ref.id = 21257015
    ref.annotations.append("@defaultonly")
    ref.scope = p4i.ActionRef.DEFAULT_ONLY
    table.size = 1024
    action = info.actions.add()
    action.preamble.id = 21257015
    action.preamble.name = "NoAction"
    action.preamble.alias = "NoAction"
    action.preamble.annotations.append('@noWarn("unused")')
    info.type_info.SetInParent()
    return info


EXPECTED_TEXT = """\
# proto-file: p4/config/v1/p4info.proto
# proto-message: p4.config.v1.P4Info

pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 37375156
    name: "MyIngress.ipv4_lpm"
    alias: "ipv4_lpm"
  }
  match_fields {
    id: 1
    name: "hdr.ipv4.dstAddr"
    bitwidth: 32
    match_type: LPM
  }
  action_refs {
    id: 21257015
    annotations: "@defaultonly"
    scope: DEFAULT_ONLY
  }
  size: 1024
}
actions {
  preamble {
    id: 21257015
    name: "NoAction"
    alias: "NoAction"
    annotations: "@noWarn(\\"unused\\")"
  }
}
type_info {
}
"""


def test_text_layout_is_p4cs():
    assert to_text(sample()) == EXPECTED_TEXT


def test_text_header_exact(tmp_path):
    path = tmp_path / "x.p4info.txtpb"
    write_p4info(sample(), path)
    lines = path.read_text().split("\n")
    assert lines[:3] == ["# proto-file: p4/config/v1/p4info.proto",
                         "# proto-message: p4.config.v1.P4Info", ""]


def test_non_ascii_is_escaped_in_octal_like_cpp_textformat():
    info = p4i.P4Info()
    info.tables.add().preamble.name = "t\u25d5'"
    assert 'name: "t\\342\\227\\225\\\'"' in to_text(info)


@pytest.mark.parametrize("name,fmt", [
    ("a.p4info.txtpb", "text"), ("a.txt", "text"), ("a.bin", "binary"), ("a.json", "json"),
    ("A.JSON", "json"),
])
def test_format_follows_extension(name, fmt):
    assert format_for(name) == fmt


def test_explicit_format_wins_and_unknowns_are_errors():
    assert format_for("a.json", "text") == "text"
    assert format_for("a.txt", "binary") == "binary"
    with pytest.raises(P4InfoFormatError, match="known suffixes"):
        format_for("a.p4info")
    with pytest.raises(P4InfoFormatError, match="text, binary or json"):
        format_for("a.txt", "yaml")


@pytest.mark.parametrize("name", ["p.txtpb", "p.txt", "p.bin", "p.json"])
def test_round_trip_by_extension(tmp_path, name):
    path = tmp_path / name
    write_p4info(sample(), path)
    assert read_p4info(path) == sample()


@pytest.mark.parametrize("fmt", ["text", "binary", "json"])
def test_round_trip_with_explicit_format(tmp_path, fmt):
    path = tmp_path / "p4info.out"
    write_p4info(sample(), path, fmt)
    assert read_p4info(path, fmt) == sample()
    assert read_p4info(path) == sample()   # unknown extension: content is sniffed


def test_binary_and_json_content(tmp_path):
    write_p4info(sample(), tmp_path / "p.bin")
    assert (tmp_path / "p.bin").read_bytes() == sample().SerializeToString()
    write_p4info(sample(), tmp_path / "p.json")
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["tables"][0]["matchFields"][0]["matchType"] == "LPM"
    assert doc["tables"][0]["preamble"]["id"] == 37375156
    assert doc["pkgInfo"] == {"arch": "v1model"}


def test_write_is_atomic_and_replaces(tmp_path):
    path = tmp_path / "p.txtpb"
    path.write_text("old and longer than the new content " * 100)
    write_p4info(sample(), path)
    assert path.read_text() == EXPECTED_TEXT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.txtpb"]


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    path = tmp_path / "p.bin"
    path.write_bytes(b"old")

    class Broken:
        def SerializeToString(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_p4info(Broken(), path)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.bin"]
