"""Real skill collections as clients keep them: hidden collection folders, names that break the standard, collisions.

The workspace holds copies of the real skills of ``tests/fixtures/skills-corpus``
under ``.curated``, ``.system`` and ``.experimental`` folders (as OpenAI's
skills repository and Codex keep theirs). Every one is found; names with
spaces or capitals load normalised; a collision is kept apart; and all of it
is said once, when the tree is refreshed, never on every command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import Semif

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus"


def corpus_names() -> set[str]:
    return {folder.name for folder in CORPUS.glob("*/*") if (folder / "SKILL.md").is_file()}


def renamed_copy(source: Path, target: Path, name: str) -> None:
    """A copy of the skill in ``source`` whose frontmatter gives ``name``."""
    shutil.copytree(source, target)
    text = (target / "SKILL.md").read_text(encoding="utf-8")
    (target / "SKILL.md").write_text(text.replace(f"name: {source.name}\n", f"name: {name}\n", 1), encoding="utf-8")


def collections_workspace(semif: Semif, tmp_path: Path) -> Path:
    assert semif("init", "ws", cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    shutil.copytree(CORPUS / "openai-skills", ws / ".agents" / "skills" / "openai" / ".curated")
    shutil.copytree(CORPUS / "superpowers", ws / "skills" / ".system")
    experimental = ws / "skills" / ".experimental"
    renamed_copy(CORPUS / "openai-skills" / "linear", experimental / "linear-tickets", "Linear Tickets")
    renamed_copy(CORPUS / "openai-skills" / "gh-fix-ci", experimental / "fix-ci", "GH-Fix-CI-Runs")
    shutil.copytree(CORPUS / "superpowers" / "brainstorming", experimental / "brainstorming")  # a collision
    shutil.copytree(CORPUS / "superpowers" / "writing-plans", ws / "skills" / ".git" / "writing-plans-copy")
    return ws


def test_hidden_collections_are_found_names_normalised_and_problems_said_once(semif: Semif, tmp_path: Path) -> None:
    ws = collections_workspace(semif, tmp_path)
    refreshed = semif("tree", "refresh", "-w", str(ws))
    assert refreshed.returncode == 0, refreshed.stderr
    assert refreshed.stderr.splitlines() == [
        "SKILL.md skills: 2 skills renamed, 1 collision; see `semif skills validate`"
    ]

    tree = json.loads(semif("tree", "--json", "-w", str(ws)).stdout)
    leaves = {leaf["name"]: leaf for leaf in _leaves(tree)}
    assert corpus_names() <= set(leaves)  # every corpus skill, from .curated and .system
    assert leaves["linear-tickets"]["skill_name"] == "Linear Tickets"
    assert leaves["gh-fix-ci-runs"]["skill_name"] == "GH-Fix-CI-Runs"
    assert [name for name in leaves if name.startswith("brainstorming")] == ["brainstorming", "brainstorming~system"]
    assert not any("writing-plans-copy" in leaf.get("path", "") for leaf in leaves.values())  # .git is never read

    routed = semif("route", "Brainstorm some ideas for a new feature with me", "-w", str(ws))
    assert routed.returncode == 0, routed.stderr
    assert routed.stderr == ""  # no warning line, no summary: nothing changed since the refresh

    checked = semif("skills", "validate", "-w", str(ws))
    assert checked.returncode == 0  # every skill loads: the two renamed copies only break the standard, and say how
    problems = [line.strip() for line in checked.stdout.splitlines() if line.startswith("      - ")]
    assert len(problems) == len(set(problems))  # each problem once
    for said in (
        "name 'Linear Tickets' loaded as 'linear-tickets'",
        "name 'GH-Fix-CI-Runs' loaded as 'gh-fix-ci-runs'",
        "loaded as 'brainstorming~system'",
    ):
        assert sum(said in line for line in problems) == 1, (said, problems)
    assert checked.stdout.count("spec  ") == 2 and checked.stdout.count("note  ") == 1  # the collision is no fault
    assert "FAIL" not in checked.stdout
    assert checked.stderr == (
        f"{len(corpus_names()) + 3} skills checked: {len(corpus_names()) + 3} load, 0 do not (FAIL); "
        "of those that load, 2 break the specification (spec) and 3 load under another name\n"
    )
    assert semif("skills", "validate", "--strict", "-w", str(ws)).returncode == 1
    rows = json.loads(semif("skills", "validate", "--json", "-w", str(ws)).stdout)
    assert len(rows) == len(corpus_names()) + 3
    assert sum("notes" in row for row in rows) == 3


def _leaves(node: dict) -> list[dict]:
    found = list(node.get("skills", []))
    for child in node.get("categories", []):
        found += _leaves(child)
    return found


def test_skill_names_the_skill_written_so_and_the_normalised_one_by_its_own_name(semif: Semif, tmp_path: Path) -> None:
    assert semif("init", "ws", cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    for folder, name, marker in (("a-deploy", "Deploy Prod", "FAST PATH"), ("deploy-prod", "deploy-prod", "CHECKED")):
        (ws / "skills" / folder).mkdir(parents=True)
        front = f"---\nname: {name}\ndescription: Deploy the build to production.\n---\n"
        (ws / "skills" / folder / "SKILL.md").write_text(f"{front}Follow the {marker}.\n", encoding="utf-8")
    exact = semif("run", "--skill", "deploy-prod", "ship it", "-w", str(ws))
    assert exact.returncode == 0, exact.stderr
    assert "CHECKED" in exact.stdout and "FAST PATH" not in exact.stdout
    written = semif("run", "--skill", "Deploy Prod", "ship it", "-w", str(ws))
    assert written.returncode == 0, written.stderr
    assert "FAST PATH" in written.stdout and "CHECKED" not in written.stdout


def test_a_skill_linked_into_a_skills_folder_is_said_not_loaded_and_its_folder_can_be_listed(
    semif: Semif, tmp_path: Path
) -> None:
    assert semif("init", "ws", cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    installed = tmp_path / "installed"
    shutil.copytree(CORPUS / "superpowers", installed / "superpowers")
    (ws / "skills").mkdir(exist_ok=True)
    (ws / "skills" / "brainstorming").symlink_to(installed / "superpowers" / "brainstorming")
    (ws / "skills" / "everything").symlink_to(installed)
    for said in (True, False):  # said when the tree changes, not again when it is read back
        listed = semif("skills", "list", "-w", str(ws))
        assert listed.returncode == 0, listed.stderr
        assert "writing-plans" not in listed.stdout  # no skill of the linked folders loads; each link says why
        lines = [line for line in listed.stdout.splitlines() if line.startswith(("brainstorming ", "everything "))]
        assert len(lines) == 2 and all("! a link out of the skills folder; not followed" in line for line in lines)
        assert ("SKILL.md skills: 2 folders skipped; see `semif skills validate`" in listed.stderr) == said
    checked = semif("skills", "validate", "-w", str(ws)).stdout
    assert checked.count("not followed (list a folder kept elsewhere in [skills] folders)") == 2
    settings = (ws / "semif.toml").read_text(encoding="utf-8")
    folders = f'[skills]\nfolders = ["{installed / "superpowers"}"]\n'
    (ws / "semif.toml").write_text(settings.replace("[skills]\n", folders, 1), encoding="utf-8")
    listed = semif("skills", "list", "-w", str(ws))
    assert "brainstorming" in listed.stdout and "writing-plans" in listed.stdout


def deploy_skill(folder: Path, marker: str, name: str = "deploy") -> None:
    """A skill named ``name`` whose instructions say ``marker``: which one ran shows in what `semif run` prints."""
    folder.mkdir(parents=True)
    front = f"---\nname: {name}\ndescription: Deploy the build to production.\n---\n"
    (folder / "SKILL.md").write_text(f"{front}Follow the {marker}.\n", encoding="utf-8")


def ran(semif: Semif, ws: Path, skill: str) -> str:
    result = semif("run", "--skill", skill, "ship it", "-w", str(ws))
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_a_skill_added_later_never_takes_the_name_a_skill_held(semif: Semif, tmp_path: Path) -> None:
    assert semif("init", "ws", cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    deploy_skill(ws / "skills" / "deploy", "PERSON'S RUNBOOK")
    assert "PERSON'S RUNBOOK" in ran(semif, ws, "deploy")
    deploy_skill(ws / "skills" / ".curated" / "deploy", "NEWCOMER'S SCRIPT")  # dropped in later, same name
    out = ran(semif, ws, "deploy")
    assert "PERSON'S RUNBOOK" in out and "NEWCOMER'S SCRIPT" not in out
    assert "NEWCOMER'S SCRIPT" in ran(semif, ws, "deploy~curated")  # the newcomer is reached by its own id
    checked = semif("skills", "validate", "-w", str(ws)).stdout
    assert f"shares the name 'deploy' with the skill in {ws / 'skills' / 'deploy'}; loaded as 'deploy~curated'" in (
        checked
    )

    # the skill that held the name keeps it even where a fresh workspace would give it to the newcomer: a nested
    # one against one added at the top, both named exactly so
    assert semif("init", "nested", cwd=tmp_path).returncode == 0
    nested = tmp_path / "nested"
    deploy_skill(nested / "skills" / "team" / "deploy", "TEAM RUNBOOK")
    assert "TEAM RUNBOOK" in ran(semif, nested, "deploy")
    deploy_skill(nested / "skills" / "deploy", "TOP NEWCOMER")
    out = ran(semif, nested, "deploy")
    assert "TEAM RUNBOOK" in out and "TOP NEWCOMER" not in out
    assert "TOP NEWCOMER" in ran(semif, nested, "deploy~skills")

    # an exact name always wins over a normalised one: `--skill deploy` runs the skill that says `name: deploy`,
    # and the one that says "Deploy" is reached by its name as written
    assert semif("init", "exact", cwd=tmp_path).returncode == 0
    exact = tmp_path / "exact"
    deploy_skill(exact / "skills" / "team" / "deploy", "WRITTEN DEPLOY", name="Deploy")
    assert "WRITTEN DEPLOY" in ran(semif, exact, "deploy")
    deploy_skill(exact / "skills" / "deploy", "EXACT DEPLOY")
    assert "EXACT DEPLOY" in ran(semif, exact, "deploy")
    assert "WRITTEN DEPLOY" in ran(semif, exact, "Deploy")


@pytest.mark.slow
def test_in_a_fresh_workspace_a_shared_name_goes_to_the_top_level_skill_not_hidden(
    semif: Semif, tmp_path: Path
) -> None:
    assert semif("init", "ws", cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    deploy_skill(ws / "skills" / "deploy", "PERSON'S RUNBOOK")
    deploy_skill(ws / "skills" / ".curated" / "deploy", "CURATED SCRIPT")  # sorts first by path
    deploy_skill(ws / "skills" / "aaa" / "deploy", "NESTED SCRIPT")  # so does this one
    out = ran(semif, ws, "deploy")
    assert "PERSON'S RUNBOOK" in out and "SCRIPT" not in out
    assert "CURATED SCRIPT" in ran(semif, ws, "deploy~curated")
    assert "NESTED SCRIPT" in ran(semif, ws, "deploy~aaa")
    listed = semif("skills", "list", "deploy", "-w", str(ws))
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["deploy", "deploy~aaa", "deploy~curated"]
    assert "2 collisions" in semif("tree", "-w", str(ws)).stderr  # what loading said, whenever the tree is shown


@pytest.mark.slow
def test_an_unknown_skill_name_gives_the_nearest_names_first(semif: Semif, tmp_path: Path) -> None:
    assert semif("init", "ws", "--empty", cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    for collection in ("openai-skills", "superpowers"):
        shutil.copytree(CORPUS / collection, ws / "skills" / collection)
    typo = semif("run", "--skill", "writing-plan", "Plan the migration", "-w", str(ws))
    assert typo.returncode == 1 and typo.stdout == ""
    said = typo.stderr.strip().splitlines()[-1]
    assert said.startswith("Error: no skill named 'writing-plan'; did you mean writing-plans, ")  # nearest first
    assert "brainstorming" not in said and "create-plan" in said  # not the first names alphabetically
    held = semif("run", "--skill", "NOTION", "Capture this", "-w", str(ws)).stderr.strip().splitlines()[-1]
    assert held.startswith("Error: no skill named 'NOTION'; did you mean notion-") and held.count("notion-") == 4
    far = semif("run", "--skill", "zzzz", "Anything", "-w", str(ws)).stderr.strip().splitlines()[-1]
    assert far == f"Error: no skill named 'zzzz'; no name among the {len(corpus_names())} skills is close " + (
        "(`semif skills list` lists them)"
    )
