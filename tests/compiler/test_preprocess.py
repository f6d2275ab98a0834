"""The preprocessor: includes, macros, conditionals, line markers, errors."""

from __future__ import annotations

import os
import re

import pytest

from p4scope.compiler.diagnostics import Diagnostics
from p4scope.compiler.preprocess import BUNDLED_INCLUDE_DIR, clear_cache, preprocess

MARKER = re.compile(r'^(?:#|#line) (\d+) "((?:[^"\\]|\\.)*)"')


def run(text, filename="main.p4", include_dirs=(), defines=None):
    diags = Diagnostics()
    out = preprocess(text, str(filename), [str(d) for d in include_dirs], defines or {}, diags)
    return out, diags


def located_lines(out: str):
    """(file, line, text) for each non-blank output line, as a parser that
    honours line markers would number them."""
    name, line, result = None, 0, []
    for text in out.split("\n"):
        m = MARKER.match(text)
        if m:
            line, name = int(m.group(1)), m.group(2)
            continue
        if text.strip():
            result.append((name, line, text))
        line += 1
    return result


def where(out: str, needle: str) -> tuple[str, int, int]:
    """File, line and 1-based column at which `needle` appears in the output."""
    for name, line, text in located_lines(out):
        col = text.find(needle)
        if col >= 0:
            return name, line, col + 1
    raise AssertionError(f"{needle!r} not in output")


def code(out: str) -> str:
    """The output without markers, whitespace-normalised."""
    lines = [t for t in out.split("\n") if not MARKER.match(t)]
    return " ".join(" ".join(lines).split())


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


# -- includes -------------------------------------------------------------------


def test_bundled_core_and_v1model_are_found(tmp_path):
    main = tmp_path / "prog.p4"
    out, diags = run("#include <core.p4>\n#include <v1model.p4>\nconst bit<8> z = 0;\n", main)
    assert not diags.errors
    text = code(out)
    assert "action NoAction() {}" in text
    assert "package V1Switch<H, M>" in text
    assert "const bit<32> __v1model_version = 20180101;" in text
    assert "PortId_t" not in text
    bundled_v1 = os.path.join(BUNDLED_INCLUDE_DIR, "v1model.p4")
    assert diags.sources.line(bundled_v1, 1) is not None
    assert where(out, "const bit<8> z")[:2] == (str(main), 3)


def test_double_include_is_harmless():
    out, diags = run('#include <v1model.p4>\n#include <core.p4>\n#include "v1model.p4"\n')
    assert not diags.errors
    assert code(out).count("action NoAction()") == 1
    assert code(out).count("struct standard_metadata_t") == 1


def test_v1model_version_selects_typed_forms():
    out, diags = run("#define V1MODEL_VERSION 20200408\n#include <v1model.p4>\n")
    assert not diags.errors
    text = code(out)
    assert "typedef bit<9> PortId_t;" in text
    assert "extern register<T, I> {" in text
    assert "void count(in I index);" in text
    assert "const bit<32> __v1model_version = 20200408;" in text
    # and the default again: the memoised include must not leak across keys
    text = code(run("#include <v1model.p4>\n")[0])
    assert "extern register<T> {" in text and "PortId_t" not in text


def test_include_via_I_dir_and_relative(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "inc" / "common.p4").write_text("const bit<8> COMMON = 1;\n")
    (tmp_path / "src" / "lib" / "util.p4").write_text('#include "more.p4"\nconst bit<8> UTIL = 2;\n')
    (tmp_path / "src" / "lib" / "more.p4").write_text("const bit<8> MORE = 3;\n")
    main = tmp_path / "src" / "main.p4"
    out, diags = run('#include <common.p4>\n#include "lib/util.p4"\n', main, [tmp_path / "inc"])
    assert not diags.errors, diags.errors
    assert where(out, "COMMON")[:2] == (str(tmp_path / "inc" / "common.p4"), 1)
    assert where(out, "UTIL")[:2] == (str(tmp_path / "src" / "lib" / "util.p4"), 2)
    # a quoted include inside lib/util.p4 is looked up in lib/
    assert where(out, "MORE")[:2] == (str(tmp_path / "src" / "lib" / "more.p4"), 1)
    for f in ("inc/common.p4", "src/lib/util.p4", "src/lib/more.p4"):
        assert diags.sources.line(str(tmp_path / f), 1) is not None


def test_I_dir_shadows_bundled_file(tmp_path):
    (tmp_path / "core.p4").write_text("const bit<8> MY_CORE = 1;\n")
    out, diags = run("#include <core.p4>\n", tmp_path / "m.p4", [tmp_path])
    assert not diags.errors
    assert "MY_CORE" in out and "NoAction" not in out


def test_angle_include_does_not_search_including_folder(tmp_path):
    (tmp_path / "local.p4").write_text("const bit<8> LOCAL = 1;\n")
    out, diags = run("#include <local.p4>\n", tmp_path / "m.p4")
    assert len(diags.errors) == 1
    assert "local.p4" in diags.errors[0].message


def test_missing_include_position_and_message(tmp_path, capsys):
    main = tmp_path / "m.p4"
    text = "// a comment\n  #include \"nowhere.p4\"\n"
    main.write_text(text)
    _, diags = run(text, main, [tmp_path / "inc"])
    assert len(diags.errors) == 1
    err = diags.errors[0]
    assert (err.pos.file, err.pos.line, err.pos.col) == (str(main), 2, 12)
    assert err.kind.value == "preprocess"
    assert "nowhere.p4" in err.message and str(tmp_path / "inc") in err.message
    rendered = err.render(diags.sources)
    assert rendered.splitlines()[1] == '  #include "nowhere.p4"'
    assert rendered.splitlines()[2] == "           ^"
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_recursive_include_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "loop.p4").write_text('#include "loop.p4"\n')
    _, diags = run('#include "loop.p4"\n', tmp_path / "m.p4")
    assert len(diags.errors) == 1 and "nested" in diags.errors[0].message


def test_error_in_included_file_names_that_file(tmp_path):
    (tmp_path / "bad.p4").write_text("\n\n#error this include is broken\n")
    _, diags = run('#include "bad.p4"\n', tmp_path / "m.p4")
    [err] = diags.errors
    assert (err.pos.file, err.pos.line) == (str(tmp_path / "bad.p4"), 3)
    assert err.message == "#error this include is broken"


# -- macros and conditionals ----------------------------------------------------------


def test_defines_from_command_line():
    out, diags = run("const bit<8> a = A;\nconst bit<8> b = B;\nconst bit<8> s = SQ(3);\n",
                     defines={"A": "7", "B": "", "SQ(x)": "((x) * (x))"})
    assert not diags.errors
    assert "a = 7;" in out and "b = ;" in out and "s = ((3) * (3));" in out


def test_define_undef_and_conditionals():
    src = """\
#define ONE 1
#if ONE > 0 && defined(ONE)
const bit<8> first = 1;
#elif 1
const bit<8> not_this = 0;
#endif
#undef ONE
#ifdef ONE
const bit<8> gone = 0;
#else
const bit<8> undefined_now = 1;
#endif
#ifndef TWO
const bit<8> two_missing = 1;
#endif
#if UNKNOWN_IS_ZERO
const bit<8> nope = 0;
#elif defined(D) && D == 3
const bit<8> from_define = D;
#endif
"""
    out, diags = run(src, defines={"D": "3"})
    assert not diags.errors
    text = code(out)
    for kept in ("first = 1", "undefined_now", "two_missing", "from_define = 3"):
        assert kept in text
    for dropped in ("not_this", "gone", "nope"):
        assert dropped not in text


def test_function_like_macros_file_and_line():
    src = """\
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define FIELD(name, w) bit<w> name;
header h_t { FIELD(f, 8) FIELD(g, 16) }
const bit<8> m = MAX(1, 2);
const bit<32> l = __LINE__;
const string f = __FILE__;
"""
    out, diags = run(src, "dir/prog.p4")
    assert not diags.errors
    text = code(out)
    assert "header h_t { bit<8> f; bit<16> g; }" in text
    assert "m = ((1) > (2) ? (1) : (2));" in text
    assert "l = 5;" in text
    assert 'f = "dir/prog.p4";' in text


def test_file_macro_in_include_names_the_include(tmp_path):
    (tmp_path / "i.p4").write_text("const string inner = __FILE__;\n")
    out, _ = run('#include "i.p4"\nconst string outer = __FILE__;\n', tmp_path / "m.p4")
    assert f'inner = "{tmp_path / "i.p4"}"' in out
    assert f'outer = "{tmp_path / "m.p4"}"' in out


def test_macro_arity_error_is_a_diagnostic(capsys):
    _, diags = run("#define F(a, b) a\nconst bit<8> x = F(1);\n")
    assert len(diags.errors) == 1 and "2 arguments" in diags.errors[0].message
    assert diags.errors[0].pos.line == 2
    assert capsys.readouterr() == ("", "")


def test_unterminated_if_and_stray_endif():
    _, diags = run("#ifdef X\nconst bit<8> a = 1;\n")
    [err] = diags.errors
    assert (err.pos.line, err.message) == (1, "unterminated #ifdef")
    _, diags = run("const bit<8> a = 1;\n#endif\n")
    assert diags.errors and diags.errors[0].pos.line == 2


def test_error_directive_only_when_enabled():
    _, diags = run("#if 0\n#error hidden\n#endif\n")
    assert not diags.errors
    _, diags = run("#if 1\n#error   visible  \n#endif\n")
    [err] = diags.errors
    assert err.message == "#error visible" and (err.pos.line, err.pos.col) == (2, 1)


def test_warning_directive_is_a_warning():
    _, diags = run("#warning careful\n")
    assert not diags.errors
    assert [w.message for w in diags.warnings] == ["#warning careful"]


def test_unknown_directives_are_skipped_like_p4c_does():
    # p4c: cpp -x assembler-with-cpp passes them on, its lexer skips '#' lines
    out, diags = run("#frobnicate now\n#pragma foo bar\nconst bit<8> x = 1;\n")
    assert not diags.errors
    assert [w.message for w in diags.warnings] == ["ignoring unknown preprocessor directive #frobnicate"]
    assert "frobnicate" not in out and "pragma" not in out
    assert where(out, "const")[:2] == ("main.p4", 3)


# -- positions -------------------------------------------------------------------------


def test_line_markers_map_tokens_to_their_file_line_and_column(tmp_path):
    (tmp_path / "h.p4").write_text("\n\n/* two\n   lines */ header h_t {\n    bit<8> f;\n}\n")
    src = ('#include <core.p4>\n'
           '// comment with a "quote" and an apostrophe\'s\n'
           '#include "h.p4"\n'
           + "\n" * 20 +
           'struct s_t { /* c */ bit<8> a; }  // trailing\n'
           'control C() {\n'
           '    apply { }\n'
           '}\n')
    main = tmp_path / "m.p4"
    out, diags = run(src, main)
    assert not diags.errors
    assert where(out, "header h_t") == (str(tmp_path / "h.p4"), 4, 13)
    assert where(out, "bit<8> f") == (str(tmp_path / "h.p4"), 5, 5)
    assert where(out, "struct s_t") == (str(main), 24, 1)
    assert where(out, "bit<8> a") == (str(main), 24, 22)
    assert where(out, "apply") == (str(main), 26, 5)
    assert "comment" not in out and "trailing" not in out
    # every output line is the source line with comments blanked
    for name, line, text in located_lines(out):
        source = diags.sources.line(name, line)
        assert source is not None
        for m in re.finditer(r"\S+", text):
            assert source[m.start():m.end()] == m.group(), (name, line, text)


def test_line_directive_renames_and_renumbers():
    src = "const bit<8> a = 0;\n#line 100 \"other.p4\"\nconst bit<8> b = 0;\n\nconst bit<8> c = 0;\n"
    out, diags = run(src, "m.p4")
    assert not diags.errors
    assert where(out, "a = 0")[:2] == ("m.p4", 1)
    assert where(out, "b = 0")[:2] == ("other.p4", 100)
    assert where(out, "c = 0")[:2] == ("other.p4", 102)


def test_gcc_style_markers_accepted_by_this_helper():
    assert MARKER.match('# 12 "a.p4"') and MARKER.match('#line 3 "b\\"c.p4"')


# -- memoised includes ------------------------------------------------------------------


def test_memoised_include_gives_identical_output(tmp_path):
    src = "#include <v1model.p4>\nconst bit<8> z = V1MODEL_METER_COLOR_RED;\n"
    first, d1 = run(src, tmp_path / "m.p4")
    second, d2 = run(src, tmp_path / "m.p4")
    assert first == second
    assert "z = 2;" in first
    assert set(d1.sources._files) == set(d2.sources._files)


def test_memoised_include_sees_edits_of_nested_files(tmp_path):
    (tmp_path / "outer.p4").write_text('#include "inner.p4"\n')
    inner = tmp_path / "inner.p4"
    inner.write_text("const bit<8> v = 1;\n")
    src = '#include "outer.p4"\n'
    assert "v = 1;" in run(src, tmp_path / "m.p4")[0]
    inner.write_text("const bit<8> v = 22;\n")
    assert "v = 22;" in run(src, tmp_path / "m.p4")[0]


def test_memoised_include_replays_macro_effects(tmp_path):
    (tmp_path / "defs.p4").write_text("#ifndef DEFS\n#define DEFS\n#define W 12\n#endif\n")
    src = '#include "defs.p4"\n#include "defs.p4"\nconst bit<W> x = 0;\n'
    for _ in range(2):
        out, diags = run(src, tmp_path / "m.p4")
        assert not diags.errors
        assert "const bit<12> x = 0;" in out


def test_errors_are_reported_again_on_every_run(tmp_path):
    (tmp_path / "bad.p4").write_text("#warning w\n#include \"gone.p4\"\n")
    for _ in range(2):
        _, diags = run('#include "bad.p4"\n', tmp_path / "m.p4")
        assert len(diags.errors) == 1 and len(diags.warnings) == 1


@pytest.mark.parametrize("src", [
    "#ifdef\n#endif\n", "#ifndef\n#endif\n", "#define\n", "#undef\n", "#if\n#endif\n",
    "#if 1 +\n#endif\n", "#define F(\n", "#include\n", "#include MACRO\n", "#line x\n",
    "#elif 1\n", "#else\n", "#if (1\n#endif\n", "#include <unterminated\n",
])
def test_malformed_directives_are_diagnostics_not_exceptions(src, capsys):
    _, diags = run(src)
    assert diags.errors, src
    assert all(e.kind.value == "preprocess" and e.pos.line >= 1 for e in diags.errors)
    assert capsys.readouterr() == ("", "")
