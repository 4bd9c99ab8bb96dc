"""Layers never import upward: each package imports only the layers below it (and the standard library)."""

from __future__ import annotations

import ast
from pathlib import Path

import semif_agent

PACKAGE = Path(semif_agent.__file__).parent
KERNEL = (
    "errors",
    "_sync",
    "_lazy",
    "_text",
    "_beneath",
    "_files",
    "_python_ast",
    "_plugins",
    "spans",
    "_json",
    "_arrays",
    "engine",
    "skills",
    "workspace",
)
WORKERS = (
    *KERNEL,
    "telemetry",
    "records",
    "llm",
    "sandbox",
    "catalog",
    "tree",
    "routing",
    "loop",
    "forge",
    "starter",
    "contract",
)
"""What the agent and the cluster jobs are built on."""
# module or package -> what it may import from semif_agent, besides itself
LAYERS: dict[str, tuple[str, ...]] = {
    "errors": (),
    "_sync": ("errors",),
    "_lazy": (),
    "_text": (),
    "_beneath": (),
    "_files": ("_beneath",),
    "_python_ast": (),
    "_plugins": ("errors",),
    "spans": ("errors",),  # the span pipeline: every layer emits to it
    "_json": (),
    "_arrays": (),  # type names only: imported under TYPE_CHECKING, numpy loads when an engine needs it
    "engine": ("errors", "_sync", "_files", "_plugins", "_json", "_arrays"),
    "skills": ("errors", "engine"),
    "workspace": ("errors", "_text", "_files"),
    "telemetry": ("_text", "spans"),
    "records": KERNEL,
    "llm": (*KERNEL, "records"),
    "sandbox": KERNEL,
    "catalog": (*KERNEL, "records", "sandbox"),
    "compat": (*KERNEL, "records", "catalog"),
    "tree": (*KERNEL, "records", "catalog"),
    "routing": (*KERNEL, "records", "tree", "catalog"),
    "contract": (*KERNEL, "records", "tree", "catalog", "sandbox"),
    "starter": KERNEL,
    "loop": (*KERNEL, "telemetry", "records", "llm", "sandbox", "catalog", "tree", "routing", "contract"),
    "forge": (*KERNEL, "records", "llm", "tree", "routing", "loop", "sandbox", "catalog", "contract"),
    "chooser": (*KERNEL, "records", "llm", "sandbox", "catalog", "tree", "routing", "loop", "contract"),
    "agent": (*WORKERS, "chooser"),
    # what is built on an Agent (semif chat's agent, the Agent following a SKILL.md skill)
    "assistant": (*WORKERS, "chooser", "agent"),
    "ui": (*KERNEL, "records", "llm", "sandbox", "catalog", "tree", "routing", "loop", "chooser"),
    # the MCP server: a face like the command line and the web view (it binds its socket as `semif ui` does)
    "mcp_server": (
        *KERNEL,
        "records",
        "llm",
        "sandbox",
        "catalog",
        "tree",
        "routing",
        "loop",
        "contract",
        "chooser",
        "ui",
    ),
    "distributed": WORKERS,
}


def imports_of(path: Path) -> set[str]:
    """The semif_agent top-level names a module imports (absolute or relative)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    package = parts if path.name == "__init__.py" else parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - (node.level - 1)])
            target = base + (node.module.split(".") if node.module else [])
            if target:
                found.add(target[0])
            else:  # "from .. import x": the names are modules of the package
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("semif_agent."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("semif_agent."))
    return found


def test_no_layer_imports_upward() -> None:
    problems = []
    for layer, allowed in LAYERS.items():
        paths = (
            [PACKAGE / f"{layer}.py"] if (PACKAGE / f"{layer}.py").exists() else list((PACKAGE / layer).rglob("*.py"))
        )
        for path in paths:
            wrong = imports_of(path) - set(allowed) - {layer}
            if wrong:
                problems.append(f"{path.relative_to(PACKAGE)} imports {sorted(wrong)}")
    assert problems == []


def test_no_module_is_over_600_lines() -> None:
    big = [(p.relative_to(PACKAGE), n) for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600]
    assert big == []
