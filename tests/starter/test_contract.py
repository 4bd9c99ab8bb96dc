"""Every starter body keeps the skill contract."""

from __future__ import annotations

import ast
import json
import sys

import pytest

from semif_agent.starter import TEMPLATE_DIR

SKILLS = json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text(encoding="utf-8"))["skills"]
NAMES = [s["name"] for s in SKILLS]


def source(name: str) -> str:
    category, leaf = name.split(".")
    return (TEMPLATE_DIR / "data" / "skills" / category / f"{leaf}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_body_compiles_and_defines_predict_and_act(name):
    text = source(name)
    compile(text, f"{name}.py", "exec")
    tree = ast.parse(text)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert [a.arg for a in functions["predict"].args.args] == ["ctx", "request"]
    assert [a.arg for a in functions["act"].args.args] == ["ctx", "request", "prediction"]
    docstring = ast.get_docstring(tree)
    assert docstring and docstring.startswith(f"{name}: ")


@pytest.mark.parametrize("name", NAMES)
def test_body_imports_only_stdlib_and_the_agent(name):
    for node in ast.walk(ast.parse(source(name))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            modules = [node.module]
        else:
            continue
        for module in modules:
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or module == "semif_agent.skills", f"{name} imports {module}"


@pytest.mark.parametrize("name", NAMES)
def test_body_is_small_and_uses_the_engine_without_loops(name):
    text = source(name)
    assert len(text.splitlines()) <= 200  # email.compose, which makes the message from the request, is the longest
    tree = ast.parse(text)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "ctx.engine.call"]
    assert len(calls) <= [s for s in SKILLS if s["name"] == name][0]["cost_budget"]
    if name != "todos.list":  # which to-dos to show is read from the request's words
        assert calls, f"{name} makes no decision"
    loops = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for node in ast.walk(tree):
        if isinstance(node, loops):
            assert "ctx.engine" not in ast.unparse(node), "no engine calls in loops"


@pytest.mark.parametrize("name", NAMES)
def test_body_writes_only_through_data_paths(name):
    text = source(name)
    read_only_db = "PRAGMA query_only = ON" in text
    writes = any(w in text for w in ("write_text", "write_bytes", "os.replace")) or (
        "sqlite3.connect(" in text and not read_only_db
    )
    if writes:
        assert "ctx.data_path(" in text
    for forbidden in ("open(", "shutil", "subprocess", "os.remove", "unlink("):
        assert forbidden not in text, f"{name} uses {forbidden}"


@pytest.mark.parametrize("name", NAMES)
def test_bodies_take_the_time_from_the_request_or_the_settings(name):
    """So ``[config] now`` pins every date a body reads or writes (files.recent compares real modification times)."""
    text = source(name)
    if name == "files.recent":
        return
    assert "datetime.now()" not in text and "date.today()" not in text
    if "datetime" in text:
        assert "current_time(request, ctx.config)" in text
