"""``semif skills list``: QUERY filtering, --folder, --limit, one line per skill within the terminal's width."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main

from ..conftest import SEED_BODY

TOPICS = ("PDF", "Invoice", "calendar", "email", "spreadsheet", "archive", "report")


def invoke(*args: str, columns: int | None = None) -> tuple[int, str, str]:
    env = {"COLUMNS": str(columns)} if columns else {"COLUMNS": None}
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def write_skill(root: Path, folder: str, frontmatter: str) -> Path:
    skill = root / folder
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n# Instructions\n", encoding="utf-8")
    return skill


def generated_description(index: int) -> str:
    """Skill ``index`` speaks of every topic ``index`` is a multiple of the topic's position + 2 in."""
    topics = [topic for position, topic in enumerate(TOPICS) if index % (position + 2) == 0]
    return f"Handle {' and '.join(topics) or 'nothing special'} for number {index}."


@pytest.fixture(autouse=True)
def no_user_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def big_workspace(make_workspace) -> Path:
    """A workspace with two code skills and 300 generated SKILL.md skills, some nested in collections."""
    root = make_workspace({"email.compose": SEED_BODY, "email.archive": None})
    for index in range(300):
        collection = f"team-{index % 3}/" if index % 2 else ""
        write_skill(
            root / "skills",
            f"{collection}skill-{index:03d}",
            f"name: skill-{index:03d}\ndescription: {generated_description(index)}",
        )
    return root


def test_query_keeps_skills_holding_every_word_and_limit_says_how_many_more(big_workspace):
    expected = sorted(f"skill-{i:03d}" for i in range(300) if i % 2 == 0 and i % 3 == 0)  # PDF and Invoice
    code, out, err = invoke("skills", "list", "pdf", "INVOICE", "-w", str(big_workspace), "--json")
    assert code == 0, err
    assert sorted(row["name"] for row in json.loads(out)) == expected

    code, out, err = invoke("skills", "list", "pdf invoice", "--limit", "5", "-w", str(big_workspace))
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 6
    assert all(line.split()[0] in expected and line.split()[1] == "SKILL.md" for line in lines[:5])
    assert lines[5] == f"… and {len(expected) - 5} more (use --limit or a QUERY)"
    assert err == f"{len(expected)} of 302 skills match 'pdf invoice' (0 code, {len(expected)} SKILL.md)\n"


def test_query_matches_names_and_code_skills_too(big_workspace):
    code, out, _ = invoke("skills", "list", "skill-04", "-w", str(big_workspace), "--json")
    assert code == 0 and sorted(row["name"] for row in json.loads(out)) == [f"skill-{i:03d}" for i in range(40, 50)]
    code, out, err = invoke("skills", "list", "archive", "-w", str(big_workspace), "--json")
    names = [row["name"] for row in json.loads(out)]
    assert names[0] == "email.archive" and json.loads(out)[0]["kind"] == "code"
    assert sorted(names[1:]) == sorted(f"skill-{i:03d}" for i in range(300) if i % 7 == 0)
    code, out, err = invoke("skills", "list", "pdf", "nothing-like-this", "-w", str(big_workspace))
    assert code == 0 and out == "" and err.startswith("0 of 302 skills match")


def test_json_rows_are_whole_after_filter_and_limit(big_workspace):
    code, out, _ = invoke("skills", "list", "calendar", "--limit", "3", "-w", str(big_workspace), "--json", columns=40)
    rows = json.loads(out)
    assert code == 0 and len(rows) == 3
    for row in rows:
        assert row["description"] == generated_description(int(row["name"].split("-")[1]))
        assert set(row) == {"kind", "id", "name", "description", "category", "path", "warnings"}


def test_every_skill_is_one_line_cut_to_the_terminal_width(tmp_path):
    root = tmp_path / "skills"
    long_text = " ".join(f"word{n}" for n in range(80))
    write_skill(root, "wordy", f"name: wordy\ndescription: >\n  {long_text[:200]}\n\n  {long_text[200:]}")
    write_skill(root, "misnamed", "name: Not The Folder Name\ndescription: Loads, with warnings about its name.")
    write_skill(root, "broken", "name: broken")
    write_skill(root, "short", "name: short\ndescription: |\n  Two\n  lines.")
    code, out, err = invoke("skills", "list", "--folder", str(root), columns=60)
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line) <= 60 for line in lines), lines
    by_label = {line.split("  ")[0].strip(): line for line in lines if not line.startswith(" ")}
    assert set(by_label) == {"wordy", "Not The Folder Name", "broken", "short"}
    assert by_label["wordy"].endswith("…") and "word0 word1" in by_label["wordy"]
    assert by_label["short"].endswith("SKILL.md  Two lines.")
    assert "SKILL.md  ! skipped: missing" in by_label["broken"]
    warning_lines = [line for line in lines if line.startswith(" ")]
    assert len(warning_lines) == 1 and warning_lines[0].lstrip().startswith("! ")
    assert lines.index(warning_lines[0]) == lines.index(by_label["Not The Folder Name"]) + 1
    assert err == "3 skills (0 code, 3 SKILL.md), 1 not loaded (skipped or shadowed)\n"
    code, wide, _ = invoke("skills", "list", "--folder", str(root), columns=200)
    assert max(map(len, wide.splitlines())) > 60 and len(wide.splitlines()) == len(lines)


def test_a_positional_folder_is_still_a_folder(tmp_path):
    first = tmp_path / "first"
    second = tmp_path / "second"
    write_skill(first, "alpha", "name: alpha\ndescription: Alpha handles PDF files.")
    write_skill(second / "nested", "beta", "name: beta\ndescription: Beta handles email.")
    code, out, _ = invoke("skills", "list", str(first), str(second), "--json")
    by_option = invoke("skills", "list", "--folder", str(first), "--folder", str(second), "--json")[1]
    assert code == 0 and out == by_option
    assert [row["name"] for row in json.loads(out)] == ["alpha", "beta"]
    code, out, err = invoke("skills", "list", str(first), "email", "--folder", str(second))
    assert code == 0 and out.split()[0] == "beta" and len(out.splitlines()) == 1
    assert err == "1 of 2 skills match 'email' (0 code, 1 SKILL.md)\n"


def test_a_name_that_repeats_is_shown_as_its_id(make_workspace):
    root = make_workspace({"email.compose": SEED_BODY})
    write_skill(
        root / "skills", "compose", "name: email.compose\ndescription: A SKILL.md skill named like a code skill."
    )
    write_skill(root / "skills", "gamma", "name: gamma\ndescription: Gamma.")
    code, out, _ = invoke("skills", "list", "-w", str(root))
    rows = json.loads(invoke("skills", "list", "-w", str(root), "--json")[1])
    skill_md_id = next(row["id"] for row in rows if row["kind"] == "skill.md" and row["name"] == "email.compose")
    labels = [line.split()[0] for line in out.splitlines() if not line.startswith(" ")]
    assert code == 0 and labels == ["email.compose", skill_md_id, "gamma"]
    code, out, _ = invoke("skills", "list", "named like", "-w", str(root))
    assert code == 0 and out.split()[0] == skill_md_id
    write_skill(root / ".agents" / "skills", "gamma", "name: gamma\ndescription: Shadowed by the workspace's gamma.")
    code, out, err = invoke("skills", "list", "gamma", "-w", str(root))  # both kept: the second under a distinct id
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["gamma", "gamma~agents-skills"]
    assert err.splitlines()[-1].startswith("2 of 4 skills match") and "1 collision; see" in err  # said once
    assert "collision" not in invoke("skills", "list", "gamma", "-w", str(root))[2]


def test_counts_code_and_skill_md_skills_on_stderr(big_workspace):
    code, out, err = invoke("skills", "list", "-w", str(big_workspace))
    assert code == 0 and len(out.splitlines()) == 302
    # placing 300 new skills says what it waits for, a line a stage (stderr is not a terminal here), then the count
    *waits, count = err.splitlines()
    assert count == "302 skills (2 code, 300 SKILL.md)" and waits == [
        "semif: embedding (300)...",
        "semif: grouping (300)...",
    ]
    assert invoke("skills", "list", "-w", str(big_workspace))[2] == "302 skills (2 code, 300 SKILL.md)\n"  # placed now
    stub = next(line for line in out.splitlines() if line.startswith("email.archive"))
    assert stub.split()[1] == "code" and "(stub)" in stub


def test_limit_must_be_positive(big_workspace):
    code, _, err = invoke("skills", "list", "--limit", "0", "-w", str(big_workspace))
    assert code == 2 and "--limit" in err
