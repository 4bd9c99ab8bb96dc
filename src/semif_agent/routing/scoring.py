"""Score every leaf of a tree against a request at once, for the leaf-aware strategies.

With the local engine, leaves are embedded once per tree (and cached on disk
by the engine), so scoring a request against a thousand leaves is one
embedding and one matrix product. A leaf's example requests, when it has
some, can stand in for it: nearest neighbour (the best example or the
description) or centroid (the mean of the description and the examples).

With the local engine the cosine is blended with BM25 over the same texts
(``lexical_weight``): the embedding catches paraphrases, the keywords catch
what a small model misses ("todo:", "make a note"). The keywords only re-rank
the leaves whose cosine is near the best one (see :func:`.calibration.blend`),
so a clear cosine winner stays the winner. With the ``lexical`` engine BM25
alone scores; any other engine that can score options is used as it is.

How much BM25 is blended, and the temperature that turns the scores into
probabilities, are fitted once per version of the tree from its skills'
example requests held out (:mod:`.calibration`), unless given.

Everything that depends only on the tree (the leaves' vectors, their BM25
postings, what each decision offers and which leaves stand behind each
option) is built once per version of the tree, in a :class:`LeafIndex`, and
rebuilt when its skills or categories change. A request then costs a few numpy
operations; without numpy (the ``lexical`` engine on an install without the
``local`` extra) the same scores come from plain lists.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import re
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

from ..engine.base import Engine, check_engine
from ..engine.decisions import Option
from ..engine.lexical import LexicalEngine
from ..engine.local import Embedder, LocalEngine, leaf_text, option_text
from ..errors import EngineConfigError, check_type
from ..tree.manifests import SkillManifest
from ..tree.skill_md_evidence import BodyEvidence, skill_md_evidence
from ..tree.tree import SkillTree
from ._bm25 import BM25Index
from ._kept_calibration import calibration_key, keep, read_kept
from ._nodes import NodeTable
from .calibration import (
    DEFAULT_LEXICAL_WEIGHT,
    FIND_LEXICAL_WEIGHT,
    LEXICAL_WEIGHTS,
    ZERO_SHOT_NONE,
    Calibration,
    blend,
    enough_examples,
    fit_calibration,
    fuse,
    zero_shot,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._arrays import Indexes, Scores, Vectors

EXAMPLE_MODES = ("off", "nn", "centroid")
__all__ = [
    "DEFAULT_LEXICAL_WEIGHT",
    "LeafIndex",
    "LeafScorer",
    "can_score",
    "example_centroids",
    "leaf_text",
    "top_indexes",
]
# The default ``none`` threshold for blended scores (they run higher than bare
# cosines): what `semif eval --tune` picked on the validation half of the
# starter workspace's request set. Tune your own tree with `semif eval --tune`.
BLENDED_THRESHOLD = 0.35
# Rows per matrix-vector product. BLAS libraries split larger products across
# threads (OpenBLAS from about 1,200 rows of 384), which saves tens of
# microseconds on an idle machine and costs milliseconds whenever another
# process holds a core; one thread per block keeps a request's cost steady.
BLOCK_ROWS = 1024
_WORDS = re.compile(r"[a-z0-9]+")


class ScoringEngine(Engine, Protocol):
    """An engine that can score options without choosing one (the local and lexical engines can)."""

    def score(self, state: str, options: list[Option]) -> dict[str, float]: ...


def can_score(engine: Engine) -> TypeGuard[ScoringEngine]:
    """Whether ``engine`` scores options (has a ``score(state, options)``)."""
    return callable(getattr(engine, "score", None))


class LeafIndex:
    """One version of a tree, ready to score: its leaves in order, their vectors and postings, its decisions.

    ``numpy`` is the numpy module, or ``None`` when it cannot be imported
    (then scores are lists).
    """

    def __init__(self, tree: SkillTree, key: tuple, numpy: Any) -> None:
        self.key = key
        self.names: list[str] = [s.name for s in key[0]]
        self.position = {name: i for i, name in enumerate(self.names)}
        self.numpy = numpy
        self.vectors: Any = None  # a row per leaf, or per description and example ("nn")
        self.blocks: list[tuple[int, int]] = []  # row ranges of the vectors, multiplied one at a time
        self.row_starts: Any = None  # "nn": each leaf's first row (its rows are consecutive)
        self.use_vectors: Any = None  # a row per SKILL.md "when to use" text, None when no leaf has one
        self.use_owners: Any = None  # the leaf of each of those rows
        self.keywords: BM25Index | None = None
        self.options: list[Option] = []  # for an engine that scores options as they are
        self.calibration: Calibration | None = None  # fitted on first use (LeafScorer.calibration)
        self.words_per_leaf = 0.0  # the mean number of words a leaf is embedded as (how terse the tree is)
        self.text_digest = ""  # a digest of every leaf's indexed words, evidence included (what a calibration read)
        self._tree = tree
        self._nodes: dict[str, NodeTable] = {}
        self._copy_of: list[int] | None = None
        self._copies: dict[int, list[int]] = {}

    def copy_groups(self) -> dict[int, list[int]]:
        """The leaves that are one skill shipped several times, by the position of the first of them: the same
        name as their SKILL.md writes it and the same description (whitespace and case aside). Built on first use."""
        if self._copy_of is None:
            first: dict[tuple[str, str], int] = {}
            self._copy_of = []
            for i, skill in enumerate(self.key[0]):
                key = ((skill.source_name or skill.name).lower(), " ".join(skill.description.lower().split()))
                self._copy_of.append(first.setdefault(key, i))
            for i, group in enumerate(self._copy_of):
                if group != i:
                    self._copies.setdefault(group, [group]).append(i)
        return self._copies

    def copy_of(self, position: int) -> int:
        """The position of the first leaf that is the same skill as the leaf at ``position`` (itself, if none)."""
        self.copy_groups()
        assert self._copy_of is not None
        return self._copy_of[position]

    def cosines(self, query: Any) -> Any:
        """Each leaf's cosine to the unit vector ``query``: its row's, or the best of its rows ("nn"), or of its
        SKILL.md's "when to use" items when they are nearer (:mod:`~semif_agent.tree.skill_md_evidence`)."""
        np = self.numpy
        sims = np.empty(len(self.vectors), dtype=self.vectors.dtype)
        for start, end in self.blocks:
            np.matmul(self.vectors[start:end], query, out=sims[start:end])
        leaves = sims if self.row_starts is None else np.maximum.reduceat(sims, self.row_starts)
        if self.use_vectors is not None:
            np.maximum.at(leaves, self.use_owners, self.use_vectors @ query)
        return leaves

    def node(self, name: str) -> NodeTable:
        """What the decision at ``name`` offers (``""``: the top), built on first use."""
        table = self._nodes.get(name)
        if table is None:
            table = self._nodes[name] = NodeTable(self._tree, name, self.position, self.numpy)
        return table


class LeafScorer:
    """Every skill of ``tree`` scored against a request.

    ``scores(text)`` -> {leaf name: score}; ``score_array(text)`` the same
    scores in ``names`` order (a numpy array, or a list without numpy);
    ``top(text, k)`` the ``k`` best leaves, best first; ``find(text, k)``
    the ``k`` to offer a client choosing among them (ranked by BM25 and the
    cosine fused over every leaf, which finds real skills best).
    """

    def __init__(
        self,
        tree: SkillTree,
        engine: Engine,
        *,
        examples: str = "off",
        lexical_weight: float | None = None,
    ) -> None:
        check_type("the tree", tree, SkillTree)
        check_engine(engine)
        if examples not in EXAMPLE_MODES:
            raise EngineConfigError(f"examples must be one of {', '.join(EXAMPLE_MODES)}, not {examples!r}")
        if not can_score(engine):
            raise EngineConfigError(f"engine {engine.name!r} cannot score options; leaf scoring needs local or lexical")
        self.tree = tree
        self.engine = engine
        self.examples = examples
        # None: fitted with the temperature from the tree's examples (see calibration())
        self.lexical_weight = lexical_weight if isinstance(engine, LocalEngine) else 0.0
        self._blend = LexicalEngine()  # the BM25 parameters blended with the cosine
        self._index: LeafIndex | None = None

    @property
    def embedded(self) -> bool:
        return isinstance(self.engine, LocalEngine)

    @property
    def embedder(self) -> Embedder:
        """The local engine's embedder: only an :attr:`embedded` scorer has one."""
        if not isinstance(self.engine, LocalEngine):
            raise EngineConfigError(f"engine {self.engine.name!r} has no embeddings; this needs the local engine")
        return self.engine.embedder

    @property
    def default_threshold(self) -> float:
        """Where ``none`` starts when no threshold was tuned: fitted with the tree's calibration when it has
        enough examples (:mod:`.calibration`), else the engine's own, or the blended one."""
        fitted = self.calibration(self.current()).none_threshold
        if fitted is not None:
            return fitted
        return self._engine_threshold(bool(self.embedded and self._weight(self.current())))

    def _engine_threshold(self, blended: bool) -> float:
        return BLENDED_THRESHOLD if blended else float(getattr(self.engine, "threshold", 0.0))

    @property
    def names(self) -> list[str]:
        """The leaves, in the order of :meth:`score_array`."""
        return self.current().names

    def current(self) -> LeafIndex:
        """The index of the tree as it is now: rebuilt when a skill or category was added, removed or replaced."""
        key = (tuple(self.tree.skills.values()), tuple(self.tree.categories.values()))
        index = self._index
        if index is None or index.key != key:
            index = self._index = self._build(key)
        return index

    def calibration(self, index: LeafIndex | None = None) -> Calibration:
        """The blend and temperature of ``index`` (default: the current one), fitted on first use and kept with it."""
        index = index or self.current()
        if index.calibration is None:
            store = self.embedder.store if self.embedded else None
            key = calibration_key(
                index.key,
                index.text_digest,
                self.tree.none_examples,
                self.examples,
                self.lexical_weight,
                type(self.engine).__name__,
                getattr(self.engine, "threshold", None),
                getattr(self.engine, "temperature", None),
                self.engine.model if self.embedded else None,
            )
            index.calibration = read_kept(store, key)
            if index.calibration is None:
                index.calibration = self._calibrate(index)
                keep(store, key, index.calibration)
        return index.calibration

    def score_array(self, text: str, index: LeafIndex | None = None, *, vector: Any = None) -> Any:
        """Every leaf's score for ``text``, in ``index.names`` order (default: the current index); ``vector``:
        ``text``'s embedding, when the caller has it already."""
        index = index or self.current()
        np = index.numpy
        if not index.names:
            return np.zeros(0) if np is not None else []
        if self.embedded:
            cosines = index.cosines(self.embedder.embed([text])[0] if vector is None else vector).astype(np.float64)
            if index.keywords is None:
                return cosines
            return blend(cosines, index.keywords.scores(text), self._weight(index), np)
        return self._unblended(text, index)

    def find_array(self, text: str, index: LeafIndex | None = None) -> Any:
        """Every leaf's score for ranking a shortlist of skills to choose from (a client's ``find``).

        With the local engine, the cosine and BM25 fused over every leaf
        (:func:`.calibration.fuse`), in cosine units; otherwise
        :meth:`score_array`'s scores.
        """
        index = index or self.current()
        if not (self.embedded and index.names and index.keywords is not None):
            return self.score_array(text, index)
        cosines = index.cosines(self.embedder.embed([text])[0]).astype(index.numpy.float64)
        return fuse(cosines, index.keywords.scores(text), FIND_LEXICAL_WEIGHT, index.numpy)

    def find(self, text: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` leaves to offer for ``text``, best first, by :meth:`find_array` (ties: the tree's order)."""
        index = self.current()
        values = self.find_array(text, index)
        return [(index.names[i], float(values[i])) for i in top_indexes(values, k, index.numpy)]

    def _weight(self, index: LeafIndex) -> float:
        return self.lexical_weight if self.lexical_weight is not None else self.calibration(index).lexical_weight

    def _unblended(self, text: str, index: LeafIndex) -> Any:
        """The scores of an engine that does not embed: BM25 over the leaves, or the engine's own."""
        np = index.numpy
        if index.keywords is not None:
            return index.keywords.scores(text)
        scored = self.engine.score(text, index.options)
        values = [float(scored.get(name, 0.0)) for name in index.names]
        return np.array(values, dtype=np.float64) if np is not None else values

    def scores(self, text: str) -> dict[str, float]:
        index = self.current()
        values = self.score_array(text, index)
        return dict(zip(index.names, values.tolist() if index.numpy is not None else values))

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best leaves for ``text`` with their scores, best first (ties: the tree's order)."""
        index = self.current()
        values = self.score_array(text, index)
        return [(index.names[i], float(values[i])) for i in top_indexes(values, k, index.numpy)]

    def _calibrate(self, index: LeafIndex) -> Calibration:
        """Fit the blend and temperature on the tree's examples, each scored with its own example left out.

        Without enough examples: the engine's temperature (an engine that does
        not embed), else the scale-free :func:`.calibration.zero_shot`.

        Skills' examples stand as the held-out requests; when the leaves are
        made of their examples too, fold ``j`` leaves out each skill's ``j``-th
        example and scores them on the tree rebuilt without them.
        """
        skills: tuple[SkillManifest, ...] = index.key[0]
        np = index.numpy
        engine_temperature = getattr(self.engine, "temperature", None)
        fixed = Calibration(
            temperature=engine_temperature if not self.embedded and engine_temperature else Calibration.temperature,
            lexical_weight=DEFAULT_LEXICAL_WEIGHT if self.lexical_weight is None else self.lexical_weight,
        )
        if np is None or not enough_examples([len(s.examples) for s in skills]):
            if not self.embedded:
                return fixed
            blended = bool(fixed.lexical_weight)
            return zero_shot(len(skills), fixed.lexical_weight, ZERO_SHOT_NONE if blended else None)
        if self.examples == "off":
            folds = [(index, [(i, e) for i, s in enumerate(skills) for e in s.examples])]
        else:
            folds = []
            for j in range(max(len(s.examples) for s in skills)):
                held = [(i, s.examples[j]) for i, s in enumerate(skills) if j < len(s.examples)]
                rest = tuple(
                    dataclasses.replace(s, examples=s.examples[:j] + s.examples[j + 1 :]) if j < len(s.examples) else s
                    for s in skills
                )
                folds.append((self._build((rest, index.key[1])), held))
        cosines: list[Scores] = []
        keywords: list[Scores] = []
        targets: list[int] = []
        for fold, held in folds:
            targets.extend(i for i, _ in held)
            self._held_out_scores(fold, [e for _, e in held], cosines, keywords)
        none_cosines: list[Scores] = []
        none_keywords: list[Scores] = []
        self._held_out_scores(index, list(self.tree.none_examples), none_cosines, none_keywords)
        weight = self.lexical_weight
        return fit_calibration(
            np.stack(cosines),
            np.stack(keywords) if keywords else None,
            np.array(targets),
            lambda blended: self._engine_threshold(bool(self.embedded and blended)),
            np,
            weights=LEXICAL_WEIGHTS if weight is None else (weight,),
            none_rows=(np.stack(none_cosines), np.stack(none_keywords) if none_keywords else None)
            if none_cosines
            else None,
        )

    def _held_out_scores(
        self, fold: LeafIndex, texts: list[str], cosines: list[Scores], keywords: list[Scores]
    ) -> None:
        """Append each text's cosines (and BM25 scores, when ``fold`` has them) against ``fold``'s leaves."""
        if not texts:
            return
        np = fold.numpy
        if self.embedded:
            cosines.extend(fold.cosines(q).astype(np.float64) for q in self.embedder.embed(texts))
            if fold.keywords is not None:
                keywords.extend(fold.keywords.scores(t) for t in texts)
        else:
            cosines.extend(np.asarray(self._unblended(t, fold), dtype=np.float64) for t in texts)

    def _build(self, key: tuple) -> LeafIndex:
        np = _numpy()
        index = LeafIndex(self.tree, key, np)
        skills: tuple[SkillManifest, ...] = key[0]
        evidence = [skill_md_evidence(s.source) if s.is_skill_md and s.source else BodyEvidence() for s in skills]
        documents = [
            " ".join([s.name, _with_examples(s.description, s.examples, self.examples), *e.headings, *e.uses])
            for s, e in zip(skills, evidence)
        ]
        index.text_digest = hashlib.sha256("\0".join(documents).encode("utf-8", "surrogatepass")).hexdigest()
        if skills:
            words = (len(_WORDS.findall(leaf_text(s.name, s.description).lower())) for s in skills)
            index.words_per_leaf = sum(words) / len(skills)
        if self.embedded:
            if skills:
                index.vectors, index.row_starts = self._embed(skills)
                rows = len(index.vectors)
                index.blocks = [(start, min(start + BLOCK_ROWS, rows)) for start in range(0, rows, BLOCK_ROWS)]
                owners = [i for i, e in enumerate(evidence) if e.uses]
                if owners:
                    uses = [option_text(skills[i].name, ". ".join(evidence[i].uses)) for i in owners]
                    index.use_vectors = self.embedder.embed(uses)
                    index.use_owners = np.array(owners, dtype=np.intp)
            if self.lexical_weight != 0.0:
                index.keywords = BM25Index(documents, k1=self._blend.k1, b=self._blend.b, numpy=np)
        elif isinstance(self.engine, LexicalEngine) and type(self.engine)._score is LexicalEngine._score:
            index.keywords = BM25Index(documents, k1=self.engine.k1, b=self.engine.b, numpy=np)
        else:
            index.options = [Option(s.name, _with_examples(s.description, s.examples, self.examples)) for s in skills]
        return index

    def _embed(self, skills: tuple[SkillManifest, ...]) -> tuple[Vectors, Indexes | None]:
        """Rows to compare with (descriptions, plus examples or centroids), and where each leaf's rows start."""
        np = _numpy()
        texts = [leaf_text(s.name, s.description) for s in skills]
        embed = self.embedder.embed
        examples = [(i, e) for i, s in enumerate(skills) for e in s.examples]
        if self.examples == "off" or not examples:
            return embed(texts), None
        rows = embed(texts + [e for _, e in examples])
        if self.examples == "centroid":
            owners = np.array([i for i, _ in examples], dtype=np.intp)
            return example_centroids(rows[: len(skills)], rows[len(skills) :], owners, np)[0], None
        # nearest neighbour: each leaf's description row, then its examples' rows
        order: list[int] = []
        starts: list[int] = []
        example_rows: dict[int, list[int]] = {}
        for j, (i, _) in enumerate(examples):
            example_rows.setdefault(i, []).append(len(skills) + j)
        for i in range(len(skills)):
            starts.append(len(order))
            order.append(i)
            order.extend(example_rows.get(i, ()))
        return rows[np.array(order, dtype=np.intp)], np.array(starts, dtype=np.intp)


def example_centroids(
    descriptions: Vectors, examples: Vectors, owners: Indexes, numpy: ModuleType
) -> tuple[Vectors, Vectors]:
    """Each leaf's centroid, of length 1, and the sum it is the direction of: its description's row plus the rows of
    its examples (``examples[j]`` is of leaf ``owners[j]``).

    The sum is scaled back to length 1, so a request scores a centroid by
    the cosine. The mean, unscaled, was measured as well: the starter's code
    skills, whose many everyday examples lean on what all embeddings share,
    came into find's first three for 2 of 72 requests written for real
    SKILL.md skills instead of 18, but the starter's own requests lost their
    skill to SKILL.md skills beside it (of 69 everyday requests, 16 acted on
    wrongly instead of 5 and 18 handed back instead of 3), and alone it routed
    48 of 55 of its requests right instead of 52.
    """
    np = numpy
    sums = np.array(descriptions, copy=True)
    np.add.at(sums, owners, examples)
    return sums / np.linalg.norm(sums, axis=1, keepdims=True), sums


def top_indexes(values: Scores | Sequence[float], k: int, numpy: ModuleType | None = None) -> list[int]:
    """The indexes of the ``k`` largest ``values``, largest first; ties keep the lower index first."""
    size = len(values)
    k = min(k, size)
    if k <= 0:
        return []
    if numpy is None:
        return heapq.nsmallest(k, range(size), key=lambda i: -values[i])
    if k < size:
        kth = numpy.partition(values, size - k)[size - k]
        candidates = numpy.flatnonzero(values >= kth)
    else:
        candidates = numpy.arange(size)
    ranked = candidates[numpy.argsort(-values[candidates], kind="stable")]
    return ranked[:k].tolist()


def _with_examples(description: str, examples: tuple[str, ...], mode: str) -> str:
    return description if mode == "off" or not examples else f"{description} {' '.join(examples)}"


def _numpy() -> Any:
    """The numpy module, or ``None`` when it is not installed."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy
