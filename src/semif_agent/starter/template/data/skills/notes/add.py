"""notes.add: save a note in the local notes database.

The note is the request without its lead-in ("note that", "jot down:",
"remember that"...). Which notebook it goes in is a SemIf decision; ``none``
files it under "general". Notes are rows of the SQLite database
``notes.sqlite3`` in the folder ``config["notes"]``, indexed for full-text
search (FTS5) when this SQLite has it (SQLite serialises concurrent writers).
"""

import re
import sqlite3

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction, current_time

NOTEBOOKS = {
    "work": "Work: meetings, projects, clients, colleagues, deadlines, the office.",
    "personal": "Personal life: family, friends, health, home, codes and passwords, the car.",
    "ideas": "Ideas: plans, brainstorms, projects to start, things to try or build some day.",
    "reading": "Reading and media: books, articles, films, podcasts and recommendations.",
}
LEAD_INS = [
    r"^(please|hey|ok(ay)?)[\s,]+",
    r"^(can|could|would) you\s+",
    r"^(add|make|take|save|create|write( down)?|jot( down)?|remember|keep in mind|store|put)\b\s*",
    r"^((a|an|the|this)\s+)?((new|quick|short)\s+)?(note|memo)s?(\s+(down|to self))?\b\s*",
    r"^((that|saying|which says|with|about|(in|to|into) (my|the) notes?)\b\s*|[:,-]\s*)+",
]
TRAILERS = r"\s*\b(to|in|into) (my|the) notes?( app)?[.!]?$|\s*\bas a note[.!]?$"
SCHEMA = """CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY, notebook TEXT NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL)"""


def note_text(text):
    """The note itself: ``text`` without the request's lead-in and trailing "to my notes"."""
    body = text.strip()
    for pattern in LEAD_INS:
        body = re.sub(pattern, "", body, count=1, flags=re.IGNORECASE)
    return re.sub(TRAILERS, "", body, flags=re.IGNORECASE).strip()


def predict(ctx, request):
    body = note_text(request.text)
    if not body:
        return Prediction(text="notebook is unknown: nothing to note", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: saving a note: {body}]",
        question="Which notebook does this note belong in?",
        options=[Option(name, about) for name, about in NOTEBOOKS.items()]
        + [Option("none", "None of these notebooks: file it under general.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"notebook is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    body = note_text(request.text)
    if not body:
        return ActionResult(
            action_log="notes.add: did not save a note: the request holds no text to note.",
            new_state=request.text,
        )
    notebook = prediction.text.removeprefix("notebook is ")
    notebook = notebook if notebook in NOTEBOOKS else "general"
    path = ctx.data_path("notes", "notes.sqlite3")
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute(SCHEMA)
            row = (notebook, body, current_time(request, ctx.config).isoformat(timespec="seconds"))
            note_id = db.execute("INSERT INTO notes (notebook, body, created) VALUES (?, ?, ?)", row).lastrowid
            indexed = index_note(db, note_id, body)
    finally:
        db.close()
    return ActionResult(
        action_log=f"notes.add: saved note #{note_id} in notebook {notebook!r} of {path}"
        f"{' (full-text indexed)' if indexed else ''}: {body!r}",
        new_state=f"Note #{note_id} saved in {notebook}: {body}",
    )


def index_note(db, note_id, body):
    """Add the note to the FTS5 index (built from all notes on first use); False without FTS5."""
    existed = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'notes_fts'").fetchone()
    try:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(body, content='notes', content_rowid='id')")
        if existed:
            db.execute("INSERT INTO notes_fts (rowid, body) VALUES (?, ?)", (note_id, body))
        else:
            db.execute("INSERT INTO notes_fts (notes_fts) VALUES ('rebuild')")
    except sqlite3.OperationalError:
        return False
    return True
