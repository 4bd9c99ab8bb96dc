"""House rules for the sandbox's code: the standard library only where a confined child loads it, module size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.imports import imported_modules

import semif_agent

PACKAGE = Path(semif_agent.__file__).resolve().parent
OWN = sorted((PACKAGE / "sandbox").glob("*.py"))
STDLIB_ONLY = (
    "_confine.py",
    "_launcher.py",
    "_worker.py",
    "results.py",
    "limits.py",
    "_isolation.py",
    "_cgroup.py",
    "_disk.py",
    "_process_group.py",
    "_mounts.py",
    "_privileges.py",
    "_root.py",
    "_watch.py",
    "_call.py",
    "_ready.py",
    "_code_cache.py",
    "channel.py",
    "_messages.py",
    "_relay.py",
    "_warm_calls.py",
    "_resident.py",
    "_warm_check.py",
    "_folders.py",
    "_zygote.py",
    "errors.py",
)


def test_modules_a_confined_child_loads_use_only_the_standard_library():
    allowed_own = {
        "semif_agent",
        "semif_agent.sandbox",
        "semif_agent.sandbox._confine",
        "semif_agent.sandbox.results",
        "semif_agent.sandbox.limits",
        "semif_agent.sandbox._isolation",
        "semif_agent.sandbox._cgroup",
        "semif_agent.sandbox._disk",
        "semif_agent.sandbox._process_group",
        "semif_agent.sandbox._mounts",
        "semif_agent.sandbox._privileges",
        "semif_agent.sandbox._root",
        "semif_agent.sandbox._watch",
        "semif_agent.sandbox._call",
        "semif_agent.sandbox._ready",
        "semif_agent.sandbox.channel",
        "semif_agent.sandbox._messages",
        "semif_agent.sandbox._relay",
        "semif_agent.sandbox._warm_calls",
        "semif_agent.sandbox._resident",
        "semif_agent.sandbox._warm_check",
        "semif_agent.sandbox._folders",
        "semif_agent.sandbox._zygote",
        "semif_agent.sandbox.errors",
        "semif_agent.errors",
        "semif_agent._beneath",  # standard library only (tests/test_beneath.py)
        "_beneath",
        "_confine",
        "_isolation",
        "_cgroup",
        "_disk",
        "_process_group",
        "_mounts",
        "_privileges",
        "_root",
    }  # the launcher imports its siblings directly
    for name in STDLIB_ONLY:
        for module in imported_modules(PACKAGE / "sandbox" / name):
            top = module.split(".")[0]
            assert module in allowed_own or top in sys.stdlib_module_names, f"{name} imports {module}"


def test_no_module_is_over_500_lines():
    for path in OWN:
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, path.name


def test_the_warm_worker_loads_no_other_layer():
    code = (
        "import sys; from semif_agent.sandbox import _call, channel; "
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('semif_agent.')}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (
        done.stdout.strip() == "['_beneath', '_lazy', 'errors', 'sandbox']"
    )  # _beneath: the package's folder handling, standard library only
