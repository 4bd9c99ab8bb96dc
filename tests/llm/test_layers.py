"""The llm package loads its SDKs lazily and keeps its modules small (layers: tests/kernel/test_layers.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import semif_agent

PACKAGE = Path(semif_agent.__file__).parent
LLM = PACKAGE / "llm"


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
