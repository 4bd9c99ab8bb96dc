"""House rules for the catalog's code: layering, module size, the lazy package face."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.imports import imported_modules

import semif_agent

PACKAGE = Path(semif_agent.__file__).resolve().parent
OWN = sorted([*(PACKAGE / "catalog").glob("*.py"), *(PACKAGE / "compat").glob("*.py")])
FORBIDDEN = ("tree", "loop", "agent", "llm", "cli", "forge")
STDLIB_ONLY = ("context.py", "descriptor.py", "_entrypoint.py", "errors.py")


def test_the_catalog_imports_no_higher_layer():
    for path in OWN:
        for name in imported_modules(path):
            parts = name.split(".")
            if parts[0] == "semif_agent" and len(parts) > 1:
                assert parts[1] not in FORBIDDEN, f"{path.name} imports {name}"


def test_modules_the_sandbox_loads_use_only_the_standard_library():
    allowed_own = {
        "semif_agent.catalog.context",
        "semif_agent.catalog.errors",
        "semif_agent.errors",
        "semif_agent.sandbox._code_cache",  # standard library only too (the sandbox's own rules check it)
    }
    for name in STDLIB_ONLY:
        for module in imported_modules(PACKAGE / "catalog" / name):
            top = module.split(".")[0]
            assert module in allowed_own or top in sys.stdlib_module_names, f"{name} imports {module}"


def test_no_module_is_over_500_lines():
    for path in [*OWN, PACKAGE / "cli" / "catalog_cmds.py"]:
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, path.name


def test_importing_the_package_face_loads_nothing_heavy():
    code = "import sys, semif_agent.catalog.context; print('yaml' in sys.modules, 'semif_agent.catalog.registry' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
