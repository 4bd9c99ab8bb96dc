"""todos.complete: mark a to-do as done.

Which open to-do the user finished is a SemIf decision over the open to-dos
of ``todos.json`` in the folder ``config["todos"]``; ``none`` means none of
them, and nothing is changed. The list is read and rewritten (atomically)
under a lock on that folder.
"""

import json
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction, current_time


def load(path):
    """The todos stored at ``path`` (none if there is no file yet)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def todos_file(config):
    return Path(config.get("todos", "data/todos")) / "todos.json"


def predict(ctx, request):
    open_todos = [t for t in load(todos_file(ctx.config)) if not t["done"]]
    if not open_todos:
        return Prediction(text="todo is unknown: no open to-dos", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: checking off a to-do]",
        question="Which to-do has been done?",
        options=[Option(str(t["id"]), t["text"]) for t in open_todos] + [Option("none", "None of these to-dos.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"todo is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    chosen = prediction.text.removeprefix("todo is ")
    path = todos_file(ctx.config)
    if chosen == "none" or chosen.startswith("unknown") or not path.is_file():
        why = (
            "none of the open to-dos matches the request" if chosen == "none" else f"there are no open to-dos in {path}"
        )
        return ActionResult(f"todos.complete: did not check off anything: {why}.", request.text)
    with ctx.locked(ctx.data_path("todos", "todos.json")) as path:
        todos = load(path)
        todo = next((t for t in todos if str(t["id"]) == chosen and not t["done"]), None)
        if todo is None:
            return ActionResult(f"todos.complete: did not check off anything: no open to-do #{chosen}.", request.text)
        todo["done"], todo["completed"] = True, current_time(request, ctx.config).isoformat(timespec="seconds")
        ctx.write_atomic(path, json.dumps(todos, indent=2, ensure_ascii=False) + "\n")
    left = sum(1 for t in todos if not t["done"])
    return ActionResult(
        action_log=f"todos.complete: marked to-do #{todo['id']} {todo['text']!r} as done in {path}; {left} open left.",
        new_state=f"Done: {todo['text']}. {left} open to-do(s) left.",
    )
