from p4scope.compiler.diagnostics import CompileError, Diagnostics, ErrorKind, Pos


def test_error_is_rendered_with_position_source_line_and_caret():
    d = Diagnostics()
    d.sources.add("x.p4", "header h_t {\n    bit<8> f\n}\n")
    d.error(ErrorKind.SYNTAX, Pos("x.p4", 2, 13), "expected ';'")
    try:
        d.check()
    except CompileError as e:
        assert e.render() == "x.p4:2:13: error: expected ';'\n    bit<8> f\n            ^"
    else:
        raise AssertionError("check() must raise after an error")


def test_same_error_at_same_place_is_reported_once():
    d = Diagnostics()
    for _ in range(3):
        d.error(ErrorKind.UNDEFINED, Pos("a.p4", 1, 1), "x: not defined")
    assert len(d.errors) == 1
