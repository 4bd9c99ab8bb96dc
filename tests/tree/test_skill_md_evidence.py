"""What of a SKILL.md's body a skill is found by: its "when to use" items and its headings, bounded."""

from __future__ import annotations

import time
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


def test_headings_keep_their_text_without_the_closing_hashes() -> None:
    body = "# Merge *PDFs* ##\n##   Split pages   \n##### too deep\n#no space\n## When to use\n- Combine scans\n1) Fill a form\n"
    found = body_evidence(body)
    assert found.headings == ("Merge PDFs", "Split pages")
    assert found.uses == ("Combine scans", "Fill a form")


def test_a_hostile_body_costs_time_in_proportion_to_its_length() -> None:
    # each line once made the heading pattern backtrack cubically: 1,600 spaces took 27 s, one 80 KB body froze
    # every command that indexed the tree; a megabyte of each shape now reads in well under a second
    spaces = " " * 4_000
    shapes = [
        f"# x{spaces}y",
        f"# x{spaces[:990]}y",
        f"#{spaces}#{spaces}#",
        f"## When to use{spaces}",
        f"- {spaces}",
        f"1{'1' * 4_000}",
    ]
    for shape in shapes:
        body = "## When to use\n" + "\n".join([shape] * (1_000_000 // len(shape)))
        started = time.perf_counter()
        body_evidence(body)
        assert time.perf_counter() - started < 5.0, shape[:20]
