"""Everyday phrasing read as the plain command it means: "Drop Bob a line" is "message Bob", "Pencil in lunch" is "schedule lunch".

People rarely start a request with the verb a skill names itself by. They
use phrasal verbs and idioms ("shoot Alice an email", "ping David", "let
Carla know", "don't let me forget to", "pencil in", "scribble down", "cross it
off"), polite or terse lead-ins ("would you mind", "pls"), and statements
before the command ("I need to send the forms, put it on my todos"). A
similarity engine routes most of these to the right skill; the act gate,
which reads the request's verb against the skill's own words
(:func:`.evidence.skill_fits`), would hand them back, since no skill says
"drop" or "pencil".

:func:`plain_command` rewrites the head of a command into its plain form
(the rest is kept word for word) and says which words it read
(:class:`Plain`), so the gate can name what the person wrote when it hands a
request back. The table is of English usage, not of any skill: each row maps
a family of phrasings to a plain verb that skills of that kind use (message,
tell, remind, schedule, note, write down, put, cross off, show, find). A
skill's own lead-ins, in its examples or its body, count beside it (see
:func:`.evidence.skill_fits`). A phrasing that means an action no skill
here does ("give Mum a ring", "drop the meeting") is left as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Polite, terse or hedged openings that say nothing of what to do.
LEAD_INS = re.compile(
    r"^(?:(?:please|pls|plz|pleas|kindly|hey|hi|ok|okay|so|now|quick(?:ly)?|just)\b[\s,:]*"
    r"|(?:would|do) you (?:mind|be so kind as to|be able to)\s+"  # before "would you", which would leave "mind"
    r"|(?:can|could|would|will) (?:you|u)\s+(?:please\s+|kindly\s+|just\s+)?"
    r"|i(?:'d| would)? (?:want|like|need) (?:you )?to\s+(?!remember\b)|i (?:have|got) to\s+(?!remember\b)"
    r"|go ahead and\s+|be a (?:dear|star) and\s+|do me a favou?r and\s+|don'?t forget to\s+(?!remind\b))+",
    re.IGNORECASE,
)
_WHO = r"(?P<who>(?!(?:me|to|down|up|it|this|that|these|those|off|a|an|the|some|any)\b)[\w'’.-]+(?:\s+(?!a\b|an\b)[\w'’.-]+){0,2}?)"
# Someone plainly a person: a capitalised name of one or two words (not "Bob's ..."), or one's boss, sister, team...
_PERSON_NOUNS = (
    r"boss|manager|team|sister|brother|mum|mom|mother|dad|father|parents|wife|husband|partner|friends?|colleagues?"
    r"|co-?workers?|landlord|landlady|doctor|dentist|teacher|clients?|customers?|accountant|lawyer|neighbou?rs?|son"
    r"|daughter|aunt|uncle|grandma|grandpa|grandparents|family|assistant|coach|tutor|mentor|supervisor|director"
    r"|roommate|flatmate|cousin|niece|nephew|kids|children|girlfriend|boyfriend|fianc[eé]e?|lead|hr|everyone|all"
)
_PERSON = (
    r"(?:(?-i:[A-Z])[\w’'-]*?(?:\s+(?-i:[A-Z])[a-z]+)?(?![\w'’-])"
    rf"|(?:my|our|his|her|their|the)\s+(?:[\w-]+\s+)?(?:{_PERSON_NOUNS})(?![\w'’-]))"
)
_NOTE = r"(?:(?:quick|short|brief|little|few)\s+)?(?:line|lines|note|message|msg|mail|email|e-mail|text|word|memo)"
_SENDING = (
    r"(?:drop(?:ping)?|shoot(?:ing)?|fire(?:\s+off)?|firing(?:\s+off)?|flick|dash(?:\s+off)?|bash\s+out|pop"
    r"|ping|send(?:ing)?|writ(?:e|ing)|whip\s+up|zap)"
)
# Things a request writes into, not people one writes to: "write to my shopping list" is no message.
OBJECT_NOUNS = (
    r"lists?|to-?dos?|todo|tasks?|notes?|notebooks?|notepad|journal|diary|diaries|calendars?|cal|agenda|schedule"
    r"|planner|files?|folders?|documents?|docs?|spreadsheets?|sheets?|logs?|logbook|pages?|wiki|board|database"
    r"|records?|tracker|backlog|ledger|register|drafts?|clipboard|drive|disk|table|forms?|readme|memos?|entry|entries"
    r"|checklists?|whiteboard|inventory|reminders?|scratchpad|kanban|wishlists?|jotter|pad|post-?its?|stick(?:y|ies)"
)
OBJECT_NOUN = re.compile(rf"(?:{OBJECT_NOUNS})", re.IGNORECASE)
# Ahead: a noun phrase of up to five words ending in such a thing, before any word that starts what is said: "my
# Bob list", "Bob's to-do list", "our shared list with Bob", "the team calendar" (but not "Bob about the list").
_SAID = "that|saying|asking|about|to|with|for"


def _thing_ahead(stops: str) -> str:
    """A lookahead for a thing heading what follows, within five words that are none of ``stops``."""
    return rf"(?=(?:(?!(?:{stops})\s)[\w'’.-]+\s+){{0,4}}(?:{OBJECT_NOUNS})(?![\w-]))"


_A_THING = _thing_ahead(_SAID)
# A verb, then what it writes into: "write to Bob's and Alice's shared list", "scribble in my notebook".
_INTO = re.compile(
    rf"[\w-]+\s+(?:to|into|onto|on|in)\s+(?:(?!(?:{_SAID})\s)[\w'’.-]+\s+){{0,4}}(?P<thing>{OBJECT_NOUNS})(?![\w-])",
    re.IGNORECASE,
)
_WHO_A_THING = _thing_ahead(f"{_SAID}|a|an|some")  # before "a note": "Send my manager a note" is to a person
# Phrasal verbs of taking a note, never of messaging: "write down", "jot down", "scribble down".
NOTE_TAKING = frozenset(("write down", "jot down", "note down", "take down", "scribble down", "put down", "pen down"))
_LIST = r"(?:my|the|our)\s+(?:\w+[\s-]+)?(?:list|lists|to-?dos?|todo\s+list|tasks?)\b"
_DIARY = r"(?:my|the|our)\s+(?:calendar|diary|agenda|schedule|cal)\b"

# (pattern at the head of the command, its plain form): first match wins. ``{who}`` keeps the person named.
REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), plain)
    for pattern, plain in (
        # to write to someone
        (rf"{_SENDING}\s+(?!{_WHO_A_THING}){_WHO}\s+(?:a|an|some)\s+{_NOTE}\b(?:\s+(?:off|over))?", "message {who}"),
        (rf"{_SENDING}\s+(?:a|an|some)\s+{_NOTE}\s+(?:off\s+|over\s+)?(?:to|for)\s+(?!{_A_THING})", "message "),
        (
            r"(?:hit\s+up|reach\s+out\s+to|get\s+in\s+touch\s+with|touch\s+base\s+with|get\s+back\s+to"
            r"|write\s+back\s+to|circle\s+back\s+(?:to|with)|follow\s+up\s+with|ping)\s+(?!me\b)"
            rf"(?!{_A_THING})",
            "message ",
        ),
        (rf"hit\s+(?!{_A_THING}){_WHO}\s+up\b", "message {who}"),
        (
            rf"writ(?:e|ing)\s+(?:to\s+)?(?!{_A_THING}){_WHO}\s+"
            r"(?=(?:that|saying|asking|to\s+(?:say|ask|tell)|about|and\s+(?:say|ask|tell))\b)",
            "message {who} ",
        ),
        # "write to" without what is said after it: a message only to someone plainly a person (a name, or one's
        # boss, sister...), never to a thing under a name no list of things holds ("write to my Bob checklist: ...")
        (rf"writ(?:e|ing)\s+to\s+(?!{_A_THING})(?={_PERSON})", "message "),
        (rf"give\s+(?!{_WHO_A_THING}){_WHO}\s+(?:a\s+)?(?:heads[\s-]?up|shout|nudge|quick\s+update)\b", "tell {who}"),
        (r"send\s+word\s+to\s+", "tell "),
        # to be reminded
        (r"(?:do\s+not|don'?t|dont)\s+let\s+me\s+forget\s+(?:to\s+)?", "remind me to "),
        (
            r"(?:make\s+sure|ensure)\s+(?:that\s+)?i\s+(?:remember|don'?t\s+forget|do\s+not\s+forget)\s+(?:to\s+)?",
            "remind me to ",
        ),
        (
            r"i\s+(?:must\s+not|mustn'?t|should\s+not|shouldn'?t|can'?t|cannot|can\s+not|better\s+not|must\s+never)"
            r"\s+forget\s+(?:to\s+)?",
            "remind me to ",
        ),
        (r"(?:i\s+(?:need|have|want|must)\s+to\s+|help\s+me\s+)remember\s+to\s+", "remind me to "),
        (r"remind\s+me\s+(?:later|tomorrow|again|sometime)\s+to\s+", "remind me to "),
        # to put on a list
        (rf"(?:stick|chuck|pop|throw|bung|slap|whack|get)\s+(?=.{{1,80}}?\b(?:on|onto|to|in|into)\s+{_LIST})", "put "),
        (
            rf"(?:strike|scratch|knock|take|cross)\s+(?P<what>.{{1,60}}?)\s+(?:off|from)\s+(?={_LIST})",
            "cross {what} off ",
        ),
        # to schedule
        (r"(?:pencil|pen|slot|fit|squeeze|book|lock|schedule|put)\s+(?:me\s+)?in\b(?:\s+for\b)?", "schedule"),
        (r"(?:block|mark)\s+(?:out|off)\b", "schedule"),
        (r"put\s+me\s+down\s+for\b", "schedule"),
        (rf"get\s+(?=.{{1,80}}?\b(?:on|in|into)\s+{_DIARY})", "put "),
        (
            r"(?:arrange|organi[sz]e|plan)\s+(?=(?:a|an|the|my)\s+(?:\w+\s+)?(?:meeting|call|catch[\s-]?up|lunch|dinner"
            r"|appointment|session|chat|interview|review|visit)\b)",
            "schedule ",
        ),
        # to note
        (r"note\s+to\s+self\s*:?", "note:"),
        (r"make\s+a\s+(?:quick\s+)?(?:mental\s+)?note\s+(?:of\s+|that\s+|about\s+)?", "note "),
        (r"(?:scribble|take|pen|get|put)\s+(?:this\s+|that\s+|it\s+)?down\b", "write down"),  # "jot down" is plain
        (r"(?:keep|bear)\s+in\s+mind\s+(?:that\s+)?", "remember that "),
        (r"(?:i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+)remember\s+(?:that\s+)?", "remember that "),
        (r"record\s+(?:that|the\s+fact\s+that)\s+", "note that "),
        # to look something up
        (r"(?:pull|bring|call)\s+up\b", "show"),
        (r"(?:run|walk|take)\s+me\s+through\b", "show"),
        (r"(?:dig|track|hunt|root|fish)\s+(?:up|down|out)\b", "find"),
    )
)


@dataclass(frozen=True)
class Plain:
    """A command in its plain form, and what was read: ``said`` the words rewritten as written (None: nothing was)."""

    text: str
    said: str | None = None


def without_lead_ins(text: str) -> str:
    """``text`` without the polite or terse openings of :data:`LEAD_INS`."""
    return LEAD_INS.sub("", text.strip())


def written_into(command: str) -> str | None:
    """The thing (:data:`OBJECT_NOUNS`) ``command``'s verb writes into, right after it ("write to my Bob list":
    "list"), or None."""
    found = _INTO.match(command)
    return found["thing"].lower() if found is not None else None


def plain_command(command: str) -> Plain:
    """``command`` (its lead-ins cut already) with its head in the plain form of :data:`REWRITES`, if it has one."""
    for pattern, plain in REWRITES:
        found = pattern.match(command)
        if found is None:
            continue
        head = plain.format(**{k: v for k, v in found.groupdict().items() if v is not None})
        return Plain(head + command[found.end() :], " ".join(found[0].split()))
    return Plain(command)
