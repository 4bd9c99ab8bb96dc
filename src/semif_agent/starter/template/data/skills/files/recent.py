"""files.recent: list the most recently modified files.

Looks under ``config["files_root"]`` (read-only; hidden files and links are
skipped) and shows the newest files first, 10 unless the request names a
number ("the last 5 files"). The time window (changed today, this week, this
month) is a SemIf decision; ``none`` means no time limit.
"""

import re
import time
from datetime import datetime
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

WINDOWS = {
    "today": ("Changed today: files modified since midnight.", None),
    "week": ("Changed this week: files modified in the last 7 days.", 7 * 86400),
    "month": ("Changed this month: files modified in the last 30 days.", 30 * 86400),
}
MAX_FILES, DEFAULT_COUNT = 5000, 10


def count_of(text):
    """How many files the request asks for ("last 5 files", "3 most recent"), else 10."""
    m = re.search(
        r"\b(?:last|latest|newest|recent|top)\s+(\d{1,3})\b|\b(\d{1,3})\s+(?:most\s+)?"
        r"(?:recent|latest|newest|last|recently)\b",
        text,
        re.I,
    )
    return max(1, int(m[1] or m[2])) if m else DEFAULT_COUNT


def walk(root):
    """The files under ``root``, skipping links and hidden entries: a folder's files, then its subfolders'."""
    try:
        entries = sorted(p for p in root.iterdir() if not p.name.startswith(".") and not p.is_symlink())
    except OSError:  # an unreadable folder is skipped
        return
    yield from (p for p in entries if p.is_file())
    for folder in (p for p in entries if p.is_dir()):
        yield from walk(folder)


def since(window):
    """The epoch time a window starts at (0 for no window)."""
    if window == "today":
        return datetime.now().replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    seconds = WINDOWS.get(window, ("", None))[1]
    return time.time() - seconds if seconds else 0.0


def predict(ctx, request):
    decision = DecisionRequest(
        state=f"{request.text} [current process: listing recently modified files]",
        question="How far back should modified files be listed?",
        options=[Option(name, about) for name, (about, _) in WINDOWS.items()]
        + [Option("none", "No time limit: the newest files, whenever they changed.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"window is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    window = prediction.text.removeprefix("window is ")
    root = Path(ctx.config.get("files_root", "files"))
    if not root.is_dir():
        return ActionResult(f"files.recent: the files folder {root} does not exist.", request.text)
    start, found = since(window), []
    for path in walk(root):
        if len(found) >= MAX_FILES:
            break
        found.append((path.stat().st_mtime, path.relative_to(root).as_posix()))
    found = sorted((f for f in found if f[0] >= start), reverse=True)[: count_of(request.text)]
    label = {"today": "changed today", "week": "changed this week", "month": "changed this month"}.get(window, "")
    if not found:
        return ActionResult(
            f"files.recent: no files {label or 'at all'} under {root}.", f"No files {label or 'found'}."
        )
    lines = [f"- {rel} ({datetime.fromtimestamp(mtime):%Y-%m-%d %H:%M})" for mtime, rel in found]
    label = f" {label}" if label else ""
    return ActionResult(
        action_log=f"files.recent: listed the {len(found)} most recently modified file(s){label} under {root}:\n"
        + "\n".join(lines),
        new_state=f"{len(found)} recent file(s){label}:\n" + "\n".join(lines),
    )
