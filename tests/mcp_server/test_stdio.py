"""`semif mcp` over stdio, through the official MCP SDK's client: find, load, read, run, report, bad input, changes."""

from __future__ import annotations

import asyncio
import json
import shutil
import time

import pytest

from semif_agent.chooser import MAX_REQUEST_BYTES
from semif_agent.records import AnyRow, DecisionLog, DecisionRow, LabelRow
from semif_agent.routing.training import examples_from_log
from semif_agent.tree.tree import SkillTree
from semif_agent.workspace import Workspace

from ._client import ToolFailed, stdio

REQUESTS = {  # a request for each of ten real skills, in words a user might use
    "gh-fix-ci": "Fix the failing CI checks on my GitHub pull request",
    "gh-address-comments": "Address the review comments on my open PR",
    "systematic-debugging": "This test fails intermittently and I don't know why, help me debug it",
    "brainstorming": "Let's brainstorm the design of a new feature before writing code",
    "writing-plans": "Write an implementation plan for this multi-step task",
    "linear": "Create a Linear issue for the login bug",
    "test-driven-development": "Implement this function test-first, red green refactor",
    "using-git-worktrees": "Set up an isolated git worktree for this feature branch",
    "skill-creator": "Help me create a new skill for Codex",
    "email.compose": "Email Grace that I accept the offer",
}
TOOLS = {"find_skills", "load_skill", "read_skill_file", "run_skill", "report_outcome"}


def log_rows(root) -> list[AnyRow]:
    return list(DecisionLog(root / "data" / "decisions.jsonl").read())


@pytest.mark.slow
def test_a_client_finds_loads_and_reads_real_skills(corpus_workspace):
    root, env = corpus_workspace

    async def session():
        async with stdio(root, env) as client:
            tools = (await client.session.list_tools()).tools
            found = {name: await client.call("find_skills", request=text) for name, text in REQUESTS.items()}
            loaded = await client.call("load_skill", name="gh-fix-ci")  # naming no find: no pick of any
            last = list(found.values())[-1]
            await client.call("load_skill", name=last["skills"][1]["name"], choice_id=last["choice_id"])  # a pick
            text = await client.call("read_skill_file", name="gh-fix-ci", path="SKILL.md")
            with pytest.raises(ToolFailed, match="path is not inside the skill"):
                await client.call("read_skill_file", name="gh-fix-ci", path="../../semif.toml")
            resources = (await client.session.list_resources()).resources
            read = await client.session.read_resource("skill://linear")
            return tools, found, loaded, text, resources, read

    tools, found, loaded, text, resources, read = asyncio.run(session())
    assert {t.name for t in tools} == TOOLS
    assert all(len(t.description or "") < 260 for t in tools)  # the client's listing stays short
    top5 = {name: [s["name"] for s in answer["skills"]] for name, answer in found.items()}
    assert all(name in names for name, names in top5.items()), top5
    assert sum(names[0] == name for name, names in top5.items()) >= 8, top5
    for answer in found.values():
        assert len(answer["skills"]) == 5 and len(json.dumps(answer)) < 8000  # well under 2k tokens
        assert answer["skills"][0]["probability"] >= answer["skills"][-1]["probability"]
    assert "gh pr checks" in loaded["instructions"] and loaded["kind"] == "skill_md"
    assert text.startswith("---\nname: gh-fix-ci")
    assert len(resources) == 24 and "skill://linear" in {str(r.uri) for r in resources}
    assert "Linear" in read.contents[0].text

    rows = log_rows(root)
    finds = [r for r in rows if isinstance(r, DecisionRow) and r.kind == "shortlist" and r.source == "mcp"]
    clients = {r.extra_field("client") for r in finds}
    assert len(finds) == len(REQUESTS) and clients == {"mcp"}  # the SDK client's own name
    picked = [r for r in rows if isinstance(r, LabelRow) and r.source == "implicit"]
    assert [(r.skill, r.run_id) for r in picked] == [(top5["email.compose"][1], finds[-1].run_id)]
    assert picked[0].wrong == top5["email.compose"][0]  # the last find ranked another skill first


@pytest.mark.slow
def test_a_client_runs_a_code_skill_and_reports_how_it_went(corpus_workspace):
    root, env = corpus_workspace
    request = "Email Alice that the quarterly report is ready"

    async def session():
        async with stdio(root, env) as client:
            shortlist = await client.call("find_skills", request=request, k=3)
            ran = await client.call("run_skill", name="email.compose", request=request)
            labelled = await client.call("report_outcome", id=ran["run_id"], outcome="success", note="sent")
            relabelled = await client.call("report_outcome", id=shortlist["choice_id"], outcome="failure", skill="none")
            return shortlist, ran, labelled, relabelled

    shortlist, ran, labelled, relabelled = asyncio.run(session())
    assert "email.compose" in [s["name"] for s in shortlist["skills"]]
    [draft] = ran["changes"]["created"]
    assert (root / draft).read_text().startswith("To: Alice") and ran["outcome"] == "success"
    assert (labelled, relabelled) == ({"labelled": ran["run_id"]}, {"labelled": shortlist["choice_id"]})
    runs = {r.run_id: r for r in DecisionLog(root / "data" / "decisions.jsonl").runs()}
    assert runs[ran["run_id"]].skill == "email.compose" and runs[ran["run_id"]].label_outcome == "success"
    assert runs[shortlist["choice_id"]].label_has_skill and runs[shortlist["choice_id"]].label_skill is None
    taught = examples_from_log(runs.values(), SkillTree.for_workspace(Workspace.load(root)))
    assert ("Email Alice that the quarterly report is ready", "email.compose", "reported") in {
        (e.text, e.skill, e.source) for e in taught
    }  # the client's own word: a report, weighing less than a person's label
    assert all(e.client == "mcp" and e.weight < 1 for e in taught)


@pytest.mark.slow
def test_bad_input_is_an_error_result_and_the_server_serves_on(corpus_workspace):
    root, env = corpus_workspace
    before = len(log_rows(root))

    async def session():
        async with stdio(root, env) as client:
            errors = []
            for tool, arguments in (
                ("load_skill", {"name": "no-such-skill"}),
                ("run_skill", {"name": "no-such-skill", "request": "anything"}),
                ("read_skill_file", {"name": "linear", "path": "/etc/passwd"}),
                ("read_skill_file", {"name": "email.compose", "path": "x"}),
                ("find_skills", {"request": "x" * (MAX_REQUEST_BYTES + 1)}),
                ("find_skills", {"request": "   "}),
                ("find_skills", {"request": "email", "k": "many"}),
                ("find_skills", {"request": "email", "k": 99}),
                ("find_skills", {}),
                ("report_outcome", {"id": "no-such-run", "outcome": "success"}),
                ("report_outcome", {"id": "2", "outcome": "great"}),
            ):
                with pytest.raises(ToolFailed) as failed:
                    await client.call(tool, **arguments)
                errors.append(str(failed.value))
            still = await client.call("find_skills", request="Create a Linear issue for the login bug")
            return errors, still

    errors, still = asyncio.run(session())
    assert "no skill 'no-such-skill'" in errors[0] and "no skill 'no-such-skill'" in errors[1]
    assert "path is not inside the skill" in errors[2] and "code skill" in errors[3]
    assert "at most 64 KiB" in errors[4] and "empty" in errors[5]
    assert all("\n" not in e.strip() for e in errors[:6]), errors
    assert "k" in errors[6] and "1 to 15" in errors[7] and "request" in errors[8]
    assert "no run 'no-such-run'" in errors[9]
    assert still["best"] == "linear"
    assert len(log_rows(root)) == before + 1  # only the good find was logged; nothing was lost or half-written


@pytest.mark.slow
def test_a_skill_added_on_disk_is_announced_and_found(corpus_workspace, tmp_path):
    root, env = corpus_workspace
    added = root / "skills" / "tide-tables"

    async def session():
        async with stdio(root, env) as client:
            assert "tide-tables" not in {r.name for r in (await client.session.list_resources()).resources}
            added.mkdir()
            (added / "SKILL.md").write_text(
                "---\nname: tide-tables\ndescription: Look up high and low tide times for a harbour on a date.\n---\n"
                "Read the tide table for the harbour and give the times.\n",
                encoding="utf-8",
            )
            deadline = time.monotonic() + 30
            while not client.saw_list_changed() and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            names = {r.name for r in (await client.session.list_resources()).resources}
            found = await client.call("find_skills", request="When is high tide in the harbour tomorrow?")
            return client.saw_list_changed(), names, found

    try:
        announced, names, found = asyncio.run(session())
    finally:
        shutil.rmtree(added, ignore_errors=True)
    assert announced and "tide-tables" in names
    assert found["skills"][0]["name"] == "tide-tables"


def test_the_server_says_when_its_skills_are_ready_and_a_first_find_waits_for_them(corpus_workspace, tmp_path):
    root, env = corpus_workspace
    errlog = (tmp_path / "stderr.txt").open("w+")

    async def session():
        async with stdio(root, env, errlog=errlog) as client:  # the handshake is answered while the tree loads
            return await client.call("find_skills", request=REQUESTS["linear"])

    found = asyncio.run(session())
    assert found["skills"][0]["name"] == "linear"
    errlog.seek(0)
    said = errlog.read()
    assert "semif mcp: loading the skills of" in said
    ready = [line for line in said.splitlines() if line.startswith("semif mcp: ") and "skills ready" in line]
    assert len(ready) == 1 and int(ready[0].split()[2]) >= 24, said
