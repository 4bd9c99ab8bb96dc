"""From the loop: when no leaf fits a request, propose a skill for it, generate it, admit it.

1. The engine decides which category the new skill belongs to (a SemIf
   decision over the categories, ``none`` meaning a new one).
2. The code model proposes the manifest (name, description, examples, and a
   category name and description when a new one is needed) as JSON.
3. The skill is generated and admitted (see :mod:`.generator`).

Each step is logged to the decision log under the run's id.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..catalog.names import CATEGORY_RE, NAME_RE
from ..engine.base import Engine, decide
from ..engine.decisions import NONE_ID, DecisionRequest, Option
from ..errors import UserError
from ..records import DecisionLog, DecisionRow, ProposeRow
from ..tree.tree import SkillTree
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..llm.protocol import LLMProvider
from .generator import Generated, agenerate_skill, make_manifest

CATEGORY_QUESTION = "Which category should a new skill for this request belong to?"
_JSON = re.compile(r"\{.*\}", re.S)
PROPOSAL_PROMPT = """No skill of this agent can handle the request below. Propose ONE new, single-purpose skill that would.

Request: {request}
Category: {category}
Skills already in that category:
{siblings}

Answer with JSON only:
{{"name": "{prefix}<leaf in snake_case>", "description": "<one or two sentences: what it does>",
  "examples": ["<2 or 3 requests it serves>"]{category_fields}}}"""


async def apropose_skill(
    workspace: Workspace, text: str, *, provider: LLMProvider, engine: Engine, log: DecisionLog, run_id: str
) -> tuple[dict[str, Any], str | None]:
    """(manifest, description of a new category or None) for a skill serving ``text``."""
    from ..llm.messages import UserMessage
    from ..llm.protocol import ModelRequest

    tree = SkillTree.load(workspace.categories_path, workspace.bodies_dir)
    options = [Option(c.name, c.description) for c in tree.categories.values()]
    asked = DecisionRequest(text, CATEGORY_QUESTION, options + [Option(NONE_ID, "None of these: a new category.")])
    answer = await decide(engine, asked)
    log.append(DecisionRow.of(run_id=run_id, step=0, kind="create", skill=None, request=asked, result=answer))
    new_category = answer.selected == NONE_ID
    siblings = "" if new_category else "\n".join(f"- {s.name}: {s.description}" for s in tree.children(answer.selected))
    prompt = PROPOSAL_PROMPT.format(
        request=text,
        category="(a new one: name it)" if new_category else answer.selected,
        siblings=siblings or "(none)",
        prefix="<category>." if new_category else f"{answer.selected}.",
        category_fields=', "category": "<new category, snake_case>", "category_description": "<what it holds>"'
        if new_category
        else "",
    )
    response = await provider.request(
        ModelRequest.build([UserMessage(content=prompt)], max_tokens=600, temperature=0.0)
    )
    proposal = _parse(response.text)
    category = proposal.get("category") if new_category else answer.selected
    if not isinstance(category, str) or not CATEGORY_RE.fullmatch(category):
        raise UserError(f"the model proposed no usable category ({category!r})")
    name = str(proposal.get("name", ""))
    if not name.startswith(f"{category}."):
        name = f"{category}.{name.split('.')[-1]}"
    if not NAME_RE.fullmatch(name):
        raise UserError(f"the model proposed an invalid skill name {name!r}")
    examples = [e for e in proposal.get("examples", []) if isinstance(e, str)][:3]
    manifest = make_manifest(name, str(proposal.get("description", "")), category=category, examples=[text, *examples])
    log.append(
        ProposeRow(
            run_id=run_id,
            skill=name,
            manifest=manifest,
            model=getattr(provider, "model_id", None),
            new_category=new_category,
        )
    )
    return manifest, (str(proposal.get("category_description") or category) if new_category else None)


async def acreate_for(
    workspace: Workspace,
    text: str,
    *,
    provider: LLMProvider,
    engine: Engine,
    log: DecisionLog,
    run_id: str,
    max_attempts: int = 3,
) -> Generated:
    """Propose, generate and admit a skill for ``text``."""
    manifest, category_description = await apropose_skill(
        workspace, text, provider=provider, engine=engine, log=log, run_id=run_id
    )
    return await agenerate_skill(
        workspace,
        manifest,
        provider=provider,
        engine=engine,
        category_description=category_description,
        max_attempts=max_attempts,
        log=log,
        run_id=run_id,
    )


def _parse(text: str) -> dict[str, Any]:
    match = _JSON.search(text)
    try:
        data = json.loads(match.group(0) if match else text)
    except json.JSONDecodeError as exc:
        raise UserError(f"the model's skill proposal is not JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise UserError("the model's skill proposal is not a JSON object")
    return data
