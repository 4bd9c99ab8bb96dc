"""A code-skill body compiled once per process (a warm process runs it again without compiling): each source
at a path runs as it is."""

from __future__ import annotations

import types

from semif_agent.loop import _body_child


def _value(code: types.CodeType) -> object:
    namespace: dict[str, object] = {}
    exec(code, namespace)  # a body of this test
    return namespace["VALUE"]


def test_each_source_runs_its_own_code_compiled_once_per_process(tmp_path):
    path = str(tmp_path / "body.py")
    first, second = "VALUE = 1\n", "VALUE = 2\n"
    compiled = _body_child.body_code(path, first)
    assert compiled is _body_child.body_code(path, first)  # compiled once
    assert (_value(compiled), _value(_body_child.body_code(path, second))) == (1, 2)
    assert _body_child.body_code(path, second) is not compiled
    assert compiled.co_filename == path
