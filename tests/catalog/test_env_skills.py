"""Environment skills (``env:<name>@...``): their scripts and hooks are asked of the host's router, never run."""

from __future__ import annotations

import asyncio

import pytest
from support.catalog_helpers import make_skill

from semif_agent.agent.agent_skills import SkillRegistry
from semif_agent.catalog import (
    AgentSkillRuntime,
    CatalogError,
    EnvironmentQuery,
    EnvironmentRouter,
    MemoryTraceWriter,
    NoEnvironmentRouter,
    SkillCatalog,
)
from semif_agent.errors import ArgumentTypeError

MARKER = """
    from pathlib import Path
    Path("script-ran").write_text("the script ran")
    print("from the script")
"""


class Market:
    """A host's environment: answers trades, records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[EnvironmentQuery] = []

    async def ask_env(self, query: EnvironmentQuery) -> str:
        self.asked.append(query)
        return f"{query.env_name} filled: {query.instruction}"


@pytest.fixture
def catalog(tmp_path) -> SkillCatalog:
    market = tmp_path / "market-skills"
    make_skill(
        market,
        "trade",
        "name: trade\ndescription: Buy or sell on the market.\nscript: scripts/trade.py\nhooks:\n  post_step: scripts/trade.py",
        files={"scripts/trade.py": MARKER},
    )
    own = tmp_path / "own-skills"
    make_skill(own, "note", "name: note\ndescription: Write a note.\nscript: note.py", files={"note.py": MARKER})
    catalog = SkillCatalog()
    assert catalog.scan_env(market, "market") == ["env:market@trade"]
    catalog.scan_custom(own)
    return catalog


def runtime_for(catalog, tmp_path, **kwargs) -> AgentSkillRuntime:
    runtime = AgentSkillRuntime("trader-1", catalog, **kwargs)
    runtime.bind_workspace(workspace_root=tmp_path / "work", trace_writer=MemoryTraceWriter())
    runtime.set_visible_skills(["env:market@trade", "custom@note"])
    return runtime


async def test_an_env_skill_script_is_asked_of_the_router_and_never_runs(catalog, tmp_path):
    market = Market()
    assert isinstance(market, EnvironmentRouter)
    runtime = runtime_for(catalog, tmp_path, env_router=market)
    result = await runtime.run_skill_script("trade", "", ["buy", "10 ACME"])
    assert result.ok and result.stdout == "market filled: buy 10 ACME" and result.error_type == "none"
    assert market.asked == [
        EnvironmentQuery(
            agent_id="trader-1",
            skill_id="env:market@trade",
            skill_name="trade",
            env_name="market",
            argv=("buy", "10 ACME"),
            script="scripts/trade.py",
        )
    ]
    assert not (tmp_path / "work" / "script-ran").exists()
    [span] = runtime.trace_writer.records
    assert span["name"] == "skill.ask_env" and span["attributes"]["skill.id"] == "env:market@trade"


async def test_an_env_skill_hook_is_asked_too_and_other_skills_still_run_their_scripts(catalog, tmp_path):
    market = Market()
    runtime = runtime_for(catalog, tmp_path, env_router=market)
    hooked = await runtime.run_skill_hook("env:market@trade", "post_step", ["settle"])
    assert hooked.ok and hooked.stdout == "market filled: settle"
    assert market.asked[0].hook_type == "post_step" and market.asked[0].script == "scripts/trade.py"
    ran = await runtime.run_skill_script("note", "", [])
    assert ran.ok and ran.stdout.strip() == "from the script"
    assert (tmp_path / "work" / "script-ran").read_text() == "the script ran"
    assert len(market.asked) == 1


async def test_without_a_router_an_env_skill_raises_one_clear_line(catalog, tmp_path):
    runtime = runtime_for(catalog, tmp_path)
    with pytest.raises(NoEnvironmentRouter) as caught:
        await runtime.run_skill_script("env:market@trade", "", ["buy"])
    message = str(caught.value)
    assert isinstance(caught.value, CatalogError) and "\n" not in message
    assert message.startswith("skill env:market@trade is an environment skill, answered by ask_env,")
    assert "set_env_router()" in message
    assert not (tmp_path / "work" / "script-ran").exists()
    [span] = runtime.trace_writer.records
    assert span["name"] == "skill.ask_env" and span["status"]["code"] == "ERROR"


async def test_routers_may_be_sync_and_their_failures_are_failed_runs(catalog, tmp_path):
    class Sync:
        def ask_env(self, query: EnvironmentQuery) -> str:
            return "sync answer"

    class Broken:
        def ask_env(self, query: EnvironmentQuery) -> str:
            raise RuntimeError("the market is closed")

    class Wordless:
        def ask_env(self, query: EnvironmentQuery) -> object:
            return {"price": 101.5}

    class Slow:
        async def ask_env(self, query: EnvironmentQuery) -> str:
            await asyncio.sleep(30)
            return "too late"

    runtime = runtime_for(catalog, tmp_path, env_router=Sync())
    assert (await runtime.run_skill_script("trade", "", [])).stdout == "sync answer"
    runtime.set_env_router(Broken())
    broken = await runtime.run_skill_script("trade", "", [])
    assert not broken.ok and broken.error_type == "exception"
    assert broken.stderr == "ask_env raised RuntimeError: the market is closed"
    runtime.set_env_router(Wordless())
    wordless = await runtime.run_skill_script("trade", "", [])
    assert not wordless.ok and wordless.stderr == "ask_env answered with dict, not text"
    runtime.set_env_router(Slow())
    slow = await runtime.run_skill_script("trade", "", [], timeout_sec=0.05)
    assert not slow.ok and slow.error_type == "timeout"


def test_the_router_is_checked_and_kept_when_an_agent_restores_its_skills(catalog):
    runtime = AgentSkillRuntime("trader-1", catalog)
    with pytest.raises(ArgumentTypeError, match="env_router must be a EnvironmentRouter or None, not str"):
        runtime.set_env_router("market")  # type: ignore[arg-type]  # a wrong type on purpose
    market = Market()
    skills = SkillRegistry(catalog=catalog)
    skills.runtime.set_env_router(market)
    skills.load_state(skills.to_state())
    assert skills.runtime.env_router is market
