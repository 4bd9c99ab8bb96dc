"""find's best is what a run of the request would do: the skill it goes to, whether it acts, and why."""

from __future__ import annotations

import pytest

from semif_agent import Router
from semif_agent.engine import local_available
from semif_agent.starter import create_workspace

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

XLSX = """---
name: xlsx
description: "Spreadsheet creation, editing, and analysis with support for formulas, formatting, data analysis, and
  visualization. When working with spreadsheets (.xlsx, .xlsm, .csv, .tsv) for creating new spreadsheets with
  formulas, reading or analyzing data, pivot tables and charts, or recalculating formulas"
---
# XLSX
Use openpyxl for formulas and formatting, pandas for analysis.
"""


@pytest.fixture(scope="module")
def router(tmp_path_factory) -> Router:
    root = create_workspace(tmp_path_factory.mktemp("best") / "ws")
    (root / "skills" / "xlsx").mkdir(parents=True)
    (root / "skills" / "xlsx" / "SKILL.md").write_text(XLSX, encoding="utf-8")
    return Router(root, client="tester")


def test_best_is_none_for_a_request_a_run_hands_back_as_out_of_scope(router: Router) -> None:
    text = "What will the weather be in Paris tomorrow?"
    found = router.find(text).to_dict()
    ran = router.runner.decide(text)
    assert found["best"] == "none" and found["handed_back"] and ran.skill is None
    assert found["reason"] == ran.reason and "no skill does" in found["reason"]


def test_best_is_the_skill_ranked_first_that_a_run_would_go_to(router: Router) -> None:
    found = router.find("Make a pivot table from sales.xlsx").to_dict()
    assert found["skills"][0]["name"] == "xlsx"
    assert found["best"] == "xlsx" and not found["handed_back"]


def test_best_says_why_a_skill_it_names_would_be_handed_back(router: Router) -> None:
    found = router.find("Drop the meeting with Carla from my calendar").to_dict()
    assert found["best"] == "calendar.add_event" and found["handed_back"]
    assert found["reason"] == "calendar.add_event does not 'drop'"


def test_a_run_a_client_asks_for_says_whether_it_was_handed_back(router: Router) -> None:
    held = router.run("email.compose", "Don't email Alice about the budget").to_dict()
    assert held["handed_back"] and held["reason"].startswith("the request says not to act")
    done = router.run("notes.add", "Jot down that the garage code is 4512").to_dict()
    assert not done["handed_back"] and done["outcome"] != "handed_back"
