"""Whether a request says not to do something: a negated command is handed back, never acted on.

"Don't add buy milk to my todo list" names a skill that writes and the thing
to write, and says not to. The words that negate are read where they govern
the command, at the start of one of its clauses:

- the negated imperative: "don't", "do not", "never", "please just don't";
- the speaker's or the addressee's refusal: "I don't want you to", "you
  shouldn't", "there's no need to", "no need to", "let's not", "I'd rather
  you didn't", "make sure not to", "under no circumstances";
- a verb of not doing, followed by what is not to be done: "stop sending",
  "skip adding", "hold off on", "refrain from", "forget about";
- a retraction: "never mind", "forget it", "scratch that", "no." alone,
  "I changed my mind";
- ``no`` or ``not`` before a command's own word: "no emails to Alice", "not
  email Alice" (but "add eggs, no milk" adds eggs);
- a clause after the command that takes it back by a pro-form, the whole
  clause: "don't do it", "you shouldn't", "we'd better not", "I don't think
  so", "that's not what I want", "or not", "that won't be necessary", and
  one that undoes it: "cancel that", "ignore my last message".

Adverbs say how firmly, never what: "definitely", "really", "just", "please",
and any other word in -ly (a capitalised one only where a sentence starts,
so a name is kept) are read through wherever they stand, so "definitely
don't", "you really shouldn't" and "I'd really rather you didn't" read as
their plain forms do.

A verb of not doing without a gerund after it ("Skip this song", "Stop the
timer") negates unless it is what the skill itself does ("skip to", as in
"Skip to the next song", moves on and never negates) (its words say so:
see :func:`~.evidence.skill_fits`): the gate decides that with the skill in
hand (:meth:`Negation.applies_to`).

What the request says rather than commands is never read as a negation: quoted
text ("Add 'don't forget the keys' to my todo list"), what follows the colon
after a command ("Add to my list: never skip breakfast"; after words that
are no command, "I told you twice: don't add milk", it is read), and negations inside
a clause, which belong to its content ("Remind me never to skip breakfast"
sets a reminder: its verb is "remind"). A double negation commands: "don't
forget to", "never fail to", "don't hesitate to". English only; in another
language nothing is read as a negation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Contractions and common misspellings written out, so each negation is matched in one form.
_WRITTEN_OUT = (
    (re.compile(r"\b(?:won'?t)\b"), "will not"),
    (re.compile(r"\b(?:can'?t|cannot)\b"), "can not"),
    (re.compile(r"\b(?:dont|dnt)\b"), "do not"),
    (re.compile(r"\b(doesn|didn|shouldn|mustn|needn|wouldn|isn|aren|haven|hasn)t\b"), r"\1 not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"\blet'?s\b"), "let us"),
    (re.compile(r"\b(i|we|you)'d\b"), r"\1 would"),
    (re.compile(r"\b(there|it|that)'s\b"), r"\1 is"),
    (re.compile(r"\b(you|we|they)'?re\b"), r"\1 are"),
    (re.compile(r"\bu\b"), "you"),
)
# Quoted text is what the request is about, not what it commands. A single quote opens after a space and closes
# before one; one inside a word ("don't") is an apostrophe.
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|(?<!\w)'(?:[^']|'(?=\w))*'(?!\w)|(?<!\w)‘(?:[^’]|’(?=\w))*’(?!\w)")
_CLAUSES = re.compile(
    r"[.;!?\n()]+|,|\s[-–—]+\s|[–—]"
    r"|\b(?:and|but|or|then|yet|so|though|although|however|instead)\b"
)
# Adverbs of how firmly or how politely something is said, read through wherever they stand (see the module);
# with them, any word in -ly but those of _NOT_ADVERBS. A comma between two goes with the first ("really, really").
_LISTED_ADVERBS = (
    r"pretty please|please|pls|plz|just|kindly|actually|really|seriously|honestly|truly|definitely|absolutely|certainly|surely"
    r"|simply|totally|completely|entirely|utterly|positively|literally|genuinely|frankly|basically|obviously|clearly"
    r"|strictly|sincerely|very much|very|even|ever|still|again|twice|once more|at all|whatsoever|maybe|perhaps"
    r"|probably|possibly|anyway|anyhow"
)
_ADVERB = rf"(?:{_LISTED_ADVERBS}|[a-z]{{3,}}ly)\b"
_ADVERBS = re.compile(rf"\b(?:(?:{_LISTED_ADVERBS})\b|(?P<ly>[a-z]{{3,}}ly)\b)(?:\s*,(?=\s*{_ADVERB}))?", re.I)
_NOT_ADVERBS = frozenset(
    "only family friendly unfriendly likely unlikely lovely lonely elderly costly deadly orderly daily weekly monthly "
    "yearly hourly nightly quarterly biweekly early assembly butterfly anomaly comply supply apply reply rely multiply "
    "monopoly italy july ally holy ugly silly jelly belly bully rally tally folly curly chilly timely lively".split()
)
_SENTENCE_ENDS = '.;:!?("“«'  # after one of these (or first), a capitalised word need be no name
_FILLERS = re.compile(
    r"^(?:(?:ok|okay|oh|well|wait|hmm+|um+|uh+|sorry|now|also|hey|hi|on second thoughts?|second thoughts?"
    r"|come to think of it|you know what|no,|i (?:said|told you|asked you|mean|meant|repeat)|do me a favou?r)"
    r"\b[\s,]*)+"
)
# A negation of not doing commands: "don't forget to", "I'd rather not forget it", "don't let me miss it".
_DOUBLE = re.compile(r"(?:\s+(?:you|to|let|me|us|it))*\s+(?:forget|fail|neglect|hesitate|omit|miss)\b")
# What a double negation commands, negated again: "don't forget to not email Bob" says not to email Bob (but see
# read_negation: "don't let me forget to never..." asks for a reminder).
_DOUBLE_NOT = re.compile(r"(?:\s+to)?\s+(?:not|never|do not)\b")
_NEGATED = re.compile(
    "|".join(
        (
            r"(?:do|does|did|will) not\b",
            r"never\b",
            r"nevermind\b",
            r"do nothing\b",
            r"(?:there is )?no need\b",
            r"(?:no|nope|nah)$",
            r"no (?:more )?\w+ing\b",
            r"not (?:now|yet|today|this time|anymore|any more)\b",
            r"you (?:do not|does not|should not|shall not|must not|need not|may not|will not|are not to"
            r"|are not supposed to|never)\b",
            r"(?:i|we) (?:do not|never|no longer) (?:want|need|wish)\b",
            r"(?:i|we) would (?:rather|prefer)(?: it)?(?: if| that)? (?:not|you (?:did not|do not|would not|not|never))\b",
            r"(?:can|could|would|will) you (?:please )?(?:not|never)\b",
            r"you are not (?:allowed|permitted|supposed|to)\b|(?:i )?forbid you\b",
            r"(?:it is )?(?:not necessary|unnecessary)\b|no reason to\b",
            r"not to\b",
            r"let us not\b",
            r"(?:under|in) no (?:circumstances?|case)\b|by no means\b|on no account\b",
            r"(?:(?:make|be) sure|remember|ensure|see to it|take care)(?: that)?(?: (?:you|to))? (?:do not|never|not)\b",
            r"(?:forget|scratch|ignore|disregard) (?:it|that|this|all that)$",
            r"(?:forget|never mind) about\b",
            r"(?:i (?:have )?)?changed my mind\b",
        )
    )
)
# A clause that takes the command before it back, whole: a negated auxiliary (its subject and a verb of wanting
# may come with it) and nothing after but a pro-form standing for the command ("don't do it", "we'd better not").
_PRO_FORM = r"(?:it|that|this|so|one|them|those|these|any of (?:it|that|this|them)|anything like that|such a thing)"
_WANTING = r"(?:want|wanted|need|wish|like|mean|meant|think|do|bother|go ahead|ask for|asked for|say|said)"
_RETRACTED = re.compile(
    r"(?:(?:i|we|you|it|that|this)(?: would| had)? )?(?:rather |better |best )?"
    r"(?:(?:do|does|did|will|would|should|shall|must|need|may|might|can|could|is|are|was|were) )?(?:not|never)"
    rf"(?: {_WANTING}(?: (?:you )?to(?: do)?)?)?(?: {_PRO_FORM})?"
    r"(?: (?:anymore|any more|either|after all|thanks|thank you))?"
    rf"|(?:(?:that|it|this) is (?:something|a thing) |which )(?:i|we) (?:(?:do|would|did) not|never) {_WANTING}"
    rf"(?: (?:you )?to(?: do)?)?|(?:that|it|this) is the last thing (?:i|we) {_WANTING}"
    r"|no (?:thanks|thank you)|(?:i am |i was )?(?:only )?(?:kidding|joking)|jk"
    r"|(?:(?:that|it|this) (?:is|will|would|should) )?not (?:be )?(?:what i (?:want|wanted|meant|asked for)|needed"
    r"|necessary|wanted|required|a good idea)"
)
# After the command, a clause that undoes what came before it: "Add milk. Cancel that", "ignore my last message".
_UNDONE = re.compile(
    r"(?:cancel|undo|drop|withdraw|retract|strike|scratch|forget|ignore|disregard) (?:that|this|all (?:of )?that"
    r"|everything|the above|(?:that|this|my|the) (?:last |previous )?(?:message|request|command|instruction)"
    r"|what i (?:just )?said)"
)
_NO_COMMAND = re.compile(r"(?:no|not)(?: more)? (\w+)")
NOT_DOING_VERBS = ("stop", "quit", "cease", "skip", "avoid", "refrain", "abstain", "hold off", "forget", "give up")
_NOT_DOING = re.compile(rf"({'|'.join(NOT_DOING_VERBS)})\b(?:\s+(?:from|on|about))?(?:\s+(\w+))?")
# Words in -ing that are things, not actions: "skip the morning meeting" names what to skip.
_NOT_GERUNDS = frozenset(
    "thing things something anything nothing everything morning evening meeting meetings building wedding ceiling "
    "spring string king ring sibling pudding darling during bring sing swing wing".split()
)
_COLON = re.compile(r"(?<!\d):|:(?!\d)")  # not the one in a time ("at 12:30")
_COLON_LABELS = 2  # a colon after at most this many words that are no command ("Important:") is a label


@dataclass(frozen=True)
class Negation:
    """What in a request says not to act: the ``words``, and ``verb`` when they are a verb of not doing with no
    gerund after it ("skip this song"), which negates only for a skill that does not do it."""

    words: str
    verb: str | None = None

    def applies_to(self, skill_does: bool) -> bool:
        """Whether the request is negated for a skill; ``skill_does``: the skill's own words name ``verb``."""
        return self.verb is None or not skill_does

    def __str__(self) -> str:
        return self.words


def read_negation(text: str, command_verbs: frozenset[str] = frozenset()) -> Negation | None:
    """The negation governing ``text``'s command, or None (see the module).

    ``command_verbs`` are words that start a command: before a colon, one of
    them makes what follows the colon the command's content, and after ``no``
    one of them is negated. A clause that negates outright wins over a verb of
    not doing in another ("Stop! Don't add that").
    """
    plain = _QUOTED.sub(" quoted ", text.replace("’", "'").replace("‘", "'"))
    plain = _adverbs_dropped(plain, command_verbs).lower()
    for pattern, written in _WRITTEN_OUT:
        plain = pattern.sub(written, plain)
    plain = _content_after_colon_dropped(plain, command_verbs)
    not_doing: Negation | None = None
    after_command = False  # a clause came before: one that undoes "that" takes the command back
    for clause in _CLAUSES.split(plain):
        clause = _FILLERS.sub("", " ".join(clause.split()))
        if not clause:
            continue
        found = (
            _NEGATED.match(clause)
            or _RETRACTED.fullmatch(clause)
            or (_UNDONE.fullmatch(clause) if after_command else None)
            or _no_command(clause, command_verbs)
        )
        after_command = True
        double = _DOUBLE.match(clause, found.end()) if found is not None else None
        if found is not None and double is None:
            return Negation(_with_next_word(clause, found.end()))
        # "don't let me forget to never call him" asks for a reminder: what follows is its content
        reminder = double is not None and " me " in f"{clause[: double.end()]} "
        negated_again = _DOUBLE_NOT.match(clause, double.end()) if double is not None and not reminder else None
        if negated_again is not None:
            return Negation(_with_next_word(clause, negated_again.end()))
        doing = _NOT_DOING.match(clause)
        if doing is not None and (doing.group(1), doing.group(2)) == ("skip", "to"):
            doing = None  # "skip to the next song", "skip to chapter 3": a move to what follows, nothing left undone
        if doing is not None and not_doing is None:
            verb, following = doing.group(1), doing.group(2)
            gerund = following is not None and following.endswith("ing") and following not in _NOT_GERUNDS
            not_doing = Negation(clause[: doing.end()], None if gerund else verb)
    return not_doing  # a verb of not doing, when no clause negates outright


def _no_command(clause: str, command_verbs: frozenset[str]) -> re.Match[str] | None:
    """ "No emails to Alice", "not email Alice": ``no`` or ``not`` before a command's word."""
    found = _NO_COMMAND.match(clause)
    if found is None:
        return None
    word = found.group(1)
    # the verb as said: "email", "emails", or "emailing" ("Would you mind not emailing Bob"), "scheduling", "putting"
    forms = {word, word[:-1]} if word.endswith("s") else {word}
    if word.endswith("ing"):
        forms |= {word[:-3], word[:-3] + "e", word[:-4]}
    return found if forms & command_verbs else None


def _adverbs_dropped(text: str, command_verbs: frozenset[str]) -> str:
    """``text`` without its adverbs (see the module): the listed ones, and words in -ly that are no command's word
    nor in :data:`_NOT_ADVERBS`, a capitalised one only where a sentence or clause starts (elsewhere it is a name)."""

    def dropped(found: re.Match[str]) -> str:
        word = found["ly"]
        if word is None:
            return " "
        lower = word.lower()
        name = word[0].isupper() and not _starts_sentence(text, found.start())
        return found[0] if lower in _NOT_ADVERBS or lower in command_verbs or name else " "

    return _ADVERBS.sub(dropped, text)


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` is the text's first, or follows the end of a sentence (see _SENTENCE_ENDS)."""
    before = at - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    return before < 0 or text[before] in _SENTENCE_ENDS


def _content_after_colon_dropped(text: str, command_verbs: frozenset[str]) -> str:
    """``text`` without what follows its first colon, when the clause before it is a command ("Tell Bob: don't
    come"); a short label before it ("Important: do not...") is dropped instead, and after other words that are
    no command ("I told you twice: don't add milk") both sides are read."""
    parts = _COLON.split(text, maxsplit=1)
    if len(parts) == 1:
        return text
    head, tail = parts
    last_clause = next((c for c in reversed(_CLAUSES.split(head)) if c.strip()), "")
    if command_verbs.intersection(last_clause.split()):
        return head
    if len(head.split()) <= _COLON_LABELS:
        return tail
    return f"{head}. {tail}"


def _with_next_word(clause: str, end: int) -> str:
    """The negating words and the word after them ("do not add"), to say what was read."""
    rest = clause[end:].split()
    return f"{clause[:end].strip()} {rest[0]}" if rest else clause[:end].strip()
