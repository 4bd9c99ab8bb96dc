"""notes.search: find saved notes by keyword.

The search words are the request's words less the filler ("search my notes
for", "what did I note about"...). Which notebook to look in first is a SemIf
decision; notes from other notebooks still follow, and ``none`` ranks all
notebooks alike. Uses the FTS5 index of ``notes.sqlite3`` in the folder
``config["notes"]`` when present, else a LIKE scan. Read-only.
"""

import re
import sqlite3
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

NOTEBOOKS = {
    "work": "Work: meetings, projects, clients, colleagues, deadlines, the office.",
    "personal": "Personal life: family, friends, health, home, codes and passwords, the car.",
    "ideas": "Ideas: plans, brainstorms, projects to start, things to try or build some day.",
    "reading": "Reading and media: books, articles, films, podcasts and recommendations.",
}
FILLER = set(
    """a about all am an and any anything are at can could did do does down find for from
get have i in is it jot look me mention mentions mentioning my note noted notes of on or please
remember saved search show something tell that the there this to up was what where which
with wrote write written you""".split()
)
SHOWN = 10


def search_words(text):
    """The request's meaningful words, lowercased, in order, without repeats."""
    words = re.findall(r"[^\W_]+", text.lower())
    return list(dict.fromkeys(w for w in words if w not in FILLER))


def predict(ctx, request):
    words = search_words(request.text)
    if not words:
        return Prediction(text="notebook is unknown: no search words", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: searching notes for {' '.join(words)}]",
        question="Which notebook is the note most likely in?",
        options=[Option(name, about) for name, about in NOTEBOOKS.items()]
        + [Option("none", "No particular notebook: search them all alike.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"notebook is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    words = search_words(request.text)
    if not words:
        return ActionResult(
            action_log="notes.search: did not search: the request names nothing to look for.",
            new_state=request.text,
        )
    notebook = prediction.text.removeprefix("notebook is ")
    query = " ".join(words)
    path = Path(ctx.config.get("notes", "data/notes")) / "notes.sqlite3"
    if not path.is_file():
        return ActionResult(f"notes.search: no notes database at {path} yet.", "No notes saved yet.")
    db = sqlite3.connect(path)  # a plain path, which the write guard checks like any other
    try:
        db.execute("PRAGMA query_only = ON")  # read-only from here on
        rows, how = find(db, words, notebook)
    except sqlite3.DatabaseError as exc:
        return ActionResult(f"notes.search: cannot read the notes database {path}: {exc}.", request.text)
    finally:
        db.close()
    if not rows:
        return ActionResult(f"notes.search: no note in {path} matches {query!r} ({how}).", f"No notes match {query!r}.")
    lines = [f"- #{i} [{book}] {body}" for i, book, body in rows]
    first = f", notebook {notebook!r} first" if notebook != "none" else ""  # "none": no notebook was named
    return ActionResult(
        action_log=f"notes.search: {len(rows)} note(s) in {path} match {query!r} ({how}{first}):\n" + "\n".join(lines),
        new_state=f"{len(rows)} note(s) match {query!r}:\n" + "\n".join(lines),
    )


def find(db, words, notebook):
    """``(id, notebook, body)`` rows matching any of ``words``, best first, and how they were found."""
    order = "(n.notebook = :book) DESC"
    try:
        match = " OR ".join(f'"{w}"*' for w in words)
        sql = (
            f"SELECT n.id, n.notebook, n.body FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid "
            f"WHERE notes_fts MATCH :match ORDER BY {order}, bm25(notes_fts) LIMIT {SHOWN}"
        )
        return db.execute(sql, {"match": match, "book": notebook}).fetchall(), "full-text search"
    except sqlite3.OperationalError:  # no FTS5 index (or no FTS5 in this SQLite)
        hits = " + ".join("(n.body LIKE ?)" for _ in words)
        sql = (
            f"SELECT n.id, n.notebook, n.body FROM notes n WHERE {hits} > 0 "
            f"ORDER BY n.notebook = ? DESC, {hits} DESC, n.id DESC LIMIT {SHOWN}"
        )
        likes = [f"%{w}%" for w in words]
        return db.execute(sql, likes + [notebook] + likes).fetchall(), "keyword scan"
