"""email.list_drafts: list the email drafts, all of them or those to one contact.

Which contact the user means is a SemIf decision over the address book at
``config["contacts"]``; ``none`` lists every draft. Drafts are the ``.txt``
files email.compose writes to ``config["drafts"]`` (``To:`` and ``Subject:``
lines, a blank line, the message; older drafts have a ``Body:`` line),
newest first, each with its subject. Read-only.
"""

import json
from email.utils import getaddresses
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
    """``(path, recipient, subject or first line of the message)`` for each draft in ``folder``, newest first."""
    drafts = []
    paths = sorted(folder.glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in paths:
        head, _, message = path.read_text(encoding="utf-8", errors="replace").partition("\n\n")
        fields = {}
        for line in head.splitlines():
            key, sep, value = line.partition(":")
            if sep and key in ("To", "Subject", "Body") and key not in fields:
                fields[key] = value.strip()
        lines = [line for line in message.splitlines() if line.strip() and not line.startswith("Hi ")]
        about = fields.get("Subject") or fields.get("Body") or (lines[0] if lines else "")
        drafts.append((path, fields.get("To", "(no recipient)"), about))
    return drafts


def addressed_to(recipient, contact):
    """True if a draft's ``To:`` names ``contact`` (a contact's dict), by full or first name or by address."""
    names = {contact["name"].casefold(), contact["name"].split()[0].casefold(), contact.get("email", "").casefold()}
    for name, address in getaddresses([recipient]):
        if {name.casefold(), address.casefold()} & names - {""}:
            return True
    return recipient.casefold() in names


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
        known = {c["name"]: c for c in read_contacts(ctx.config)}.get(contact, {"name": contact})
        drafts = [d for d in drafts if addressed_to(d[1], known)]
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
        + "\n".join(lines)
        + more,
        new_state=f"{len(drafts)} email draft(s) for {scope}:\n" + "\n".join(lines) + more,
    )
