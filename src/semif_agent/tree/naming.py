"""Names and descriptions for categories, from what their skills share and their siblings do not.

A skill's candidate terms are the content words of its name (which say the
most) and of its description, and the two-word phrases among them ("pull
requests"); stop-words, skill boilerplate ("use when", "must"), vague verbs
and adverbs never are (:mod:`._words`). A term scores for a category by how
many of its skills use it (a name word counts three times a description word)
times the share of the term's uses, among the category and its siblings, that
fall in this category: a class-based TF-IDF. The best term names the
category; a second one joins it when it is nearly as good and covers other
skills (``debugging_testing``); two words the skills write as one phrase are
named as that phrase (``systematic_debugging``, ``pull_requests``). The
description says what the category holds, and names its most central
children::

    Skills for debugging and testing (bugs, tests): systematic-debugging, test-driven-development and 4 more.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..engine.lexical import stem
from ._shape import LeafSpec, Node
from ._words import is_content_word

if TYPE_CHECKING:
    from .._arrays import Vectors

NAME_WEIGHT = 3
MAX_WORDS = 3
LISTED = 3
CANDIDATES = 40
SECOND_SHARE = 0.75  # a second term scores at least this share of the first, and mostly covers other skills
NOVELTY = 0.5  # ... and at least this share of the skills using it do not use the first
RERANKED = 10  # candidates ranked again by meaning
SIBLING_WEIGHT = 0.5
PHRASE_SHARE = 0.75  # a phrase replaces its word when it scores this share of it
EXTRA_SHARE = 0.3  # the description's extra words score at least this share of the best
_SEGMENT = re.compile(r"[.,;:!?()\[\]{}<>\"'`|/\n\r\t]+|\s[-–—]\s")
_WORD = re.compile(r"[a-z][a-z0-9]*(?:'[a-z]+)?")
_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

Ranked = list[tuple[float, str]]


class Namer:
    """Names categories of one tree, never as anything in ``reserved`` nor as another category in ``in_use``."""

    def __init__(
        self,
        skills: dict[str, LeafSpec],
        centre: Callable[[Node | str], Vectors],
        reserved: set[str],
        in_use: Iterable[str] = (),
        embed: Callable[[Sequence[str]], Vectors] | None = None,
    ):
        self.skills = skills
        self.centre = centre  # unit vector of a category (its leaves' centroid) or of a skill
        self.embed = embed
        self._term_vectors: dict[str, Vectors] = {}
        self.reserved = reserved
        self.in_use = set(in_use)
        self._terms: dict[str, dict[str, int]] = {}
        self._surfaces: dict[str, Counter[str]] = {}
        self._bags: dict[Node, tuple[int, Counter[str], Counter[str]]] = {}
        self._ranked: dict[Node, Ranked] = {}
        self._words: dict[Node, list[list[str]]] = {}  # the terms of each name given

    def name_all(self, root: Node, progress: Callable[[int, int], None] | None = None) -> None:
        """Name every category under ``root`` (top down), then describe each."""
        parents = {node: parent or root for node, parent, _ in root.walk()}
        self.name(list(parents), parents, progress)
        for node, parent in parents.items():
            self.describe(node, parent)

    def name(
        self, nodes: list[Node], parents: dict[Node, Node], progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Name ``nodes`` (parents before children), each against its siblings."""
        wanted = set(nodes)
        plain: dict[Node, Ranked] = {}
        for done, node in enumerate(nodes, start=1):
            parent = parents[node]
            if node not in plain:
                population = self.population(parent)
                batch = {child: self.ranked(child, population) for child in parent.children if child in wanted}
                self._embed_candidates(batch.values())
                plain.update(batch)
            self.in_use.discard(node.name)
            ranked = self._ranked[node] = self.reranked(node, parent, plain.pop(node))
            node.name = self._unique(node, ranked)
            if progress is not None:
                progress(done, len(nodes))

    def describe(self, node: Node, parent: Node) -> None:
        """Describe ``node`` in one sentence: what it holds, and its most central children (named by then)."""
        ranked = self._ranked.get(node)
        if ranked is None:
            ranked = self.ranked(node, self.population(parent))
            self._embed_candidates([ranked])
            ranked = self._ranked[node] = self.reranked(node, parent, ranked)
        words = self._words.get(node) or self.words(node, ranked)
        topic = " and ".join(" ".join(w) for w in words) if words else node.name.replace("_", " ")
        named = {w for term in words for w in term}
        best = ranked[0][0] if ranked else 0.0
        extra: list[str] = []
        for score, term in ranked[1:12]:
            surface = self.surface(term)
            if len(extra) < 3 and score >= EXTRA_SHARE * best and named.isdisjoint(surface):
                extra.append(" ".join(surface))
                named.update(surface)
        listed = self.central(node)
        more = node.size - len(listed)
        if more:
            listing = f"{', '.join(listed)} and {more} more"
        else:
            listing = " and ".join([", ".join(listed[:-1]), listed[-1]]) if len(listed) > 1 else listed[0]
        node.description = f"Skills for {topic}" + (f" ({', '.join(extra)})" if extra else "") + f": {listing}."

    def population(self, parent: Node) -> Counter[str]:
        """How many skills among ``parent``'s children (its categories and its own skills) use each term."""
        population: Counter[str] = Counter()
        for child in parent.children:
            population.update(self.bag(child)[1])
        for leaf in parent.skills:
            population.update(self.terms(leaf).keys())
        return population

    def terms(self, leaf: str) -> dict[str, int]:
        """A skill's terms (word stems, and two-word phrases as ``"stem stem"``) and their weights."""
        found = self._terms.get(leaf)
        if found is None:
            skill = self.skills[leaf]
            found = {}
            for weight, segments in ((NAME_WEIGHT, [_name_words(skill)]), (1, _segments(skill.description))):
                for words in segments:
                    for term, surface in _terms_of(words):
                        found[term] = max(found.get(term, 0), weight)
                        self._surfaces.setdefault(term, Counter())[surface] += weight
            self._terms[leaf] = found
        return found

    def bag(self, node: Node) -> tuple[int, Counter[str], Counter[str]]:
        """Skills under ``node``, how many of them use each term, and the terms' summed weights."""
        found = self._bags.get(node)
        if found is None:
            size, df, weight = len(node.skills), Counter[str](), Counter[str]()
            for leaf in node.skills:
                terms = self.terms(leaf)
                df.update(terms.keys())
                weight.update(terms)
            for child in node.children:
                child_size, child_df, child_weight = self.bag(child)
                size += child_size
                df.update(child_df)
                weight.update(child_weight)
            found = self._bags[node] = (size, df, weight)
        return found

    def ranked(self, node: Node, population: Counter[str]) -> Ranked:
        """``node``'s candidate terms, best first: (score, term). Terms used by one skill only count in tiny groups."""
        size, df, weight = self.bag(node)
        shared = 2 if size >= 3 else 1
        scored = []
        for term, count in df.items():
            if count >= shared:
                coverage = weight[term] / (size * NAME_WEIGHT)
                share = count / max(population[term], count)
                scored.append((coverage * share**0.5, term))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return _prefer_phrases(scored[:CANDIDATES])

    def reranked(self, node: Node, parent: Node, ranked: Ranked) -> Ranked:
        """The best candidates again, by meaning: near the category's centre and far from its siblings'.

        Each candidate's score becomes its cosine to the category's centroid
        less half its highest cosine to a sibling's (as KeyBERT ranks keywords).
        """
        if self.embed is None or not ranked:
            return ranked
        import numpy as np

        top = ranked[:RERANKED]
        vectors = np.stack([self._term_vectors[" ".join(self.surface(term))] for _, term in top])
        own = vectors @ self.centre(node)
        siblings = [self.centre(c) for c in parent.children if c is not node]
        nearest = (vectors @ np.stack(siblings).T).max(axis=1) if siblings else np.zeros(len(top))
        scores = own - SIBLING_WEIGHT * nearest
        order = sorted(range(len(top)), key=lambda i: (-float(scores[i]), top[i][1]))
        return [(float(scores[i]), top[i][1]) for i in order]

    def _embed_candidates(self, candidates: Iterable[Ranked]) -> None:
        """Embed the best candidate terms not embedded yet, in one go."""
        if self.embed is None:
            return
        from ._vectors import embed_texts

        wanted = {" ".join(self.surface(t)) for ranked in candidates for _, t in ranked[:RERANKED]}
        missing = sorted(wanted - self._term_vectors.keys())
        if missing:
            self._term_vectors.update(zip(missing, embed_texts(missing, self.embed)))

    def words(self, node: Node, ranked: Ranked, skip: int = 0) -> list[list[str]]:
        """The terms a name is made of (each a list of surface words), at most ``MAX_WORDS`` words."""
        if len(ranked) <= skip:
            return []
        best, first = ranked[skip]
        chosen = [first]
        df = self.bag(node)[1]
        first_stems = first.split()
        for score, term in ranked[skip + 1 : skip + 8]:
            if not _compatible(first, term):
                continue
            if " " not in term and len(first_stems) == 1:
                phrase = max((f"{first} {term}", f"{term} {first}"), key=lambda p: df.get(p, 0))
                if df.get(phrase, 0) >= max(2, SECOND_SHARE * df[first]):
                    chosen = [phrase]
                    break
            if score >= SECOND_SHARE * best and self._novelty(node, first, term) >= NOVELTY:
                chosen.append(term)
                break
        return [self.surface(term) for term in chosen]

    def surface(self, term: str) -> list[str]:
        """The words the skills actually write for ``term`` (``debugg`` -> ``debugging``)."""
        seen = self._surfaces.get(term)
        return (seen.most_common(1)[0][0] if seen else term).split()

    def central(self, node: Node) -> list[str]:
        """Up to ``LISTED`` direct children nearest the category's centre, as a person reads them."""
        centre = self.centre(node)
        entries: list[tuple[float, str]] = []
        for child in node.children:
            entries.append((float(self.centre(child) @ centre), child.name.replace("_", " ")))
        for leaf in node.skills:
            entries.append((float(self.centre(leaf) @ centre), self.skills[leaf].skill_name or leaf))
        entries.sort(key=lambda pair: (-pair[0], pair[1]))
        return [label for _, label in entries[:LISTED]]

    def _central_name(self, node: Node) -> list[str]:
        """The content words of the name of the skill nearest the category's centre (at most ``MAX_WORDS``)."""
        centre = self.centre(node)
        leaf = max(node.leaves(), key=lambda name: (float(self.centre(name) @ centre), name), default=None)
        words = [w for w in _name_words(self.skills[leaf]) if is_content_word(w)] if leaf else []
        return words[:MAX_WORDS]

    def _novelty(self, node: Node, first: str, second: str) -> float:
        """The share of the skills using ``second`` that do not use ``first``."""
        using = [leaf for leaf in node.leaves() if second in self.terms(leaf)]
        return sum(first not in self.terms(leaf) for leaf in using) / len(using) if using else 0.0

    def _unique(self, node: Node, ranked: Ranked) -> str:
        """The best name no other category has: the chosen words, the best term with another, the next choices, a number."""
        options = [self.words(node, ranked)]
        if ranked:
            first = ranked[0][1]
            for _, term in ranked[1:8]:
                if _compatible(first, term):
                    options.append([self.surface(first), self.surface(term)])
        options += [self.words(node, ranked, skip) for skip in range(1, min(6, len(ranked)))]
        options.append([self._central_name(node)])
        options = [option for option in options if option and all(option)] or [[["skills"]]]
        names = ["_".join(w for term in option for w in term) for option in options]

        def free(option: str) -> bool:
            return option not in self.reserved and option not in self.in_use

        chosen = next((i for i, option in enumerate(names) if free(option)), None)
        if chosen is None:
            number = 2
            while not free(f"{names[0]}_{number}"):
                number += 1
            name, self._words[node] = f"{names[0]}_{number}", options[0]
        else:
            name, self._words[node] = names[chosen], options[chosen]
        self.in_use.add(name)
        return name


def _name_words(skill: LeafSpec) -> list[str]:
    name = (skill.skill_name or skill.name).split("~")[0]
    return [part.lower() for part in _NAME_PART.findall(name)]


def _segments(text: str) -> list[list[str]]:
    return [_WORD.findall(segment) for segment in _SEGMENT.split(text.lower())]


def _terms_of(words: list[str]) -> Iterable[tuple[str, str]]:
    """(term, surface) for every content word, and every pair of adjacent content words."""
    previous: tuple[str, str] | None = None
    for word in words:
        word = word.split("'")[0]
        if not is_content_word(word):
            previous = None
            continue
        term = stem(word)
        yield term, word
        if previous is not None and previous[0] != term:
            yield f"{previous[0]} {term}", f"{previous[1]} {word}"
        previous = (term, word)


def _prefer_phrases(scored: Ranked) -> Ranked:
    """A phrase takes the place of one of its words when it scores nearly as well."""
    out: Ranked = []
    placed: set[str] = set()
    for score, term in scored:
        if " " not in term:
            phrase = next(
                (p for p in scored if " " in p[1] and term in p[1].split() and p[0] >= PHRASE_SHARE * score), None
            )
            if phrase is not None:
                score, term = phrase
        if term not in placed:
            placed.add(term)
            out.append((score, term))
    return out


def _compatible(first: str, second: str) -> bool:
    """Whether two terms make one name: no shared or near word, at most ``MAX_WORDS`` words."""
    a, b = first.split(), second.split()
    return len(a) + len(b) <= MAX_WORDS and not any(x == y or _near(x, y) for x in a for y in b)


def _near(a: str, b: str) -> bool:
    """Two stems of one word (``test``/``testing``)."""
    short, long = sorted((a, b), key=len)
    return len(short) >= 4 and long.startswith(short)
