"""One tree per workspace: code skills and SKILL.md skills as leaves of one SkillTree, the built part stored."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest

from semif_agent.tree import SkillTree
from semif_agent.tree.workspace_tree import tree_file
from semif_agent.workspace import Workspace


def skill(
    root: Path, folder: str, description: str, *, name: str | None = None, extra: str = "", body: str = "Do it.\n"
) -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    front = f"name: {name or Path(folder).name}\ndescription: {description}\n{textwrap.dedent(extra)}"
    (path / "SKILL.md").write_text(f"---\n{front.strip()}\n---\n{body}", encoding="utf-8")
    return path


class CountingEmbed:
    """A deterministic bag-of-words embedding that counts the texts it is asked for."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts += list(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.strip(".,:;").encode()) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


@pytest.fixture
def workspace(make_workspace) -> Workspace:
    root = make_workspace({"email.compose": None, "notes.add": None})
    skill(root / "skills", "debug-tests", "Find why a test fails, step by step, before changing code.")
    skill(root / "skills" / "collection", "write-plan", "Write an implementation plan for a feature.")
    skill(root / ".agents" / "skills", "review-code", "Review a pull request and leave comments.")
    return Workspace.load(root)


def test_one_tree_holds_code_and_skill_md_skills(workspace: Workspace, tmp_path: Path) -> None:
    skill(tmp_path / "shared-skills", "file-taxes", "Prepare a tax return from receipts.")
    (workspace.root / "semif.toml").write_text(
        (workspace.root / "semif.toml").read_text() + f'\n[skills]\nfolders = ["{tmp_path / "shared-skills"}"]\n'
    )
    workspace = Workspace.load(workspace.root)
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert {"email.compose", "notes.add", "debug-tests", "write-plan", "review-code", "file-taxes"} == set(tree.skills)
    leaf = tree.skills["write-plan"]
    assert leaf.is_skill_md and leaf.source == workspace.root / "skills" / "collection" / "write-plan" / "SKILL.md"
    assert tree.categories[leaf.category].built and not tree.categories["email"].built
    assert tree.path_to("write-plan")[-1] == leaf.category
    for name in ("debug-tests", "file-taxes"):  # every leaf is reachable from the top of the one tree
        assert name in {s.name for c in tree.subcategories("") for s in tree.leaves_under(c.name)}
    stored = json.loads(tree_file(workspace).read_text())
    assert {e["name"] for e in stored["skills"]} == {"debug-tests", "write-plan", "review-code", "file-taxes"}
    assert all(e["kind"] == "skill_md" for e in stored["skills"])


def test_names_that_collide_are_both_kept_with_a_warning(workspace: Workspace) -> None:
    skill(workspace.root / ".agents" / "skills", "debug-tests", "Another debugging skill, elsewhere.")
    skill(workspace.root / "skills", "email", "A skill named like a code category.")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.skills["debug-tests"].source.parent == workspace.root / "skills" / "debug-tests"
    other = tree.skills["debug-tests~agents-skills"]
    assert other.source_name == "debug-tests" and other.source.parent.parent == workspace.root / ".agents" / "skills"
    assert tree.skills["email~skills"].source_name == "email"
    collisions = tree.skill_md_report.collisions
    assert len(collisions) == 2 and tree.problems == []  # reported in the SKILL.md report, once each
    debug = next(str(c) for c in collisions if c.name == "debug-tests")
    assert str(workspace.root / "skills" / "debug-tests") in debug
    assert str(workspace.root / ".agents" / "skills" / "debug-tests") in debug
    assert tree.skill_md_report.changed and tree.skill_md_report.summary().startswith("SKILL.md skills: 2 collisions")
    again = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert again.skill_md_report == tree.skill_md_report and not again.skill_md_report.changed  # said once


def test_names_that_break_the_standard_load_normalised(workspace: Workspace) -> None:
    skill(workspace.root / "skills", "PDF Tools", "Fill in PDF forms.")
    skill(workspace.root / "skills", "Data_Cleaner", "Clean a CSV file.")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.skills["pdf-tools"].source_name == "PDF Tools" and tree.get("PDF Tools").name == "pdf-tools"
    assert tree.skills["data-cleaner"].source_name == "Data_Cleaner"
    renamed = {item.name: item.leaf_id for item in tree.skill_md_report.renamed}
    assert renamed == {"PDF Tools": "pdf-tools", "Data_Cleaner": "data-cleaner"}
    assert json.loads(tree_file(workspace).read_text())["report"]["renamed"][0]["id"] in renamed.values()


def test_nothing_changed_means_nothing_embedded_or_written(workspace: Workspace) -> None:
    SkillTree.for_workspace(workspace, embed=CountingEmbed())
    stored = tree_file(workspace)
    before = (stored.read_text(), stored.stat().st_mtime_ns)
    embed = CountingEmbed()
    again = SkillTree.for_workspace(workspace, embed=embed)
    assert embed.texts == []
    assert (stored.read_text(), stored.stat().st_mtime_ns) == before
    assert "debug-tests" in again.skills


def test_an_edited_description_is_seen_and_the_tree_updated(workspace: Workspace) -> None:
    SkillTree.for_workspace(workspace, embed=CountingEmbed())
    skill(workspace.root / "skills", "debug-tests", "Bisect flaky integration tests across commits.")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.skills["debug-tests"].description == "Bisect flaky integration tests across commits."
    stored = {e["name"]: e for e in json.loads(tree_file(workspace).read_text())["skills"]}
    assert stored["debug-tests"]["description"] == "Bisect flaky integration tests across commits."


def test_removed_skills_leave_the_tree(workspace: Workspace) -> None:
    SkillTree.for_workspace(workspace, embed=CountingEmbed())
    for folder in (workspace.root / "skills").rglob("SKILL.md"):
        folder.unlink()
    (workspace.root / ".agents" / "skills" / "review-code" / "SKILL.md").unlink()
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert set(tree.skills) == {"email.compose", "notes.add"}
    assert not any(c.built for c in tree.categories.values())
    assert json.loads(tree_file(workspace).read_text())["skills"] == []


def test_a_skill_naming_a_code_category_hangs_there(workspace: Workspace) -> None:
    skill(
        workspace.root / "skills",
        "email-tone",
        "Make an email sound friendlier.",
        extra="metadata:\n  category: email\n",
    )
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.skills["email-tone"].category == "email"
    assert {s.name for s in tree.children("email")} == {"email.compose", "email-tone"}


def test_a_broken_skill_is_reported_and_the_rest_load(workspace: Workspace) -> None:
    broken = workspace.root / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\ndescription: [unclosed\n---\n", encoding="utf-8")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert "broken" not in tree.skills and "debug-tests" in tree.skills
    assert [str(s.folder) for s in tree.skill_md_report.skipped] == [str(broken)]
    assert "invalid YAML" in tree.skill_md_report.skipped[0].reason


def test_a_damaged_store_is_rebuilt(workspace: Workspace) -> None:
    tree_file(workspace).parent.mkdir(parents=True, exist_ok=True)
    tree_file(workspace).write_text('{"version": 1, "categories": [', encoding="utf-8")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert {"debug-tests", "write-plan", "review-code"} <= set(tree.skills)
    assert json.loads(tree_file(workspace).read_text())["version"] == 1


def test_a_store_that_cannot_be_written_keeps_the_tree_in_memory(workspace: Workspace) -> None:
    tree_file(workspace).mkdir(parents=True)  # a folder where the file should be: unwritable even for root
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert "debug-tests" in tree.skills
    assert any("could not be stored" in str(p) for p in tree.problems)


def test_user_skills_can_be_turned_off(workspace: Workspace) -> None:
    skill(Path(os.environ["HOME"]) / ".agents" / "skills", "mine", "A skill of the user's own.")
    assert "mine" in SkillTree.for_workspace(workspace, embed=CountingEmbed()).skills
    (workspace.root / "semif.toml").write_text(
        (workspace.root / "semif.toml").read_text() + "\n[skills]\nuser_skills = false\n"
    )
    assert "mine" not in SkillTree.for_workspace(Workspace.load(workspace.root), embed=CountingEmbed()).skills


def test_a_bad_folders_setting_is_one_clear_error(workspace: Workspace) -> None:
    from semif_agent.errors import WorkspaceError

    (workspace.root / "semif.toml").write_text(
        (workspace.root / "semif.toml").read_text() + '\n[skills]\nfolders = "x"\n'
    )
    with pytest.raises(WorkspaceError, match=r"\[skills\] folders must be a list of paths"):
        SkillTree.for_workspace(Workspace.load(workspace.root), embed=CountingEmbed())


def test_a_new_skill_is_placed_without_touching_the_other_categories(make_workspace) -> None:
    root = make_workspace({"email.compose": None})
    topics = [
        "invoice tax receipt",
        "python test debug",
        "garden plant water",
        "guitar chord song",
        "flight hotel trip",
    ]
    for topic in topics:
        for i in range(12):
            skill(root / "skills", f"{topic.split()[0]}-{i}", f"Help with {topic} number {i}, for {topic} work.")
    ws = Workspace.load(root)
    embed = CountingEmbed()
    before = SkillTree.for_workspace(ws, embed=embed)
    members = {c.name: {s.name for s in before.leaves_under(c.name)} for c in before.categories.values() if c.built}
    skill(root / "skills", "guitar-new", "Help with guitar chord song tuning.")
    after = SkillTree.for_workspace(ws, embed=embed)
    home = after.skills["guitar-new"].category
    path = after.path_to("guitar-new")
    placed = [{s.name for s in after.leaves_under(n)} - {"guitar-new"} for n in path]
    changed = [
        name
        for name, leaves in members.items()
        if name not in after.categories or {s.name for s in after.leaves_under(name)} != leaves
    ]
    renamed = [name for name in changed if members[name] in placed]  # the new skill's own category, named again
    assert set(changed) - set(renamed) <= {home, *path}
    untouched = [name for name in members if name not in changed]
    assert untouched and all(after.categories[n].description == before.categories[n].description for n in untouched)


def test_skill_md_examples_come_from_the_frontmatter_and_an_examples_section(workspace: Workspace) -> None:
    skill(
        workspace.root / "skills",
        "plan-trip",
        "Plan a trip.",
        extra='examples: ["plan a weekend in Rome"]\n',
        body='# Plan\n\nDo it.\n\n## Examples\n\n- book me three days in Lisbon\n* "find a cheap trip to Porto"\n\n## Notes\n- not an example\n',
    )
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.skills["plan-trip"].examples == (
        "plan a weekend in Rome",
        "book me three days in Lisbon",
        "find a cheap trip to Porto",
    )
    again = SkillTree.for_workspace(workspace, embed=CountingEmbed())  # read back from the store, not parsed again
    assert again.skills["plan-trip"].examples == tree.skills["plan-trip"].examples


def alias_bomb(levels: int) -> str:
    """A few hundred bytes of YAML whose aliases expand ninefold per level ("billion laughs")."""
    lines = [f"a0: &a0 [{','.join(['xxxxxxxx'] * 9)}]"]
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{','.join([f'*a{level - 1}'] * 9)}]")
    lines.append(f"metadata: {{payload: *a{levels}}}")
    return "\n".join(lines)


@pytest.mark.parametrize("levels", [6, 7])
def test_an_alias_bomb_is_refused_by_name_and_the_stored_tree_stays_small(workspace: Workspace, levels: int) -> None:
    bomb = skill(workspace.root / "skills", "deploy-bomb", "Deploys things.", extra=alias_bomb(levels))
    assert (bomb / "SKILL.md").stat().st_size < 700
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert "deploy-bomb" not in tree.skills and {"debug-tests", "write-plan", "review-code"} <= set(tree.skills)
    skipped = [line for line in tree.skill_md_report.lines() if "deploy-bomb" in line]
    assert len(skipped) == 1 and "YAML aliases" in skipped[0] and "refused" in skipped[0]
    assert tree_file(workspace).stat().st_size < 20_000


def test_what_one_skill_brings_into_the_stored_tree_is_bounded(workspace: Workspace) -> None:
    skill(workspace.root / "skills", "wordy", "x " * 5000)  # no aliases: just a description 10,000 long
    examples = "".join(f"- Example request number {i}\n" for i in range(200))
    examples += f"- {'y' * 2000}\n"
    skill(workspace.root / "skills", "listy", "Lists many examples.", body=f"## Examples\n{examples}")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert "wordy" not in tree.skills
    assert any("wordy: skipped: 'description' is" in line for line in tree.skill_md_report.lines())
    kept = tree.skills["listy"].examples
    assert len(kept) == 32 and all(len(text) <= 500 for text in kept)
    assert tree_file(workspace).stat().st_size < 30_000


@pytest.mark.parametrize("display_folder", ["a-deploy", "z-deploy"])  # the normalised name sorts first, then last
def test_an_exact_name_wins_and_both_skills_sharing_a_normalised_name_are_reached(
    workspace: Workspace, display_folder: str
) -> None:
    from semif_agent.chooser import Router

    skills = workspace.root / "skills"
    display = skill(skills, display_folder, "Deploy the build to production, fast.", name="Deploy Prod")
    exact = skill(skills, "deploy-prod", "Deploy the build to production, with checks.")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.get("deploy-prod").source == exact / "SKILL.md"
    assert tree.get("Deploy Prod").source == display / "SKILL.md"
    assert tree.get("Deploy Prod").name != "deploy-prod"
    router = Router(workspace)
    assert router.skill("deploy-prod").source == exact / "SKILL.md"
    assert router.skill("Deploy Prod").source == display / "SKILL.md"


@pytest.mark.parametrize("stored_before", ["held", "leaves only"])  # a store written before `held` was kept
def test_the_skill_that_held_an_id_keeps_it_when_another_takes_its_name(
    workspace: Workspace, stored_before: str
) -> None:
    skills = workspace.root / "skills"
    mine = skill(skills / "team", "deploy", "Deploy the build to production, with checks.")
    assert SkillTree.for_workspace(workspace, embed=CountingEmbed()).get("deploy").source == mine / "SKILL.md"
    if stored_before == "leaves only":
        stored = json.loads(tree_file(workspace).read_text())
        stored.pop("held", None)
        tree_file(workspace).write_text(json.dumps(stored))
    later = skill(skills / ".curated", "deploy", "Deploy whatever is there, now.")
    top = skill(skills, "deploy", "Deploy, from the top.", name="Deploy")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.get("deploy").source == mine / "SKILL.md"
    assert tree.get("deploy~curated").source == later / "SKILL.md"
    assert tree.get("deploy~skills").source == top / "SKILL.md"
    kept = {item.folder: item.kept_by for item in tree.skill_md_report.collisions}
    assert kept == {str(later): f"the skill in {mine}", str(top): f"the skill in {mine}"}
    again = SkillTree.for_workspace(workspace, embed=CountingEmbed())  # the ids hold from one load to the next
    assert {name: leaf.source for name, leaf in again.skills.items()} == {n: s.source for n, s in tree.skills.items()}
    assert not again.skill_md_report.changed


def test_a_skill_md_skill_hung_on_a_code_category_keeps_its_id_too(workspace: Workspace) -> None:
    mine = skill(workspace.root / "skills" / "team", "mailer", "Send mail.", extra="metadata:\n  category: email\n")
    assert SkillTree.for_workspace(workspace, embed=CountingEmbed()).get("mailer").source == mine / "SKILL.md"
    skill(workspace.root / "skills", "mailer", "Send mail, from the top.")
    assert SkillTree.for_workspace(workspace, embed=CountingEmbed()).get("mailer").source == mine / "SKILL.md"


def test_an_id_stays_with_a_skill_broken_for_a_while_and_goes_when_it_is_removed(workspace: Workspace) -> None:
    mine = skill(workspace.root / "skills" / "team", "deploy", "Deploy the build to production, with checks.")
    assert SkillTree.for_workspace(workspace, embed=CountingEmbed()).get("deploy").source == mine / "SKILL.md"
    text = (mine / "SKILL.md").read_text()
    (mine / "SKILL.md").write_text("---\nname: [deploy\n---\n")  # broken while it is edited
    later = skill(workspace.root / "skills", "deploy", "Deploy whatever is there, now.")
    broken = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert "deploy" not in broken.skills and broken.get("deploy~skills").source == later / "SKILL.md"
    assert "deploy" not in SkillTree.for_workspace(workspace, embed=CountingEmbed()).skills  # kept, load after load
    (mine / "SKILL.md").write_text(text)
    assert SkillTree.for_workspace(workspace, embed=CountingEmbed()).get("deploy").source == mine / "SKILL.md"
    shutil.rmtree(mine)
    assert SkillTree.for_workspace(workspace, embed=CountingEmbed()).get("deploy").source == later / "SKILL.md"


def test_a_stored_skill_of_the_wrong_shape_is_read_again_from_its_skill_md(workspace: Workspace) -> None:
    SkillTree.for_workspace(workspace, embed=CountingEmbed())
    stored = json.loads(tree_file(workspace).read_text())
    [entry] = [e for e in stored["skills"] if e["name"] == "debug-tests"]
    entry["seen"] |= {"metadata": ["category"], "script": 5}
    entry["description"] = "Something the file never said."
    tree_file(workspace).write_text(json.dumps(stored), encoding="utf-8")
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    assert tree.skills["debug-tests"].description == "Find why a test fails, step by step, before changing code."
    [kept] = [e for e in json.loads(tree_file(workspace).read_text())["skills"] if e["name"] == "debug-tests"]
    assert kept["seen"]["metadata"] == {} and kept["seen"]["script"] is None
