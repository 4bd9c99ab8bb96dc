"""todos.add: add a task to the to-do list.

The task is the request without its lead-in ("add", "remind me to", "todo:"),
its trailing "to my to-do list" and the quotes around it. Its priority is a SemIf decision (high, low);
``none`` means normal. The list is ``todos.json`` in the folder
``config["todos"]``, a list of ``{id, text, priority, done, created,
completed}``, read and rewritten (atomically) under a lock on that folder, so
runs at the same time each keep their to-do.
"""

import json
import re

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction, current_time

PRIORITIES = {
    "high": "High priority: urgent, important, needed today, as soon as possible, or overdue.",
    "low": "Low priority: no rush, someday, whenever there is time, nice to have.",
}
LEAD_INS = [
    r"^(please|hey|ok(ay)?)[\s,]+",
    r"^(can|could|would) you\s+",
    r"^(new (task|todo|to-do)\b|(to-?do|task)\s*(?=:)|add( a)?( new)?( task| todo| to-do)?( to)?\b|put\b|"
    r"remind me to\b|i (need|have|got) to\b|don'?t (let me )?forget to\b)\s*:?\s*",
]
TRAILERS = (
    r"[\s,]*\b(to|on|onto|in|into) (my|the) ((to-?do|task|shopping)\s*)?(lists?|tasks|to-?dos)\b.*$"
    r"|[\s,]*\bput it on (my|the) list\b.*$"
)
QUOTES = r"^[\"'“‘«]\s*(.*?)\s*[\"'”’»]$"


def task_text(text):
    """The task itself: ``text`` without the request's lead-in and trailing "to my to-do list"."""
    task = text.strip()
    for pattern in LEAD_INS:
        task = re.sub(pattern, "", task, count=1, flags=re.IGNORECASE)
    if re.fullmatch(r"((to|on) )?(my|the) (to-?do |todo |task )?(list|tasks)\W*", task, re.IGNORECASE):
        return ""  # "add to my to-do list": no task named
    task = re.sub(TRAILERS, "", task, flags=re.IGNORECASE).strip(" .,;:!")
    return re.sub(QUOTES, r"\1", task).strip(" .,;:!")


def load(path):
    """The todos stored at ``path`` (none if there is no file yet)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def predict(ctx, request):
    task = task_text(request.text)
    if not task:
        return Prediction(text="priority is unknown: no task", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: adding the to-do {task!r}]",
        question="How urgent is this task?",
        options=[Option(name, about) for name, about in PRIORITIES.items()]
        + [Option("none", "Normal priority: nothing says it is urgent or can wait.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"priority is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    task = task_text(request.text)
    if not task:
        return ActionResult("todos.add: did not add a to-do: the request names no task.", request.text)
    priority = prediction.text.removeprefix("priority is ")
    priority = priority if priority in PRIORITIES else "normal"
    with ctx.locked(ctx.data_path("todos", "todos.json")) as path:
        todos = load(path)
        created = current_time(request, ctx.config).isoformat(timespec="seconds")
        todo = {
            "id": max((t["id"] for t in todos), default=0) + 1,
            "text": task,
            "priority": priority,
            "done": False,
            "created": created,
            "completed": None,
        }
        ctx.write_atomic(path, json.dumps(todos + [todo], indent=2, ensure_ascii=False) + "\n")
    open_count = sum(1 for t in todos if not t["done"]) + 1
    return ActionResult(
        action_log=f"todos.add: added to-do #{todo['id']} {task!r} ({priority} priority) to {path}; "
        f"{open_count} open to-do(s).",
        new_state=f"To-do #{todo['id']} added: {task} ({priority} priority). {open_count} open.",
    )
