"""email.compose: write an email draft to one of the contacts.

The address book is ``config["contacts"]``: a JSON list of ``{name, email,
roles, description}``, ``roles`` being what you call them ("my sister"). The
recipient is whom the request names (a contact's name, first name, address or
role); else a SemIf decision chooses among the contacts, or among those a
shared role fits ("my colleague"); ``none`` hands the request back, as it does
at once for a name not in the address book or a request with nothing to say.

The draft, ``config["drafts"]/<request id>.txt``, has ``To:``, ``Subject:`` and
a message made from the request, be it joined to the recipient by a word
("Email Grace that I accept the offer" -> "Accepting the offer", "I accept the
offer.") or said right after it ("Tell my boss I'm out sick today").
"""

import json
import re
from email.utils import formataddr
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

# What joins "who" to "what" in a request: "Email Grace | that I accept the offer".
JOINS = (
    r"\b(that|about|regarding|asking|saying|to say|whether|if)\b|:|\s-\s|(?<=\bknow)\s"
    r"|\b((and|to) )?(tell|ask) (him|her|them)\b|\bto (tell|ask)\b"
)
LEAD_IN = r"^\W*(?:(?:please|pls|kindly|hey|ok|okay|just)\b[\s,]*|(?:can|could|would|will) you\s+(?:please\s+)?)*"
# Verbs whose "to" starts the message: "Ask Carla | to send the files".
ASKING = LEAD_IN + r"(?P<verb>ask|tell|remind|get)\b"
# Verbs followed by the recipient, then the message: "Tell | my boss | I'm out sick today".
SENDING = LEAD_IN + (
    r"(?:ask|tell|remind|message|msg|text|ping|notify|inform|warn|let|e-?mail|mail|contact|answer|drop|shoot|send"
    r"|give|write(?: back)?(?: to)?|reply to|reach out to|get in touch with|touch base with|follow up with"
    r"|get back to|hit up|send word to)\s+"
)
# What may come between the recipient and the message: "Drop Bob | a line | ...", "Let Alice | know | ...".
FILLER = (
    r"(?:\s+(?:an?|some)\s+(?:(?:quick|short|brief|little)\s+)?(?:line|note|message|msg|text|e-?mail|mail|word"
    r"|heads[\s-]?up|shout|nudge)\b|\s+(?:up|know)\b)*[\s,:-]*(?:(?:and\s+)?(?:say|tell (?:him|her|them))\b\s*)?"
)
NOT_NAMES = {"I", "Email", "E-mail", "Mail", "Message", "Text", "Please", "Hi", "Hello", "Dear"}
CALENDAR_WORDS = set("mon tue wed thu fri sat sun jan feb mar apr may jun jul aug sep oct nov dec".split())
KEEP_VERBS = set(
    "am are was will would can could should shall must may might need want have has had do did think hope".split()
)
QUESTIONS = ("whether ", "if ", "how ", "when ", "what ", "where ", "who ", "why ", "which ")
SUBJECT_WORDS = 9


def read_contacts(config):
    """The contacts: the JSON list at ``config["contacts"]`` (none if the file is missing)."""
    path = Path(config.get("contacts", "data/contacts.json"))
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def split_request(text, contacts=()):
    """``(who, join, what)``: the words naming the recipient, the word that joins them to the message, the message."""
    asking = re.match(ASKING, text, re.I)
    joins, head = JOINS + (r"|\bto\b" if asking else ""), re.match(SENDING, text, re.I)
    first = head and re.match(rf"(?:{recipient_pattern(contacts)}){FILLER}", text[head.end() :], re.I)
    if not first:  # the recipient is what comes before the first joining word
        start = asking.end() if asking else 0
        m = re.search(joins + "|$", text[start:], re.I)  # no joining word: all of it names the recipient
        return text[: start + m.start()].strip(), joined(m[0]), text[start + m.end() :].strip(" .!?")
    cut = head.end() + first.end()  # "Tell my boss | I'm out sick today": the message starts after the recipient
    m = re.match(rf"(?:(?:an?|some) (?:[\w-]+ ){{1,3}}?)?(?P<join>{joins})", text[cut:], re.I)  # "a request | asking"
    if m is None and re.match(r"(an?|some) .+ (message|note|e-?mail|card|wish(es)?)\b", text[cut:], re.I):
        return text.strip(), "", ""  # "Send Emma a happy birthday message": the kind of message is what to say
    what = text[cut + (m.end() if m else 0) :].strip(" .!?")
    return text[:cut].strip(" ,:-"), joined(m["join"]) if m else "that", what


def joined(join):
    """The word joining recipient and message, plain: "and tell them" -> "that", "asking them" -> "asking"."""
    join = re.sub(r"^(and|to) ", "", join.strip().lower())
    return "asking" if join.startswith("ask") else "that" if join.startswith("tell") else join


def recipient_pattern(contacts):
    """A pattern for the recipients a text starts with: contacts' names, addresses or roles, or Capitalised Names."""
    said = {n for c in contacts for n in (c["name"], c["name"].split()[0], c.get("email"), *c.get("roles", [])) if n}
    said = "|".join(re.escape(n) for n in sorted(said, key=len, reverse=True)) or "(?!)"
    one = rf"(?:(?:my|our|the)\s+)?(?:{said})(?![\w-])|(?-i:(?!I\b)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b"
    return rf"(?:{one})(?:\s*(?:,|and|&)\s*(?:{one}))*"


def mentions(words, phrase):
    return re.search(rf"(?<![\w-]){re.escape(phrase.lower())}(?![\w-])", words.lower()) is not None


def named(who, contacts):
    """The contacts ``who`` names: by name, first name or address, else by the longest role that fits."""
    by_name = [
        c for c in contacts if any(mentions(who, n) for n in (c["name"], c["name"].split()[0], c.get("email", "")) if n)
    ]
    if by_name:
        return by_name, "name"
    roles = [(len(role), c) for c in contacts for role in c.get("roles", []) if mentions(who, role)]
    longest = max((n for n, _ in roles), default=0)
    return [c for n, c in roles if n == longest], "role"


def unknown_name(who):
    """A capitalised name in ``who`` that is no contact's ("Zoe Park"), if any; the first word does not count."""
    kept = lambda w: w not in NOT_NAMES and w.lower()[:3] not in CALENDAR_WORDS  # noqa: E731  # one line in a body held to 200
    found = (" ".join(filter(kept, m[0].split())) for m in re.finditer(r"(?<=\s)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*", who))
    return next(filter(None, found), None)


def option(contact):
    roles = ", ".join(contact.get("roles", []))
    return Option(contact["name"], f"{contact.get('description', '')}" + (f" ({roles})" if roles else ""))


def predict(ctx, request):
    contacts = read_contacts(ctx.config)  # config-driven, local data
    who, join, what = split_request(request.text, contacts)
    found, how = named(who, contacts)
    if found and (how == "name" or len(found) == 1):
        return Prediction(text="recipient is " + "; ".join(c["name"] for c in found), decisions=[])
    if not found and (stranger := unknown_name(who)):
        return Prediction(text=f"recipient is none: {stranger} is not in the contacts", decisions=[])
    if not found and message(join, what, who)[1] == "":
        return Prediction(text="recipient is none: the request names no recipient and nothing to say", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: choosing the recipient of an email]",
        question="Which contact is the intended recipient?",
        options=[option(c) for c in (found or contacts)] + [Option("none", "None of the listed contacts.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"recipient is {result.selected}", decisions=[(decision, result)])


def message(join, what, who):
    """``(subject, body)`` made from the request's message."""
    what = re.sub(r"^(him|her|them)\s+", "", what)
    if not what:
        kind = re.search(r"\b(?:an?|the)\s+(.+?)\s+(?:message|note|email|e-mail|card|wish(?:es)?)\b", who, re.I)
        if kind is None:
            return "(no subject)", ""
        words = re.sub(r"^(quick|short|brief|little)\s+", "", kind[1], flags=re.I)
        return sentence(words, ""), sentence(words, "!")
    if join in ("about", "regarding"):
        return sentence(what, ""), f"I'm writing to you about {what}."
    if join in ("whether", "if") or what.lower().startswith(QUESTIONS):
        asked = what if what.lower().startswith(QUESTIONS) else f"{join} {what}"
        return sentence(asked, ""), f"Could you tell me {asked}?"
    if join == "asking":
        if what.lower().startswith("for "):
            return sentence(what[4:], ""), f"I would like to ask for {what[4:]}."
        if what.lower().startswith("to "):
            return sentence(what[3:], ""), f"Could you {what[3:]}?"
        return sentence(what, ""), sentence(what, "?")
    if join == "to":
        verb = re.match(ASKING, who, re.I)
        lead = "Just a reminder to" if verb and verb["verb"].lower() == "remind" else "Could you"
        return sentence(what, ""), f"{lead} {what}" + ("." if lead.startswith("Just") else "?")
    return subject_of(what), sentence(what, ".")


def subject_of(statement):
    """A subject line for a statement: "I accept the offer" -> "Accepting the offer"."""
    m = re.match(r"^I\s+([a-z]+)(?![\w'’])(.*)$", statement)  # not "I won't", whose verb is not "won"
    if m and m[1] not in KEEP_VERBS and not m[1].endswith("ed"):
        verb = m[1][:-1] if m[1].endswith("e") and not m[1].endswith("ee") else m[1]
        return sentence(verb + "ing" + m[2], "")
    return sentence(statement, "")


def sentence(words, end):
    """``words`` with a capital first letter, cut to a subject's length when ``end`` is empty, ending with ``end``."""
    words = re.sub(r"\s+", " ", words).strip(" .!?")
    if not end:
        kept = words.split()
        words = " ".join(kept[:SUBJECT_WORDS]) + ("…" if len(kept) > SUBJECT_WORDS else "")
    return (words[:1].upper() + words[1:] + end) if words else ""


def act(ctx, request, prediction):
    chosen = prediction.text.removeprefix("recipient is ")
    if chosen == "none" or chosen.startswith("none:"):
        why = chosen.removeprefix("none: ") if chosen.startswith("none:") else "no contact matches the request"
        return ActionResult(action_log=f"email.compose: {why}; no draft written.", new_state=request.text)
    book = {c["name"]: c for c in read_contacts(ctx.config)}
    recipients = [book.get(name, {"name": name}) for name in chosen.split("; ")]
    who, join, what = split_request(request.text, list(book.values()))
    subject, body = message(join, what, who)
    greeting = " and ".join(r["name"].split()[0] for r in recipients)
    to = ", ".join(formataddr((r["name"], r["email"])) if r.get("email") else r["name"] for r in recipients)
    text = f"To: {to}\nSubject: {subject}\n\nHi {greeting},\n\n" + (f"{body}\n\n" if body else "") + "Best regards,\n"
    target = ctx.data_path("drafts", f"{request.id}.txt")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    names = ", ".join(r["name"] for r in recipients)
    return ActionResult(
        action_log=f"email.compose: wrote draft {target} for {names!r}: {subject!r}.",
        new_state=f"Draft written to {target.name} for {names}: {subject}.",
    )
