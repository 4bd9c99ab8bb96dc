"""todos.add, todos.list and todos.complete over todos.json in the folder config["todos"]."""

from __future__ import annotations

import contextlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from semif_agent.engine import ScriptedEngine
from semif_agent.errors import WriteRefused
from semif_agent.loop import SkillRunner


def todos(ws):
    return json.loads((ws.data_dir / "todos" / "todos.json").read_text())


def test_add_appends_to_the_json_list(ws, run):
    done = run("todos.add", "Add buy printer paper to my to-do list", ["none"])
    assert done.engine.calls[0].option_ids == ["high", "low", "none"]
    run("todos.add", "remind me to pay the rent, it's urgent", ["high"])
    items = todos(ws)
    assert [(t["id"], t["text"], t["priority"], t["done"]) for t in items] == [
        (1, "buy printer paper", "normal", False),
        (2, "pay the rent, it's urgent", "high", False),
    ]
    assert items[0]["created"] and items[0]["completed"] is None
    assert "added to-do #1 'buy printer paper' (normal priority)" in done.result.action_log
    assert [p.name for p in (ws.data_dir / "todos").iterdir()] == ["todos.json"]  # no temporary file left


def test_add_without_a_task_hands_the_request_back(ws, run):
    done = run("todos.add", "add to my to-do list")
    assert done.engine.calls == [] and done.result.new_state == "add to my to-do list"
    assert not (ws.data_dir / "todos" / "todos.json").exists()


@pytest.fixture
def listed(ws, run):
    run("todos.add", "todo: water the plants", ["low"])
    run("todos.add", "new task: send the slides to the client", ["high"])
    run("todos.add", "I need to renew my passport", ["none"])
    return ws


def test_list_open_done_and_all(listed, run):
    done = run("todos.list", "what's left on my to-do list?")
    assert done.engine.calls == [], "which to-dos to show is read from the request"
    assert done.result.new_state.splitlines() == [
        "3 open to-do(s):",
        "- [ ] #2 send the slides to the client (high priority)",
        "- [ ] #3 renew my passport",
        "- [ ] #1 water the plants (low priority)",
    ]
    assert run("todos.list", "what have I finished?").result.new_state == "No done to-dos."
    assert run("todos.list", "my todos").result.new_state.startswith("3 open to-do(s):")
    assert run("todos.list", "Show my to-do list").result.new_state.startswith("3 open to-do(s):")


def test_complete_marks_the_chosen_todo_done(listed, run):
    done = run("todos.complete", "done with watering the plants", ["1"])
    decision = done.engine.calls[0]
    assert decision.option_ids == ["1", "2", "3", "none"]
    assert [o.description for o in decision.options[:3]] == [
        "water the plants",
        "send the slides to the client",
        "renew my passport",
    ]
    items = todos(listed)
    assert items[0]["done"] is True and items[0]["completed"]
    assert [t["done"] for t in items[1:]] == [False, False]
    assert "marked to-do #1 'water the plants' as done" in done.result.action_log
    assert done.result.new_state == "Done: water the plants. 2 open to-do(s) left."
    everything = run("todos.list", "list all my todos").result.new_state
    assert everything.splitlines()[-1] == "- [x] #1 water the plants (low priority)"
    again = run("todos.complete", "I renewed the passport", ["3"])
    assert [o for o in again.engine.calls[0].option_ids] == ["2", "3", "none"]


def test_complete_none_changes_nothing(listed, run):
    before = (listed.data_dir / "todos" / "todos.json").read_text()
    done = run("todos.complete", "I fixed the bike", ["none"])
    assert done.result.new_state == "I fixed the bike"
    assert "none of the open to-dos" in done.result.action_log
    assert (listed.data_dir / "todos" / "todos.json").read_text() == before


def test_complete_with_nothing_open(ws, run):
    done = run("todos.complete", "check off the laundry")
    assert done.engine.calls == []
    assert done.result.new_state == "check off the laundry"
    assert "no open to-dos" in done.result.action_log


def test_writes_outside_the_data_dirs_are_refused(ws, run, tmp_path):
    ws.settings.paths.todos = str(tmp_path / "elsewhere")
    with pytest.raises(WriteRefused):
        run("todos.add", "todo: buy milk", ["none"])
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.slow
def test_twenty_runs_at_once_keep_all_twenty_todos(ws):
    """Each run reads, extends and rewrites the list under the folder's lock: none loses another's to-do.

    The runners hold no act lock (which would make them act one at a time), so the 20 bodies do act at once.
    """
    everyone_predicted = threading.Barrier(20, timeout=60)

    def answer(request):
        if request.question == "How urgent is this task?":
            everyone_predicted.wait()  # all 20 reach act together
        return "none" if "none" in request.option_ids else request.option_ids[0]

    def add(number):
        runner = SkillRunner(ws, engine=ScriptedEngine(fn=answer), act_lock=contextlib.nullcontext())
        return runner.run(f"todo: task number {number}", skill="todos.add")

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(add, range(20)))
    assert [r.error for r in results] == [None] * 20
    items = todos(ws)
    assert sorted(t["text"] for t in items) == sorted(f"task number {n}" for n in range(20))
    assert sorted(t["id"] for t in items) == list(range(1, 21))


def test_list_shows_open_to_dos_unless_done_ones_are_asked_for(listed, run):
    run("todos.complete", "watered the plants", ["1"])
    for text in ("Show my to-do list", "What's on my list?", "What do I still have to get done?", "todos"):
        shown = run("todos.list", text).result.new_state
        assert shown.startswith("2 open to-do(s):") and "water the plants" not in shown, text
    for text in (
        "What have I finished?",
        "Which tasks did I complete?",
        "show the completed to-dos",
        "what did I tick off this week?",
    ):
        shown = run("todos.list", text).result.new_state
        assert shown.splitlines() == ["1 done to-do(s):", "- [x] #1 water the plants (low priority)"], text
    assert run("todos.list", "show everything on my list").result.new_state.startswith("3 all to-do(s):")


@pytest.mark.parametrize(
    ("text", "task"),
    [
        ("Add 'renew passport' to my to-do list", "renew passport"),
        ('Add "water the plants" to my todos', "water the plants"),
        ("Put “buy milk” on my shopping list", "buy milk"),
        ("remind me to call the plumber", "call the plumber"),
        ("I need to pick up the dry cleaning", "pick up the dry cleaning"),
        ('add the "big" box to the tasks', 'the "big" box'),
    ],
)
def test_the_task_is_the_request_without_its_wrapper_or_quotes(ws, run, text, task):
    run("todos.add", text, ["none"])
    assert todos(ws)[-1]["text"] == task
