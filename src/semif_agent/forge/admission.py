"""The whole admission check: the static criteria, the duplicate check, then the behavioural gate."""

from __future__ import annotations

from typing import Any

from ..contract import CheckReport, check_source
from ..engine.base import Engine
from ..errors import InvalidArgumentError
from ..tree.tree import SkillTree
from ..workspace import Workspace
from .duplicates import duplicate_violation, nearest_leaf
from .gate import run_gate


async def acheck_skill(
    source: str,
    manifest: dict[str, Any],
    *,
    workspace: Workspace | None,
    tree: SkillTree,
    engine: Engine | None = None,
    gate: bool = True,
) -> CheckReport:
    """Every violation of ``source`` as the body of ``manifest``; the gate runs only on a statically clean body.

    The gate runs the body against a copy of ``workspace``: without one, pass ``gate=False``.
    """
    if gate and workspace is None:
        raise InvalidArgumentError("the behavioural gate runs against a workspace: pass one, or gate=False")
    report = check_source(source, name=manifest.get("name", ""), category=manifest.get("category", ""))
    description = manifest.get("description", "")
    if description and manifest.get("category") in tree.categories:
        found = nearest_leaf(manifest["name"], description, manifest["category"], tree, engine)
        report.nearest = found.to_dict() if found else None
        violation = duplicate_violation(found)
        if violation is not None:
            report.violations.append(violation)
    if gate and workspace is not None and report.ok:
        samples = list(manifest.get("examples") or []) or [description or manifest.get("name", "")]
        result = await run_gate(
            source,
            name=manifest["name"],
            category=manifest["category"],
            budget=int(manifest.get("cost_budget", 3)),
            samples=samples[:4],
            workspace=workspace,
            engine_name=getattr(engine, "name", None),
            engine_model=getattr(engine, "model", None),
        )
        report.gate = result.to_dict()
        report.violations.extend(result.violations())
    return report
