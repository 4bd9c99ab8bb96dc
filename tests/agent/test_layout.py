"""The agent package holds the Agent and its parts: what is built on an Agent lives above it, and no name is used twice."""

from __future__ import annotations

import ast
from pathlib import Path

import semif_agent
import semif_agent.agent

PACKAGE = Path(semif_agent.__file__).parent
AGENT = Path(semif_agent.agent.__file__).parent


def _runtime_imports(path: Path) -> list[ast.ImportFrom]:
    """The ``from ... import`` statements a module runs (those under ``if TYPE_CHECKING:`` left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    return [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and id(node) not in skipped]


def _target(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module ``node`` imports from, in ``path``."""
    if not node.level:
        return node.module or ""
    parts = ["semif_agent", *path.relative_to(PACKAGE).with_suffix("").parts]
    package = parts if path.name == "__init__.py" else parts[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def test_no_module_inside_the_agent_builds_on_an_agent():
    users = [
        str(path.relative_to(PACKAGE))
        for path in AGENT.rglob("*.py")
        if path.name != "__init__.py" and path != AGENT / "agent.py"
        for node in _runtime_imports(path)
        if _target(path, node) in {"semif_agent.agent", "semif_agent.agent.agent"}
        and any(alias.name == "Agent" for alias in node.names)
    ]
    assert users == []  # they belong above it, in semif_agent.assistant (or the face that uses them)


def test_no_package_of_the_agent_is_named_as_a_package_of_semif_agent():
    top = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    inner = {path.name for path in AGENT.rglob("*") if (path / "__init__.py").exists()}
    assert inner & top == set()


def test_what_is_built_on_an_agent_is_importable_from_above_it():
    from semif_agent.assistant.chat import skill_agent
    from semif_agent.assistant.skill_runs import AgentSkillExecutor

    assert callable(skill_agent) and callable(AgentSkillExecutor)
