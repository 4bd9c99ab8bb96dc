"""todos.list: show the to-do list.

The open to-dos, unless the request asks for the done ones ("what have I
finished?", "completed tasks", "ticked off") or for all of them ("all my
to-dos", "everything on my list"); words for what is left ("still", "left",
"remaining", "not done yet") mean the open ones whatever else is said. Reads
``todos.json`` in the folder ``config["todos"]``; open to-dos are shown high
priority first. Read-only.
"""

import json
import re
from pathlib import Path

from semif_agent.skills import ActionResult, Prediction

STATUSES = {
    "open": r"\b(open|still|left|remaining|pending|outstanding|unfinished|not (yet )?(done|finished|completed)|"
    r"(yet|left) to do|to get done)\b",
    "done": r"\b(done|finished|completed?|(check|tick|cross)(ed)? off|accomplished)\b",
    "all": r"\b(all|everything|every|whole|entire)\b",
}
RANK = {"high": 0, "normal": 1, "low": 2}


def load(path):
    """The todos stored at ``path`` (none if there is no file yet)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def line(todo):
    mark = "x" if todo["done"] else " "
    flag = "" if todo.get("priority", "normal") == "normal" else f" ({todo['priority']} priority)"
    return f"- [{mark}] #{todo['id']} {todo['text']}{flag}"


def asked_status(text):
    """``open``, ``done`` or ``all``: the first whose words the request uses, in that order; else ``open``."""
    return next((name for name, words in STATUSES.items() if re.search(words, text, re.IGNORECASE)), "open")


def predict(ctx, request):
    return Prediction(text=f"status is {asked_status(request.text)}", decisions=[])


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
