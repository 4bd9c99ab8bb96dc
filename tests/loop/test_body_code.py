"""A code-skill body compiled once in the warm worker: each source at a path runs as it is."""

from __future__ import annotations

import types

from semif_agent.loop import _body_child


def _value(code: types.CodeType) -> object:
    namespace: dict[str, object] = {}
    exec(code, namespace)  # a body of this test
    return namespace["VALUE"]


def test_each_source_runs_its_own_code_whether_the_worker_compiled_it_or_not(tmp_path):
    path = str(tmp_path / "body.py")
    first, second = "VALUE = 1\n", "VALUE = 2\n"
    _body_child.prepare_in_worker({"body_path": path, "source": first})
    compiled = _body_child.body_code(path, first)
    assert compiled is _body_child.body_code(path, first)  # compiled once, in the worker
    assert (_value(compiled), _value(_body_child.body_code(path, second))) == (1, 2)
    assert _body_child.body_code(path, second) is not _body_child.body_code(
        path, second
    )  # not prepared: compiled each time
    assert compiled.co_filename == path
