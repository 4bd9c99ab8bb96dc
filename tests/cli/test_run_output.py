"""How `semif run` reads: probabilities as labelled percentages, each result once, plural forms right; --dry-run acts on nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ..conftest import SEED_BODY

LISTING_BODY = """
from semif_agent.skills import ActionResult, Prediction


def predict(ctx, request):
    return Prediction(text="all of them")


def act(ctx, request, prediction):
    items = "- buy milk\\n- call Bob"
    return ActionResult(action_log=f"notes.list: listed 2 notes from {ctx.config['data']}:\\n{items}",
                        new_state=f"2 notes:\\n{items}")
"""


def script(tmp_path: Path, name: str, answers: list[str]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(answers))
    return f"scripted:{path}"


def test_route_lines_show_labelled_percentages_of_the_logged_probabilities(semif, tmp_path: Path) -> None:
    assert semif("init", "ws").returncode == 0
    done = semif("run", "Add buy milk to my todo list", "-w", "ws", "--engine", "lexical")
    assert done.returncode == 0, done.stderr
    route = done.stdout.split("\nskill ")[0].splitlines()[1:]
    rows = [json.loads(line) for line in (tmp_path / "ws" / "data" / "decisions.jsonl").read_text().splitlines()]
    decisions = [row for row in rows if row["kind"] != "outcome"]
    assert len(route) == len(decisions) >= 3
    assert sum(bool(row["probabilities"]) for row in decisions) >= 2
    for line, row in zip(route, decisions):
        if not row["probabilities"]:  # an engine that gave none: the choice alone
            assert line.endswith(f" -> {row['selected']}"), line
            continue
        shown = re.search(r" -> (\S+) \(p (<1|>99|\d{1,3})%\)$", line)
        assert shown, line
        p = row["probabilities"][row["selected"]]
        assert shown.group(1) == row["selected"]
        assert shown.group(2) == (">99" if 0.995 <= p < 1 else "<1" if 0 < p < 0.005 else str(round(p * 100)))
    assert not re.search(r"\(\d+\.\d+\)", done.stdout)  # no raw score, which may pass 1


def test_a_multi_line_result_is_printed_once(semif, make_workspace) -> None:
    root = make_workspace({"notes.list": LISTING_BODY})
    done = semif("run", "list my notes", "-w", str(root), "--skill", "notes.list", "--engine", "lexical")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("- buy milk") == 1 and done.stdout.count("- call Bob") == 1
    assert re.search(r"^action +notes\.list: listed 2 notes from .*:$", done.stdout, re.M)
    assert re.search(r"^result +2 notes:\n +- buy milk\n +- call Bob$", done.stdout, re.M)


def test_counts_take_the_right_plural(semif, make_workspace, tmp_path: Path) -> None:
    root = make_workspace({"email.compose": SEED_BODY})
    handed_back = semif("run", "weather?", "-w", str(root), "--engine", script(tmp_path, "none", ["none"]))
    assert handed_back.returncode == 0, handed_back.stderr
    assert "log         1 decision row + 1 outcome row" in handed_back.stdout
    assert re.search(r"^result +\(the request, handed back unchanged\)$", handed_back.stdout, re.M)
    emailed = semif(
        "run",
        "Email Alice",
        "-w",
        str(root),
        "--engine",
        script(tmp_path, "all", ["email", "email.compose", "Alice", "success"]),
    )
    assert "log         4 decision rows + 1 outcome row" in emailed.stdout


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_dry_run_and_route_show_the_candidates_and_act_on_nothing(semif, tmp_path: Path) -> None:
    assert semif("init", "ws").returncode == 0
    assert semif("tree", "-w", "ws").returncode == 0  # the stored tree brought up to date, as any command does
    before = _files(tmp_path / "ws")
    text = "Add buy milk to my todo list"
    dry = semif("run", text, "-w", "ws", "--engine", "lexical", "--dry-run")
    routed = semif("route", text, "-w", "ws", "--engine", "lexical")
    assert dry.returncode == routed.returncode == 0, dry.stderr + routed.stderr
    assert dry.stdout == routed.stdout
    assert "dry run: nothing was run, written or logged" in dry.stdout
    assert re.search(r"^ +todos\.add +(\d+|>99)%  <- chosen$", dry.stdout, re.M)
    assert dry.stdout.rstrip().splitlines()[-1].startswith("would run  todos.add (")
    data = json.loads(semif("route", text, "-w", "ws", "--engine", "lexical", "--json").stdout)
    assert data["skill"] == "todos.add" and data["request"] == text
    for decision in data["decisions"]:
        chances = [option["probability"] for option in decision["options"]]
        assert chances == sorted(chances, reverse=True) and abs(sum(chances) - 1) < 1e-6
        assert decision["options"][0]["id"] == decision["selected"]
    assert [d["selected"] for d in data["decisions"]][-1] == "todos.add"
    assert _files(tmp_path / "ws") == before  # no skill ran, no file was written, nothing was logged

    mixed = semif("run", text, "-w", "ws", "--dry-run", "--skill", "todos.add")
    assert mixed.returncode == 1 and "--dry-run only routes" in mixed.stderr
