"""email.compose: write an email draft to one of the contacts.

The recipient is resolved with a SemIf decision over the address book at
``config["contacts"]`` (a JSON list of ``{name, email, description}``); the
draft is written to ``config["drafts"]`` as ``<request id>.txt``.
This is the worked example of the skill contract, with one addition: when no
contact fits (the engine answers ``none``), ``act`` hands the request back
instead of writing a draft to nobody, as the contract's "never swallow the
request" rule asks.
"""

import json
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction


def read_contacts(config):
    """The contacts: the JSON list at ``config["contacts"]`` (none if the file is missing)."""
    path = Path(config.get("contacts", "data/contacts.json"))
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def predict(ctx, request):
    contacts = read_contacts(ctx.config)          # config-driven, local data
    decision = DecisionRequest(
        state=f"{request.text} [current process: none]",
        question="Which contact is the intended recipient?",
        options=[Option(c["name"], c.get("description", "")) for c in contacts]
        + [Option("none", "None of the listed contacts.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"recipient is {result.selected}",
                      decisions=[(decision, result)])

def act(ctx, request, prediction):
    recipient = prediction.text.removeprefix("recipient is ")
    if recipient == "none":
        return ActionResult(action_log="email.compose: no contact matches the request; no draft written.",
                            new_state=request.text)
    drafts = Path(ctx.config.get("drafts", "data/drafts"))
    drafts.mkdir(parents=True, exist_ok=True)
    target = drafts / f"{request.id}.txt"
    target.write_text(f"To: {recipient}\nBody: {request.text}\n")
    return ActionResult(
        action_log=f"email.compose: wrote draft {target} for {recipient!r}.",
        new_state=f"Draft written to {target.name} for {recipient}.",
    )
