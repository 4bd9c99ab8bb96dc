"""files.find: find files by name, extension or a word inside them.

Searches ``config["files_root"]`` (read-only; hidden files are skipped). The
request's words are matched against each file's path and, for small text
files, its contents; the files matching the most words win. A named extension
("pdf", ".csv", "markdown") restricts the type. Otherwise what kind of file
the user means (document, spreadsheet, image, code) is a SemIf decision:
files of that kind rank first, or, with no other word to match, are the
result; ``none`` means any kind.
"""

import re
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

KINDS = {
    "document": (
        {".md", ".txt", ".pdf", ".doc", ".docx", ".odt", ".rtf"},
        "Documents: reports, letters, notes, PDFs, Word and text files.",
    ),
    "spreadsheet": (
        {".csv", ".tsv", ".xlsx", ".xls", ".ods"},
        "Spreadsheets and tables: CSV or Excel files, budgets, figures, lists.",
    ),
    "image": (
        {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".heic"},
        "Images: photos, pictures, screenshots, scans, logos.",
    ),
    "code": (
        {".py", ".js", ".ts", ".html", ".css", ".sh", ".json", ".toml", ".yaml", ".yml"},
        "Code and config: scripts, programs, web pages, JSON or YAML files.",
    ),
}
EXTENSIONS = {
    "pdf": ".pdf",
    "csv": ".csv",
    "markdown": ".md",
    "md": ".md",
    "txt": ".txt",
    "docx": ".docx",
    "xlsx": ".xlsx",
    "json": ".json",
    "py": ".py",
    "png": ".png",
    "jpg": ".jpg",
    "jpeg": ".jpeg",
    "svg": ".svg",
    "html": ".html",
    "ics": ".ics",
}
FILLER = set(
    """a about all an and any are can could do document documents file files find folder for from
get got have i in is it its locate look me mention mentions mentioning my named of on or please search show
some that the there this to where which with called contain contains containing word words image images
spreadsheet spreadsheets photo photos picture pictures code script scripts""".split()
)
TEXT = {".md", ".txt", ".csv", ".tsv", ".json", ".html", ".ics", ".py", ".yaml", ".yml", ".toml", ".svg"}
MAX_FILES, MAX_READ, SHOWN = 5000, 200_000, 15


def ask(text):
    """``(words, extension)`` the request looks for."""
    found = re.findall(r"\.?([^\W_][\w-]*)", text.lower())
    exts = [EXTENSIONS.get(w) or EXTENSIONS.get(w.removesuffix("s")) for w in found]  # "pdf", "pdfs"
    words = [w for w, ext in zip(found, exts, strict=True) if not ext and w not in FILLER]
    return list(dict.fromkeys(words)), next((ext for ext in exts if ext), None)


def walk(root):
    """The files under ``root``, skipping links and hidden entries: a folder's files, then its subfolders'."""
    try:
        entries = sorted(p for p in root.iterdir() if not p.name.startswith(".") and not p.is_symlink())
    except OSError:  # an unreadable folder is skipped
        return
    yield from (p for p in entries if p.is_file())
    for folder in (p for p in entries if p.is_dir()):
        yield from walk(folder)


def predict(ctx, request):
    words, ext = ask(request.text)
    if ext:
        return Prediction(text=f"kind is {ext}", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: finding files]",
        question="What kind of file is the user looking for?",
        options=[Option(name, about) for name, (_, about) in KINDS.items()]
        + [Option("none", "Any kind of file: no particular type.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"kind is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    words, _ = ask(request.text)
    kind = prediction.text.removeprefix("kind is ")
    suffixes = {kind} if kind.startswith(".") else KINDS.get(kind, (set(),))[0]
    root = Path(ctx.config.get("files_root", "files"))
    if not root.is_dir():
        return ActionResult(f"files.find: the files folder {root} does not exist.", request.text)
    if not words and not suffixes:
        return ActionResult(
            "files.find: did not search: the request names no file, type or word to look for.", request.text
        )
    scored, explicit = [], kind.startswith(".")
    for n, path in enumerate(walk(root)):
        if n >= MAX_FILES:
            break
        typed = path.suffix.lower() in suffixes
        if (explicit or not words) and not typed:
            continue
        rel = path.relative_to(root).as_posix()
        in_name = {w for w in words if w in rel.lower()}
        in_text = set()
        if words and path.suffix.lower() in TEXT and path.stat().st_size <= MAX_READ:
            content = path.read_text(encoding="utf-8", errors="ignore").lower()
            in_text = {w for w in words if w in content}
        if in_name or in_text or not words:
            scored.append((len(in_name | in_text), typed, len(in_name), rel))
    best = max((s[0] for s in scored), default=0)
    hits = sorted((s for s in scored if s[0] == best), key=lambda s: (-s[1], -s[2], s[3]))
    what = " ".join(words) or "any name"
    if not hits:
        return ActionResult(f"files.find: no file under {root} matches {what!r} ({kind}).", f"No files match {what!r}.")
    lines = [f"- {rel}" for *_, rel in hits[:SHOWN]]
    more = f"\n(and {len(hits) - SHOWN} more)" if len(hits) > SHOWN else ""
    return ActionResult(
        action_log=f"files.find: {len(hits)} file(s) under {root} match {what!r} ({kind}):\n" + "\n".join(lines) + more,
        new_state=f"{len(hits)} file(s) found:\n" + "\n".join(lines) + more,
    )
