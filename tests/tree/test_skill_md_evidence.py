"""What of a SKILL.md's body a skill is found by: its "when to use" items and its headings, bounded."""

from __future__ import annotations

from pathlib import Path

from semif_agent.tree.skill_md_evidence import MAX_USES, body_evidence, skill_md_evidence

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus" / "superpowers"
PM = Path(__file__).resolve().parents[1] / "fixtures" / "skills-pm"


def test_the_items_under_when_to_use_are_what_the_skill_is_for() -> None:
    found = skill_md_evidence(CORPUS / "systematic-debugging" / "SKILL.md")
    assert {"Test failures", "Bugs in production", "Performance problems", "Build failures"} <= set(found.uses)
    assert "When to Use" not in found.headings and found.headings  # its other headings are words to find it by


def test_trigger_phrases_count_and_code_blocks_and_generic_headings_do_not() -> None:
    found = skill_md_evidence(PM / "pm-calculators" / "refinance-breakeven" / "SKILL.md")
    assert {"Should I refinance?", "Does a refi break even?"} <= set(found.uses)  # quoted phrases, unquoted
    drawn = skill_md_evidence(CORPUS / "dispatching-parallel-agents" / "SKILL.md")
    assert not any("shape=diamond" in text for text in drawn.uses + drawn.headings)  # a diagram's source is no use
    body = "## Overview\ntext\n## When to use\n" + "".join(f"- case {n}\n" for n in range(50)) + "## Setup\n"
    bounded = body_evidence(body)
    assert len(bounded.uses) == MAX_USES and bounded.headings == ("Setup",)


def test_an_unreadable_skill_md_brings_nothing(tmp_path: Path) -> None:
    assert skill_md_evidence(tmp_path / "missing" / "SKILL.md").uses == ()
