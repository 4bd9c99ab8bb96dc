"""email.list_drafts: list the email drafts, all of them or those to one contact.

Which contact the user means is a SemIf decision over the address book at
``config["contacts"]``; ``none`` lists every draft. Drafts are the ``.txt``
files email.compose writes to ``config["drafts"]`` ("To: ..." then
"Body: ..."), newest first. Read-only.
"""

import json
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

SHOWN = 20


def read_contacts(config):
    """The contacts: the JSON list at ``config["contacts"]`` (none if the file is missing)."""
    path = Path(config.get("contacts", "data/contacts.json"))
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def read_drafts(folder):
    """``(path, recipient, first body line)`` for each draft in ``folder``, newest first."""
    drafts = []
    paths = sorted(folder.glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in paths:
        fields = {}
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key in ("To", "Body") and key not in fields:
                fields[key] = value.strip()
        drafts.append((path, fields.get("To", "(no recipient)"), fields.get("Body", "")))
    return drafts


def addressed_to(recipient, contact):
    """True if a draft's ``To:`` names ``contact``, by full or first name."""
    to, name = recipient.casefold(), contact.casefold()
    return to == name or to == name.split()[0]


def predict(ctx, request):
    contacts = read_contacts(ctx.config)
    decision = DecisionRequest(
        state=f"{request.text} [current process: listing email drafts]",
        question="Whose email drafts should be listed?",
        options=[Option(c["name"], c.get("description", "")) for c in contacts]
        + [Option("none", "No particular contact: list all drafts.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"drafts for {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    contact = prediction.text.removeprefix("drafts for ")
    folder = Path(ctx.config.get("drafts", "data/drafts"))
    drafts = read_drafts(folder) if folder.is_dir() else []
    if contact != "none":
        drafts = [d for d in drafts if addressed_to(d[1], contact)]
    scope = "all contacts" if contact == "none" else contact
    if not drafts:
        return ActionResult(
            action_log=f"email.list_drafts: found no drafts for {scope} in {folder}.",
            new_state=f"No email drafts for {scope}.",
        )
    lines = [f"- {path.name}: to {to}: {body[:70]}" for path, to, body in drafts[:SHOWN]]
    more = f"\n(and {len(drafts) - SHOWN} older)" if len(drafts) > SHOWN else ""
    return ActionResult(
        action_log=f"email.list_drafts: listed {len(drafts)} draft(s) for {scope} from {folder}:\n"
        + "\n".join(lines) + more,
        new_state=f"{len(drafts)} email draft(s) for {scope}:\n" + "\n".join(lines) + more,
    )
