"""Our own Agent using `semif mcp` as an MCP server, its model speaking the OpenAI wire API (loopback server)."""

from __future__ import annotations

import asyncio
import json
import sys

from support.wire_server import WireReply

from semif_agent.agent import Agent, MCPServerConfig
from semif_agent.records import DecisionLog, DecisionRow, LabelRow


def test_an_agent_finds_and_loads_a_skill_through_semif_mcp(corpus_workspace, wire, provider_for):
    root, env = corpus_workspace
    request = "Set up an isolated git worktree for this feature branch"
    server = MCPServerConfig(
        name="semif", command=sys.executable, args=("-m", "semif_agent", "mcp", "-w", str(root)), env=env
    )
    wire.queue(WireReply.tool_call("find_skills", {"request": request, "k": 3}))

    def load_the_best(recorded) -> WireReply:
        results = [m for m in recorded.body["messages"] if m.get("role") == "tool"]
        if len(results) == 1:
            found = json.loads(results[0]["content"])
            return WireReply.tool_call("load_skill", {"name": found["best"], "choice_id": found["choice_id"]})
        return WireReply(text="Following the skill: first, check for an existing worktree directory.")

    wire.respond_with(load_the_best)

    async def turn():
        async with Agent(llm=provider_for("openai")).with_mcp_servers([server]) as agent:
            return [event async for event in agent.astream(request)]

    events = asyncio.run(turn())
    finished = [e for e in events if e.type == "tool_finished"]
    assert [e.name for e in finished] == ["find_skills", "load_skill"] and not any(e.is_error for e in finished)
    assert json.loads(finished[0].result)["best"] == "using-git-worktrees"
    loaded = json.loads(finished[1].result)
    assert loaded["name"] == "using-git-worktrees" and "worktree" in loaded["instructions"].lower()
    assert {t["function"]["name"] for t in wire.posts()[0].body["tools"]} >= {"find_skills", "load_skill"}
    rows = list(DecisionLog(root / "data" / "decisions.jsonl").read())
    [find] = [r for r in rows if isinstance(r, DecisionRow) and r.kind == "shortlist" and r.state == request]
    labels = [r for r in rows if isinstance(r, LabelRow) and r.run_id == find.run_id]
    assert [(r.skill, r.source, r.by) for r in labels] == [("using-git-worktrees", "implicit", "mcp")]
