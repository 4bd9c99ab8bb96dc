"""The contract checker names every violation with its criterion and line."""

from __future__ import annotations

import textwrap

import pytest

from semif_agent.forge import check_source

from ..conftest import SEED_BODY

HEADER = "from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction\n"


def check(body: str, name: str = "notes.tag", category: str = "notes"):
    return check_source(HEADER + textwrap.dedent(body), name=name, category=category)


GOOD = """
def predict(ctx, request):
    decision = DecisionRequest(request.text, "Which tag?", [Option("work"), Option("none", "No tag.")])
    result = ctx.engine.call(decision)
    return Prediction(text=result.selected, decisions=[(decision, result)])

def act(ctx, request, prediction):
    if prediction.text == "none":
        return ActionResult(action_log="notes.tag: no tag fits", new_state=request.text)
    path = ctx.data_path("tags.txt")
    path.write_text(prediction.text)
    return ActionResult(action_log=f"notes.tag: tagged {prediction.text}", new_state="tagged")
"""


def test_the_seed_example_passes_as_is() -> None:
    report = check_source(SEED_BODY, name="email.compose", category="email")
    assert report.ok, report.render()


def test_a_good_body_passes() -> None:
    assert check(GOOD).ok


@pytest.mark.parametrize(("body", "criterion", "line", "fragment"), [
    ("def predict(ctx, request)\n    pass\n", 1, 2, "does not compile"),
    (GOOD.replace("def act(ctx, request, prediction):", "def perform(ctx, request, prediction):"), 1, 1, "does not define act"),
    (GOOD.replace("def predict(ctx, request):", "def predict(ctx):"), 1, 3, "predict must take (ctx, request)"),
    (GOOD.replace("def predict(ctx, request):", "async def predict(ctx, request):"), 1, 3, "not async"),
    ("import requests\n" + GOOD, 3, 2, "'requests', which is not in the standard library"),
    ("import subprocess\n" + GOOD, 3, 2, "may not load code"),
    (GOOD.replace("    path = ctx.data_path", "    __import__('os')\n    path = ctx.data_path"), 3, 11, "uses __import__"),
    (GOOD.replace("    path = ctx.data_path", "    eval('1+1')\n    path = ctx.data_path"), 3, 11, "uses eval"),
    (GOOD.replace("    path = ctx.data_path", "    import os; os.system('ls')\n    path = ctx.data_path"), 3, 11, "imports 'os'"),
    (GOOD.replace("    result = ctx.engine.call(decision)", "    from semif_agent.engine import DecisionResult\n    result = DecisionResult(selected='work')"), 4, 6, "builds a DecisionResult itself"),
    ("class FakeEngine:\n    pass\n" + GOOD, 4, 2, "defines FakeEngine"),
    (GOOD.replace('    return ActionResult(action_log=f"notes.tag: tagged {prediction.text}", new_state="tagged")', '    return "done"'), 4, 13, "act must return an ActionResult, not 'done'"),
    (GOOD.replace("    result = ctx.engine.call(decision)", "    result = type('R', (), {'selected': 'work'})"), 4, 1, "never asks ctx.engine.call"),
])
def test_each_violation_is_named_with_its_criterion_and_line(body, criterion, line, fragment) -> None:
    report = check(body)
    assert not report.ok
    matching = [v for v in report.violations if v.criterion == criterion and fragment in v.message]
    assert matching, report.render()
    assert matching[0].line == line, report.render()


def test_name_and_category_are_checked() -> None:
    report = check(GOOD, name="Notes.Tag!", category="")
    assert [v.criterion for v in report.violations] == [2, 2]
    assert "does not match" in report.violations[0].message and "no category" in report.violations[1].message


def test_all_violations_are_reported_not_just_the_first() -> None:
    body = "import numpy\nimport socket\n" + GOOD.replace("def act(ctx, request, prediction):", "def act(ctx):")
    report = check(body)
    assert {3, 1} <= report.criteria()
    assert len(report.violations) >= 3
