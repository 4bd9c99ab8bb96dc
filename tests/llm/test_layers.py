"""The llm package keeps to its layer, loads its SDKs lazily, and keeps its modules small."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import semif_agent

PACKAGE = Path(semif_agent.__file__).parent
LLM = PACKAGE / "llm"
ALLOWED = ("semif_agent.llm", "semif_agent.engine", "semif_agent.errors", "semif_agent.skills")


def _imports(path: Path) -> set[str]:
    module = "semif_agent." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                found.add(f"{base}.{node.module}" if node.module else base)
            else:
                found.add(node.module or "")
    return found


def test_llm_imports_only_the_kernel_and_itself():
    for path in LLM.rglob("*.py"):
        ours = {name for name in _imports(path) if name.startswith("semif_agent")}
        wrong = {name for name in ours if not name.startswith(ALLOWED)}
        assert not wrong, f"{path.relative_to(PACKAGE)} imports {sorted(wrong)}"


def test_kernel_never_imports_llm():
    for folder in ("engine",):
        for path in (PACKAGE / folder).rglob("*.py"):
            assert not any(n.startswith("semif_agent.llm") for n in _imports(path)), path
    for name in ("errors.py", "skills.py"):
        assert not any(n.startswith("semif_agent.llm") for n in _imports(PACKAGE / name))


def test_sdks_load_only_when_a_provider_is_built():
    code = (
        "import sys, semif_agent.llm, semif_agent.llm.providers.openai, semif_agent.llm.providers.anthropic\n"
        "loaded = sorted(m for m in ('openai', 'anthropic', 'httpx', 'httpx2', 'pydantic') if m in sys.modules)\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_modules_stay_small_and_public_names_are_documented():
    import semif_agent.llm as llm

    for path in list(LLM.rglob("*.py")) + [PACKAGE / "cli" / "models_cmd.py"]:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 500, f"{path.name} has {lines} lines"
    for name in llm.__all__:
        value = getattr(llm, name)
        if callable(value) and not name.isupper() and getattr(value, "__module__", "").startswith("semif_agent"):
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"
