"""Lead-ins read from a code skill's body: bounded work on a hostile body, which then has none."""

from __future__ import annotations

import threading
from pathlib import Path

from semif_agent.tree.lead_ins import MAX_WORK, Work, body_lead_ins, source_lead_ins

STARTER_SKILLS = Path(__file__).parents[2] / "src" / "semif_agent" / "starter" / "template" / "data" / "skills"
# each group spells out 2**9 = 512 phrases, and each group after it multiplies them
_GROUP = "(" + "(?:ab|cd)" * 9 + ")"
_HOSTILE_PATTERN = "x y " + _GROUP * 23


def _hostile_body(patterns: int) -> str:
    listed = "".join(f"    r'{_HOSTILE_PATTERN}{i}',\n" for i in range(patterns))
    return f"LEAD_INS = [\n{listed}]\ndef predict(ctx, request):\n    return {{}}\n"


def test_a_hostile_body_is_read_in_bounded_work_and_has_no_lead_ins() -> None:
    for patterns in (1, 40):
        work = Work()
        assert source_lead_ins(_hostile_body(patterns), work) == ()
        assert work.built <= MAX_WORK + 1


def test_reading_a_hostile_body_takes_no_time_worth_noticing(tmp_path) -> None:
    body = tmp_path / "pile.py"
    body.write_text(_hostile_body(100), encoding="utf-8")
    read: list[tuple[str, ...]] = []
    reader = threading.Thread(target=lambda: read.append(body_lead_ins(body)), daemon=True)
    reader.start()
    reader.join(timeout=20)  # it took over ten minutes when every phrase was built before the cut
    assert read == [()]


def test_the_starter_bodies_keep_their_lead_ins() -> None:
    for name, phrase in (("todos/add.py", "remind me to"), ("notes/add.py", "note to self")):
        work = Work()
        found = source_lead_ins((STARTER_SKILLS / name).read_text(encoding="utf-8"), work)
        assert phrase in found and work.built < MAX_WORK / 4
