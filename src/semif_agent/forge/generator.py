"""Skill generation: a model writes a body to the contract; only a body that passes is admitted.

The model is given the contract (``CONTRACT.md``, verbatim) and the manifest;
each attempt is checked, and the violations are fed back for the next one, a
bounded number of times. Only a passing body is written, atomically, with its
manifest (see :mod:`.store`). Every attempt is logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.names import NAME_RE
from ..contract import CheckReport
from ..engine.base import Engine
from ..errors import UserError
from ..records import DecisionLog, GenerateRow
from ..tree.manifests import DEFAULT_COST_BUDGET
from ..tree.tree import SkillTree
from ..workspace import Workspace
from .admission import acheck_skill
from .store import admit

if TYPE_CHECKING:
    from ..llm.messages import Message
    from ..llm.protocol import LLMProvider


MAX_ATTEMPTS = 3
_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


def contract_text() -> str:
    """The contract the generator is given, word for word."""
    return resources.files("semif_agent.forge").joinpath("CONTRACT.md").read_text(encoding="utf-8")


class GenerationFailed(UserError):
    """No attempt passed the contract; nothing was written."""

    def __init__(self, message: str, attempts: list[Attempt]) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass
class Attempt:
    number: int
    source: str
    report: CheckReport


@dataclass
class Generated:
    """An admitted skill: its manifest, body path, and the attempts it took."""

    manifest: dict[str, Any]
    body_path: Path
    attempts: list[Attempt] = field(default_factory=list)


def extract_code(text: str) -> str:
    """The Python module in a model's answer (the fenced block, or the whole answer)."""
    blocks = _CODE.findall(text)
    return (max(blocks, key=len) if blocks else text).strip() + "\n"


def make_manifest(
    name: str,
    description: str,
    *,
    category: str | None = None,
    examples: list[str] | None = None,
    cost_budget: int = DEFAULT_COST_BUDGET,
) -> dict[str, Any]:
    if not NAME_RE.fullmatch(name):
        raise UserError(f"invalid skill name {name!r}: use category.leaf in lowercase letters, digits and '_'")
    category = category or name.split(".")[0]
    if "." not in name and category == name:
        raise UserError(f"name the skill as CATEGORY.NAME, e.g. {name}.run")
    if not description.strip():
        raise UserError("a new skill needs a description (--description)")
    return {
        "name": name,
        "category": category,
        "description": description.strip(),
        "allowed_inputs": "The request text.",
        "actions": [],
        "cost_budget": cost_budget,
        "decision_log_ref": f"data/decisions.jsonl?skill={name}",
        "examples": list(examples or []),
    }


def prompt_for(manifest: dict[str, Any], tree: SkillTree, workspace: Workspace, feedback: list[str]) -> str:
    siblings = [
        f"- {s.name}: {s.description}" for s in tree.children(manifest["category"]) if s.name != manifest["name"]
    ]
    config = workspace.skill_config()
    keys = ", ".join(sorted(k for k in config if k != "workspace"))
    roots = set(workspace.write_roots)
    writable = ", ".join(sorted(k for k, v in config.items() if isinstance(v, str) and Path(v) in roots)) or "(none)"
    parts = [
        "Write the body of this skill.",
        "Manifest:\n" + json.dumps(manifest, indent=2),
        "Other skills of its category (do not duplicate them):\n" + ("\n".join(siblings) or "(none yet)"),
        f"Keys of ctx.config (absolute paths): {keys}. The folders the skill may write: {writable}; write only "
        "under them, via ctx.data_path(KEY, ...).",
    ]
    if feedback:
        parts.append("Your previous body was refused. Fix every one of these violations:\n" + "\n".join(feedback))
    return "\n\n".join(parts)


async def agenerate_skill(
    workspace: Workspace,
    manifest: dict[str, Any],
    *,
    provider: LLMProvider,
    engine: Engine | None = None,
    category_description: str | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    feedback: list[str] | None = None,
    log: DecisionLog | None = None,
    run_id: str = "",
    on_attempt: Callable[[Attempt], None] | None = None,
) -> Generated:
    """Ask ``provider`` for a body until one passes (at most ``max_attempts``), then admit it.

    A new category needs ``category_description`` (a description listing its
    skills is then kept up to date). ``feedback`` seeds the first prompt (e.g.
    past failures of the skill being regenerated).
    """
    from ..llm.messages import SystemMessage, UserMessage
    from ..llm.protocol import ModelRequest

    tree = SkillTree.load(workspace.categories_path, workspace.bodies_dir)
    category = _category_entry(manifest, tree, category_description)
    if category is not None:
        tree.categories.setdefault(category["name"], _as_category(category))
    attempts: list[Attempt] = []
    notes = list(feedback or [])
    for number in range(1, max_attempts + 1):
        messages: list[Message] = [
            SystemMessage(content=contract_text()),
            UserMessage(content=prompt_for(manifest, tree, workspace, notes)),
        ]
        response = await provider.request(ModelRequest.build(messages, max_tokens=4096, temperature=0.0))
        source = extract_code(response.text)
        report = await acheck_skill(source, manifest, workspace=workspace, tree=tree, engine=engine)
        attempt = Attempt(number, source, report)
        attempts.append(attempt)
        if log is not None:
            log.append(
                GenerateRow(
                    run_id=run_id,
                    skill=manifest["name"],
                    attempt=number,
                    admitted=report.ok,
                    violations=[v.render() for v in report.violations],
                    model=getattr(provider, "model_id", None),
                )
            )
        if on_attempt is not None:
            on_attempt(attempt)
        if report.ok:
            body = admit(workspace, manifest, source, category=category)
            return Generated(manifest, body, attempts)
        notes = [v.render() for v in report.violations]
    raise GenerationFailed(
        f"no body for {manifest['name']} passed the contract in {max_attempts} attempts; nothing was written. "
        f"Last violations: {'; '.join(notes[:3])}",
        attempts,
    )


def _category_entry(manifest: dict[str, Any], tree: SkillTree, description: str | None) -> dict[str, Any] | None:
    name = manifest["category"]
    if name in tree.categories and description is None:
        return None
    if name not in tree.categories and description is None:
        raise UserError(f"there is no category {name!r}; pass a category description to create it")
    leaves = [s.name for s in tree.children(name)] + [manifest["name"]]
    listed = ", ".join(sorted(set(leaves)))
    return {"name": name, "description": f"{(description or '').rstrip('.')}. Skills: {listed}."}


def _as_category(entry: dict[str, Any]):
    from ..tree.manifests import Category

    return Category(entry["name"], entry["description"])
