"""Environment skills: ids ``env:<name>@<skill>`` are answered by the host's environment, not by a script.

A host application that simulates or fronts an environment scans that
environment's skills into the catalog (``catalog.scan_env(folder, "market")``,
ids ``env:market@<skill>``) and gives each agent's runtime an
:class:`EnvironmentRouter`. Running such a skill's script or hook then asks
the router (``ask_env``) instead of starting a process; the answer comes back
as the run's ``stdout``, in the same :class:`~semif_agent.sandbox.results.ScriptRunResult`
a script gives::

    class Market:
        async def ask_env(self, query: EnvironmentQuery) -> str:
            return f"{query.env_name}: {query.instruction} -> filled at 101.5"

    runtime = AgentSkillRuntime("trader-1", catalog, env_router=Market())

An :class:`~semif_agent.agent.Agent` keeps the routing: a skill read from
the catalog (``Skill.from_descriptor(catalog.get("env:market@trade"))``, or
any ``Skill`` with ``environment="market"``) is entered in the agent's
catalog under ``env:market``, and ``agent.with_skills([trade],
allow_scripts=True, env_router=Market())`` gives the agent (and its
subagents) the router.

With no router registered, an environment skill's run raises
:class:`~.errors.NoEnvironmentRouter`. A router that raises, or answers with
anything but text, gives a failed run (``error_type`` ``exception``); one that
outlasts the run's ``timeout_sec`` is cancelled (``timeout``).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..sandbox.results import ErrorType, ScriptRunResult
from .descriptor import SkillDescriptor
from .errors import NoEnvironmentRouter

ENV_PREFIX = "env:"
"""Skill ids that start with this are environment skills."""


def is_env_skill(skill_id: str) -> bool:
    """True for an environment skill's id (``env:<name>@<skill>``)."""
    return skill_id.startswith(ENV_PREFIX)


@dataclass(frozen=True, kw_only=True)
class EnvironmentQuery:
    """What an agent asks its environment when it runs an environment skill.

    ``script`` is the script the run named (the skill's default when it named
    none; empty when it declares none); ``hook_type`` is set when a lifecycle
    hook (``pre_step``, ``post_step``...) was run rather than a script.
    """

    agent_id: int | str
    skill_id: str
    skill_name: str
    env_name: str
    argv: tuple[str, ...] = ()
    script: str = ""
    hook_type: str = ""

    @property
    def instruction(self) -> str:
        """The arguments as one line of text (what a request passed to a script reads as)."""
        return " ".join(self.argv)


@runtime_checkable
class EnvironmentRouter(Protocol):
    """What a host application implements to answer its environment skills (sync or async)."""

    def ask_env(self, query: EnvironmentQuery) -> Awaitable[str] | str:
        """The environment's answer to ``query``, as text."""
        ...


async def ask_env(
    router: EnvironmentRouter | None,
    *,
    agent_id: int | str,
    info: SkillDescriptor,
    argv: Sequence[str],
    script: str,
    hook_type: str,
    timeout_sec: float,
) -> ScriptRunResult:
    """Ask ``router`` about environment skill ``info``: its answer as a run result.

    Raises :class:`NoEnvironmentRouter` when ``router`` is None.
    """
    if router is None:
        raise NoEnvironmentRouter(
            f"skill {info.skill_id} is an environment skill, answered by ask_env, and no environment router "
            "is registered: pass env_router= to AgentSkillRuntime or call its set_env_router()"
        )
    query = EnvironmentQuery(
        agent_id=agent_id,
        skill_id=info.skill_id,
        skill_name=info.name,
        env_name=info.namespace[len(ENV_PREFIX) :],
        argv=tuple(str(arg) for arg in argv),
        script=script,
        hook_type=hook_type,
    )
    try:
        answer = router.ask_env(query)
        if inspect.isawaitable(answer):
            answer = await asyncio.wait_for(answer, timeout_sec)
    except TimeoutError:
        note = f"ask_env gave no answer within its {timeout_sec:g}s timeout"
        return ScriptRunResult(False, -1, "", note, str(ErrorType.TIMEOUT))
    except Exception as exc:  # noqa: BLE001 - the host's router failing is the run failing, as a script's exception is
        return ScriptRunResult(False, 1, "", f"ask_env raised {type(exc).__name__}: {exc}", str(ErrorType.EXCEPTION))
    if not isinstance(answer, str):
        note = f"ask_env answered with {type(answer).__name__}, not text"
        return ScriptRunResult(False, 1, "", note, str(ErrorType.EXCEPTION))
    return ScriptRunResult(True, 0, answer, "", str(ErrorType.NONE))
