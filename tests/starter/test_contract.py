"""Every starter body keeps the skill contract; email.compose is the seed's worked example, verbatim."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from semif_agent.starter import TEMPLATE_DIR

SKILLS = json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text(encoding="utf-8"))["skills"]
NAMES = [s["name"] for s in SKILLS]

# The worked example of the skill contract: predict and act of the seed body the kernel tests run verbatim
# (tests/fixtures/seed_email_compose.py, itself checked against the seed document).
_SEED_BODY = (Path(__file__).parents[1] / "fixtures" / "seed_email_compose.py").read_text(encoding="utf-8")
SEED_EXAMPLE = "\n\n".join(
    ast.get_source_segment(_SEED_BODY, node)
    for node in ast.parse(_SEED_BODY).body
    if isinstance(node, ast.FunctionDef) and node.name in ("predict", "act")
)


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
    assert len(text.splitlines()) <= 160  # calendar.add_event, the date parser, is the longest
    tree = ast.parse(text)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "ctx.engine.call"]
    assert 1 <= len(calls) <= [s for s in SKILLS if s["name"] == name][0]["cost_budget"]
    loops = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for node in ast.walk(tree):
        if isinstance(node, loops):
            assert "ctx.engine" not in ast.unparse(node), "no engine calls in loops"


@pytest.mark.parametrize("name", NAMES)
def test_body_writes_only_through_data_paths(name):
    text = source(name)
    if name == "email.compose":  # the seed writes to config["drafts"] directly
        return
    writes = any(w in text for w in ("write_text", "write_bytes", "os.replace", "sqlite3.connect(path)"))
    if writes:
        assert "ctx.data_path(" in text
    for forbidden in ("open(", "shutil", "subprocess", "os.remove", "unlink("):
        assert forbidden not in text, f"{name} uses {forbidden}"


def test_compose_is_the_seed_example_plus_a_none_guard():
    text = source("email.compose")
    tree = ast.parse(text)
    seed = ast.parse(SEED_EXAMPLE)
    mine = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("predict", "act")}
    assert ast.unparse(mine["predict"]) == ast.unparse(seed.body[0])
    guard = mine["act"].body[1]
    assert isinstance(guard, ast.If) and "'none'" in ast.unparse(guard.test)
    mine["act"].body.remove(guard)
    assert ast.unparse(mine["act"]) == ast.unparse(seed.body[1])
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert imports == [
        "import json",
        "from pathlib import Path",
        "from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction",
    ]
    helpers = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in ("predict", "act")]
    assert helpers == ["read_contacts"]
