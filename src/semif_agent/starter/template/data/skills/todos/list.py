"""todos.list: show the to-do list.

Which to-dos the user wants (open, done, all) is a SemIf decision; ``none``
shows the open ones. Reads ``todos.json`` in the folder ``config["todos"]``;
open to-dos are shown high priority first. Read-only.
"""

import json
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

STATUSES = {
    "open": "Open to-dos: tasks still to do, not finished yet.",
    "done": "Done to-dos: tasks already finished, completed or checked off.",
    "all": "All to-dos: every task, open and done.",
}
RANK = {"high": 0, "normal": 1, "low": 2}


def load(path):
    """The todos stored at ``path`` (none if there is no file yet)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def line(todo):
    mark = "x" if todo["done"] else " "
    flag = "" if todo.get("priority", "normal") == "normal" else f" ({todo['priority']} priority)"
    return f"- [{mark}] #{todo['id']} {todo['text']}{flag}"


def predict(ctx, request):
    decision = DecisionRequest(
        state=f"{request.text} [current process: showing the to-do list]",
        question="Which to-dos should be shown?",
        options=[Option(name, about) for name, about in STATUSES.items()]
        + [Option("none", "No status named: show the open to-dos.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"status is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    status = prediction.text.removeprefix("status is ")
    status = status if status in STATUSES else "open"
    path = Path(ctx.config.get("todos", "data/todos")) / "todos.json"
    todos = load(path)
    shown = [t for t in todos if status == "all" or t["done"] == (status == "done")]
    shown.sort(key=lambda t: (t["done"], RANK.get(t.get("priority"), 1), t["id"]))
    if not shown:
        return ActionResult(f"todos.list: no {status} to-dos in {path}.", f"No {status} to-dos.")
    lines = "\n".join(line(t) for t in shown)
    return ActionResult(
        action_log=f"todos.list: showed {len(shown)} {status} to-do(s) of {len(todos)} from {path}:\n{lines}",
        new_state=f"{len(shown)} {status} to-do(s):\n{lines}",
    )
