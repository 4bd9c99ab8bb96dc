"""The catalog's former name, ``SkillRegistry``, still imports: the same class, deprecated once, outside the package."""

from __future__ import annotations

import json
import subprocess
import sys

OUTSIDE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from semif_agent.catalog import SkillRegistry
    from semif_agent.catalog.registry import SkillRegistry as again
    import semif_agent.catalog as catalog
    catalog.SkillRegistry
from semif_agent.catalog import SkillCatalog
print(json.dumps({
    "same": SkillRegistry is again is SkillCatalog,
    "exported": "SkillRegistry" in catalog.__all__,
    "warnings": [(w.category.__name__, str(w.message), w.filename, w.lineno) for w in caught],
}))
"""


def run(code: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *options, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_former_name_is_the_catalog_and_warns_once_at_the_caller_s_line() -> None:
    result = run(OUTSIDE)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["same"] and not seen["exported"]
    message = "semif_agent.catalog.SkillRegistry is deprecated; use SkillCatalog"
    assert seen["warnings"] == [["DeprecationWarning", message, "<string>", 5]]


def test_the_package_s_own_modules_use_it_without_a_warning() -> None:
    code = (
        "import semif_agent.catalog.listing, semif_agent.loop.skill_md_run, semif_agent.agent as a; a.SkillRegistry()"
    )
    result = run(code, "-W", "error::DeprecationWarning")
    assert result.returncode == 0, result.stderr
