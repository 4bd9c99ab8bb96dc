"""What a run observably did, and whether it was the kind of thing asked: the evidence an assessment weighs.

The judge reads the request, the action log and the changes and says
success, failure or unclear; these facts are checked beside it, from the run
itself:

- ``error``: the body raised, was refused a write, timed out or overran its
  budget (the loop says so; nothing to read);
- ``handed_back``: the skill returned the request text as its new state (it
  declined to act, as the contract asks when it cannot);
- ``could_not``: its action log says it could not, did not or failed to act
  (in its own words: not in what it quotes, such as a subject "I can't come");
- ``changed``: how many files under the data dirs it created, modified or deleted;
  ``confined``: whether that is all it could change (a code skill, whose
  writes the loop confines to the data dirs; a SKILL.md skill's agent or
  script may act elsewhere, or answer in text);
- ``answered``: its new state holds something other than the request (a
  listing, an answer, a confirmation); ``found_nothing``: that answer says
  there was nothing ("No notes match...", "No events tomorrow."), which is as
  likely from the wrong skill, or the wrong place looked in, as from the right one;
- ``asks``: what the request asks for, read from its wording: ``"lookup"``
  (a question, or show / list / find...), ``"change"`` (add / email /
  schedule / note / delete...), else ``"other"``;
- ``verb``: the request's leading word once polite lead-ins are cut ("Please
  email Grace..." -> ``email``; in "I paid the bill, tick it off" the command
  after what the user says they did, ``tick``; "let Bob know..." is ``tell``), and ``fits``: whether the skill is the kind
  asked for: a command fits when its verb is one of the skill's words (name,
  description, examples, inputs, actions), a question when any of its words
  is. "Email Grace..." does not fit ``calendar.add_event``; a synonym the
  skill never uses ("Drop Bob a line") does not fit either, which turns a
  success verdict into ``unclear`` and can only back a failure verdict the
  judge gave itself;
- ``objects``: what a command acts on, the words after its verb that are
  neither names (capitalised inside the sentence) nor numbers ("Send 20
  dollars to Bob on PayPal": ``dollar``); :func:`object_fits` says whether
  they are what a skill writes (used by the act gate);
- ``negation``: what says not to act on the command ("Don't add...", "No need
  to email...", "Stop sending..."; see :mod:`.negation`): the act gate hands
  such a request back, whatever the route;
- ``carries_request``: whether the text files the run created carry any of
  what the request says (its words after the verb, less names and stop
  words): a draft of "Tell my boss I'm out sick today" that reads only "Hi
  David, Best regards" carries none, and the message is lost whatever the
  judge says. ``None`` when the run created no file, one it created is not
  text, or the request says nothing past its verb and whom it names;
- ``close_call``: the smallest margin between the two likeliest options of
  the skill's own decisions (which contact, which time), when the engine
  gives probabilities: a result that rests on a coin toss.

The request's wording is read for English; in other languages ``asks`` is
``"other"`` and the verb rarely fits, so such runs are labelled ``unclear``
more often, never ``success`` against the judge.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..engine.decisions import DecisionRequest, DecisionResult
from ..skills import ActionResult
from ..tree.lead_ins import body_lead_ins
from ..tree.manifests import SkillManifest
from .negation import Negation, read_negation
from .observe import Changes
from .phrasing import NOTE_TAKING, OBJECT_NOUN, plain_command, without_lead_ins, written_into

STOP = frozenset(
    """a an the my your our their his her its this that these those some any all every each
me i we you he she it they them us him myself to of in on at for from by with about into onto over under up
down out off and or but if so as than then not no nor is are was were be been being am do does did have has
had will would shall should can could may might must please hey hi ok okay just also there here what which
where when who whom whose how why s""".split()
)
QUESTION_WORDS = frozenset("what which where when who whom whose how why".split())
AUXILIARIES = frozenset("is are was were do does did have has had can could will would should am any".split())
SUBJECTS = frozenset("i you we there it my your any".split())
LOOKUP_VERBS = frozenset(
    """show list find search look locate get see display view count read open check
give tell""".split()
)
CHANGE_VERBS = frozenset(
    """add append book cancel clear complete create cross delete draft email erase file
finish forward jot log mail make mark message move note put record remember remind remove rename reply
reschedule save schedule send set store text tick update write""".split()
)
COMMAND_VERBS = LOOKUP_VERBS | CHANGE_VERBS
_COULD_NOT = re.compile(
    r"\b(?:could not|couldn'?t|cannot|can'?t|unable to|did not|didn'?t|was not able|wasn'?t able|refus\w*"
    r"|not allowed|fail(?:ed|s) to|nothing (?:was|has been) (?:done|changed|written|saved)"
    r"|no \w+ (?:was )?(?:written|saved|sent|added))\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"(?<![\w'])'[^'\n]*'(?![\w'])|\"[^\"\n]*\"")
"""What a log quotes (a subject, a title: "I can't make the party"), which says nothing of whether the skill could act."""
_NOTHING = re.compile(r"(?:no|none|nothing)\b", re.IGNORECASE)
_STATEMENT = re.compile(
    r"^i(?:'ve| have| had)?\s+\w+(?:\s+[^\s,;]+)*?\s*[,;]\s*(?:(?:and|so|now|please)\s+)*"
    r"(?=[a-z])(?!i\b)",
    re.IGNORECASE,
)
_LET_KNOW = re.compile(r"^let\s+((?:\w+\s+){1,3}?)know\b", re.IGNORECASE)
# Verbs that say nothing of what they act on: anything can be sent, added, put, written or made. Their object
# alone says which skill a command is for ("send a message" is an email, "send 20 dollars" is not).
GENERAL_VERBS = frozenset(
    "add book bring create do file get give have keep log make mark order place post put record save send set "
    "start store submit take write".split()
)
WHEN = "oclock"  # a time of day in a request (see _content)
_CLOCK = re.compile(r"\b(?:\d{1,2}(?::\d\d)?\s?[ap]\.?m\b\.?|\d{1,2}:\d\d\b|noon\b|midnight\b)", re.IGNORECASE)
HEAD_WORDS = 8  # the command's first words kept to match a skill's lead-ins (the longest is shorter)
PARTICLES = frozenset("down up off out in on over".split())  # "write down" a note, "set up" a meeting


@dataclass(frozen=True)
class CloseCall:
    """The skill's own decision that was nearest to a tie."""

    question: str
    selected: str
    margin: float


@dataclass(frozen=True)
class Evidence:
    """What the run observably did (see the module's docstring for each field)."""

    error: str | None = None
    handed_back: bool = False
    could_not: bool = False
    changes: Changes = field(default_factory=Changes)
    confined: bool = False
    answered: bool = False
    found_nothing: bool = False
    asks: str = "other"
    verb: str | None = None
    fits: bool | None = None
    skill: str | None = None
    close_call: CloseCall | None = None
    carries_request: bool | None = None

    @property
    def changed(self) -> int:
        return len(self.changes.created) + len(self.changes.modified) + len(self.changes.deleted)

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": self.error is not None,
            "handed_back": self.handed_back,
            "could_not": self.could_not,
            "changed": self.changed,
            "confined": self.confined,
            "answered": self.answered,
            "found_nothing": self.found_nothing,
            "asks": self.asks,
            "verb": self.verb,
            "fits": self.fits,
            "close_call": round(self.close_call.margin, 3) if self.close_call else None,
            "carries_request": self.carries_request,
        }


def gather_evidence(
    request_text: str,
    action: ActionResult,
    changes: Changes,
    *,
    error: str | None = None,
    skill: SkillManifest | None = None,
    decisions: Iterable[tuple[DecisionRequest, DecisionResult]] = (),
) -> Evidence:
    """The evidence of one run: its request, what the skill returned and changed, and its own decisions."""
    request = request_text.strip()
    new_state = action.new_state.strip()
    reading = read_request(request)
    return Evidence(
        error=error,
        handed_back=new_state == request,
        could_not=bool(_COULD_NOT.search(_QUOTED.sub("", action.action_log))),
        changes=changes,
        confined=skill is not None and not skill.is_skill_md,
        answered=bool(new_state) and new_state != request,
        found_nothing=new_state != request and bool(_NOTHING.match(new_state)),
        asks=reading.asks,
        verb=reading.verb,
        fits=skill_fits(reading, skill) if skill is not None else None,
        skill=skill.name if skill is not None else None,
        close_call=closest_call(decisions),
        carries_request=carries_request(reading, changes),
    )


def carries_request(reading: RequestReading, changes: Changes) -> bool | None:
    """Whether the text files a run created carry any of the request's words after its verb (``reading.objects``),
    in what they say or in their names; ``None`` when it created none, one of them is not text, or the request has
    no such words."""
    asked = reading.objects - {WHEN}  # a time of day is written as a time, not as the word
    if not asked or not changes.created or any(path not in changes.diffs for path in changes.created):
        return None
    texts = [changes.diffs[path] for path in changes.created]
    written = {
        _stem(word)
        for lines in texts
        for line in lines
        if line.startswith("+") and not line.startswith("+++")
        for word in _words(line[1:])
    }
    named = {_stem(word) for path in changes.created for word in _words(path)}  # "create notes.txt" names its file
    return bool(asked & (written | named))


@dataclass(frozen=True)
class RequestReading:
    """What the request's wording says: its leading word, whether it is a question, what it asks for, its words."""

    verb: str | None
    question: bool
    asks: str
    words: frozenset[str]
    objects: frozenset[str] = frozenset()  # what a command acts on: stems of the words after its verb (see the module)
    phrasal: str | None = None  # the verb with the particle after it ("write down", "set up"), if one is
    negation: Negation | None = None  # what says not to do it ("do not add"), if anything does (see .negation)
    said: str | None = None  # the verb as the person wrote it ("drop" in "Drop Bob a line", read as "message")
    opening: str | None = None  # the command's first words as written, through its verb and the small words after it
    plain: str | None = None  # the command in plain words, when everyday phrasing was read ("remind me to call Bob")
    head: tuple[str, ...] = ()  # the command's first words as written (its lead-ins cut), to match a skill's lead-ins
    into: str | None = None  # the stem of the thing the verb writes into, right after it ("write to my list": "list")


READ_CHARS = 2_000
"""How far into a request its ask is read (its verb, its negation, its words): what a longer one adds is its matter,
and reading it whole would cost a find a tenth of a second at 60 KB."""


@functools.lru_cache(maxsize=64)  # a find reads its request three times over (its gate, its route, its plain words)
def read_request(text: str) -> RequestReading:
    asked = text.rstrip().endswith("?")
    text = text[:READ_CHARS]
    stated = _STATEMENT.sub("", text.strip(), count=1)  # "I paid the bill, tick it off": the command is "tick it off"
    if stated == text.strip() or (_words(stated)[:1] or [""])[0] not in COMMAND_VERBS | GENERAL_VERBS:
        stated = _STATEMENT.sub("", without_lead_ins(text), count=1)
    command = without_lead_ins(stated)
    command = _LET_KNOW.sub(r"tell \1", command, count=1)  # "let Bob know that...": tell Bob that...
    literal = _words(command)
    plain = plain_command(command)  # "drop Bob a line" is "message Bob" (see .phrasing)
    command = plain.text
    words = _words(command)
    first, second = (words + [None, None])[:2]
    question = asked or first in QUESTION_WORDS or first in AUXILIARIES and second in SUBJECTS
    verb = None if question else next((w for w in words if w not in STOP), None)
    if question or verb in LOOKUP_VERBS and not _asks_to_change(words):
        asks = "lookup"
    elif verb in CHANGE_VERBS or _asks_to_change(words):
        asks = "change"
    else:
        asks = "other"
    objects = _content(command)[1:] if verb is not None else []
    rest = words[words.index(verb) + 1 :] if verb is not None else []
    if rest[:1] in (["it"], ["this"], ["that"]):  # "write it down"
        rest = rest[1:]
    phrasal = f"{verb} {rest[0]}" if rest and rest[0] in PARTICLES else None
    stems = frozenset(_stem(w) for w in words if w not in STOP)
    # read on the command too, its lead-ins cut and in plain words: "Don't forget to not email Bob" is "not email Bob"
    negation = read_negation(text, COMMAND_VERBS) or read_negation(without_lead_ins(stated), COMMAND_VERBS)
    negation = negation or read_negation(command, COMMAND_VERBS)
    said = next((w for w in literal if w not in STOP), None) if plain.said is not None and not question else verb
    opening = _opening(literal) if not question else None
    rewritten = command if plain.said is not None else None
    head = tuple(literal[:HEAD_WORDS])
    thing = written_into(command)
    into = _stem(_words(thing)[-1]) if thing is not None and _words(thing) else None
    return RequestReading(
        verb, question, asks, stems, frozenset(objects), phrasal, negation, said, opening, rewritten, head, into
    )


def negation_of(reading: RequestReading, skill: SkillManifest) -> Negation | None:
    """What in the request says not to act, for ``skill``: a verb of not doing that ``skill`` itself does
    ("Stop the timer" to a skill that stops timers) does not negate (see :mod:`.negation`)."""
    negation = reading.negation
    if negation is None or negation.verb is None:
        return negation
    return negation if negation.applies_to(_stem(negation.verb) in _vocabulary(skill)) else None


def skill_fits(reading: RequestReading, skill: SkillManifest) -> bool:
    """Is ``skill`` the kind of skill the request asks for? Its verb (a command) or a word of it (a question) is the skill's."""
    vocabulary = _vocabulary(skill)
    if reading.question or reading.verb is None:
        return bool(reading.words & vocabulary)
    if _stem(reading.verb) in vocabulary or reading.opening is not None and reading.opening in _openings(skill):
        return True
    return any(reading.head[: len(words)] == words for words in _body_lead_ins(skill))


def _body_lead_ins(skill: SkillManifest) -> list[tuple[str, ...]]:
    """The words of each lead-in ``skill``'s body cuts from a request (:mod:`..tree.lead_ins`)."""
    if skill.is_skill_md:
        return []
    return [tuple(_words(phrase)) for phrase in body_lead_ins(skill.body_path)]


def _opening(words: list[str]) -> str | None:
    """The first words of a command through its first content word and the small words after it ("remind me to",
    "do not let me"), when they are two or more: a lead-in a skill's own example may start with too."""
    at = next((i for i, w in enumerate(words) if w not in STOP), None)
    if at is None:
        return None
    end = at + 1
    while end < len(words) and words[end] in STOP:
        end += 1
    return " ".join(words[:end]) if end >= 2 else None


def _openings(skill: SkillManifest) -> frozenset[str]:
    """The openings of ``skill``'s own examples (see :func:`_opening`): the lead-ins it is asked with."""
    return frozenset(o for e in skill.examples if (o := _opening(_words(without_lead_ins(e)))) is not None)


def object_fits(reading: RequestReading, skill: SkillManifest) -> bool:
    """Is what the command acts on what ``skill`` writes? Yes unless its verb is a general one (:data:`GENERAL_VERBS`)
    and none of its objects is a word the skill names what it does by (its name, description, inputs and examples,
    their names left out; not its actions, which name how it does it: "a draft file"). A general verb with a
    particle the skill's own words use ("write down" a note, "set up" a meeting) is the skill's; one of taking a
    note (:data:`.phrasing.NOTE_TAKING`) is only a skill's whose words take notes so, whatever the note is about
    ("write down that I must email Bob" is no email). A command that writes into a thing ("write to my
    shopping list") is only a skill's that names that thing."""
    if reading.question or reading.verb not in GENERAL_VERBS:
        return True
    if reading.into is not None and reading.into not in object_vocabulary(skill):
        return False  # "write to my Bob list" writes into a list: a skill that names no list does not
    if reading.phrasal in NOTE_TAKING:  # "write down" takes a note whatever it is about: a skill that says it does
        return any(phrasal in text.lower() for text in _object_texts(skill) for phrasal in NOTE_TAKING)
    if reading.phrasal and any(reading.phrasal in text.lower() for text in _object_texts(skill)):
        return True
    return bool(reading.objects & object_vocabulary(skill))


_SENT_THINGS = frozenset("note notes memo memos".split())


def things_named(text: str) -> frozenset[str]:
    """The stems of the things ``text`` names to write into ("list", "calendar": :data:`.phrasing.OBJECT_NOUN`),
    but a note or a memo, which is also what one sends ("drop Bob a note")."""
    return frozenset(_stem(w) for w in _words(text) if OBJECT_NOUN.fullmatch(w) and w not in _SENT_THINGS)


def _object_texts(skill: SkillManifest) -> list[str]:
    name = skill.name.replace(".", " ").replace("_", " ").replace("-", " ")
    return [name, skill.category, skill.description, _inputs(skill), *skill.examples]


def object_vocabulary(skill: SkillManifest) -> frozenset[str]:
    """The stems of the words ``skill`` names what it does by (see :func:`object_fits`)."""
    return frozenset(w for text in _object_texts(skill) for w in _content(without_lead_ins(text)))


def closest_call(decisions: Iterable[tuple[DecisionRequest, DecisionResult]]) -> CloseCall | None:
    """The decision whose two likeliest options were nearest (engines with probabilities only)."""
    closest: CloseCall | None = None
    for asked, answer in decisions:
        ranked = sorted((answer.probabilities or {}).values(), reverse=True)
        if len(ranked) < 2:
            continue
        margin = ranked[0] - ranked[1]
        if closest is None or margin < closest.margin:
            closest = CloseCall(asked.question, answer.selected, margin)
    return closest


def _asks_to_change(words: list[str]) -> bool:
    """ "Check off the bill", "check it off" and "tell Bob that..." change something; "check my drafts", "tell me" do not."""
    return len(words) > 1 and (words[0] == "check" and "off" in words[1:3] or words[0] == "tell" and words[1] != "me")


def _inputs(skill: SkillManifest) -> str:
    inputs = skill.allowed_inputs
    return inputs if isinstance(inputs, str) else " ".join(map(str, inputs or ()))


def _vocabulary(skill: SkillManifest) -> frozenset[str]:
    texts = [*_object_texts(skill), *skill.actions]
    return frozenset(_stem(w) for text in texts for w in _words(text) if w not in STOP)


def _content(text: str) -> list[str]:
    """The stems of ``text``'s words, in order, without stop words, numbers ("20") and names: words capitalised
    after the first, unless most words are (a title-cased request). A time of day ("3pm", "10:30", "noon") is
    kept, as :data:`WHEN`: an appointment is what a skill that schedules acts on ("Add haircut Friday 3pm")."""
    tokens = re.findall(r"[^\W_]+(?:['’][^\W_]+)?", _CLOCK.sub(f" {WHEN} ", text))
    capitalised = [i > 0 and t[0].isupper() for i, t in enumerate(tokens)]
    names = sum(capitalised) * 2 < len(tokens)
    kept: list[str] = []
    for token, cap in zip(tokens, capitalised, strict=True):
        if not (cap and names) and not token[0].isdigit():
            kept += [_stem(w) for w in _words(token) if w not in STOP]
    return kept


def _words(text: str) -> list[str]:
    text = re.sub(r"['’](?:s|re|ve|ll|d|m)\b", "", text.lower())
    return re.findall(r"[^\W_]+", text.replace("n't", " not"))


def _stem(word: str) -> str:
    """A light stem, so "emails", "emailed" and "email", or "schedule" and "scheduled", compare equal."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # "planned" -> "plan", "debugging" -> "debug"
    return word[:-1] if len(word) > 3 and word.endswith("e") else word
