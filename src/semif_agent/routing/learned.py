"""The learned router: the tree's decisions answered from what the workspace has been taught.

``semif train`` (:mod:`.training`) fits a :class:`LearnedHead` and stores it
in the workspace (``data/router.json`` says what it was trained on, and when;
``data/router.npz`` holds its weights). It scores every leaf of the tree as
logits over the embedded request: for each skill it learned, its own weights
on the untrained score (see :mod:`._head`); for a skill it never saw (added
since, or never in the data), the untrained score alone, with the average
bias of the skills it learned, so nothing is guessed. ``none`` scores a
logit of its own: learned from requests labelled ``none``, or a threshold
set on held-out in-scope requests.
The requests people labelled are kept (their embeddings, ``labelled``),
each with its pull toward its label (``pulls``): a request near a labelled
one leans where the label says, by what the fit found the label needed.

Decisions stay SemIf decisions: :class:`Learned` walks the tree like
``best_leaf`` (at most 16 options with ``none`` per decision, a category
scored by its best leaf), with the probabilities of the temperature fitted on
held-out data.

A router is refused (:meth:`LearnedHead.check`) when it was trained with
another embedding model, or when most of the skills it learned are gone from
the tree.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import replace_file
from .._text import plural
from ..engine.local import LocalEngine
from ..errors import EngineConfigError, UserError
from ..tree.tree import SkillTree
from ..workspace import Workspace
from .scoring import LeafIndex, LeafScorer
from .strategies import BestLeaf, as_one_skill

if TYPE_CHECKING:  # numpy is imported on first use, so loading the package stays fast
    import numpy as np

    from ..engine.base import Engine
    from ._head import Vocabulary

ROUTER_FILE = "router.json"
WEIGHTS_FILE = "router.npz"
VERSION = 1
MIN_COVERAGE = 0.5  # at least this share of the skills it learned must still be in the tree


class RouterMismatch(UserError):
    """The stored router does not fit the tree (or the engine) it is asked to route."""


@dataclass
class LearnedHead:
    """The learned head: weights per learned class (embedding and words), how ``none`` is scored, the temperature,
    what it learned from."""

    classes: list[str]  # the skills it learned (rows of ``w`` and ``v``)
    w: np.ndarray  # (classes, d)
    v: np.ndarray  # (classes, words)
    b: np.ndarray  # (classes,)
    beta: float
    none_w: np.ndarray  # (d,) when ``none`` was learned, else zeros
    none_v: np.ndarray  # (words,)
    none_b: float
    none_prior: float  # the untrained threshold, the prior score of ``none``
    temperature: float
    vocabulary: Vocabulary
    meta: dict[str, Any] = field(default_factory=dict)
    labelled: Any = None  # (labels, d): the embeddings of the requests people labelled with a skill or none
    pulls: Any = None  # (classes + 1, labels): each label's pull on each class and (last) on ``none`` (see ._head)

    def __post_init__(self) -> None:
        import numpy as np

        if self.labelled is None:
            self.labelled = np.zeros((0, self.none_w.shape[0]), dtype=np.float32)
            self.pulls = np.zeros((len(self.classes) + 1, 0))

    @property
    def unseen_bias(self) -> float:
        """The bias of a skill the router never learned: the average of those it did."""
        return float(self.b.mean()) if len(self.b) else 0.0

    def check(self, tree: SkillTree, engine: Engine) -> None:
        """Raise :class:`RouterMismatch` when this router cannot route ``tree`` with ``engine`` (the local engine, on
        the encoder the router was trained on: the installed model or a tuned one)."""
        if not isinstance(engine, LocalEngine):
            raise RouterMismatch(f"the learned router needs the local engine's embeddings, not {engine.name!r}")
        model = self.meta.get("model")
        if model != engine.model:
            raise RouterMismatch(
                f"the learned router was trained on embeddings of {model!r}, not {engine.model!r}: run semif train again"
            )
        self.check_tree(tree)

    def check_tree(self, tree: SkillTree) -> None:
        """Raise :class:`RouterMismatch` when the tree changed in a way this router does not cover."""
        kept = sum(1 for name in self.classes if name in tree.skills)
        if self.classes and kept / len(self.classes) < MIN_COVERAGE:
            raise RouterMismatch(
                f"the learned router (trained {self.meta.get('trained_at', '?')}) learned {plural(len(self.classes), 'skill')}, "
                f"and only {kept} of them are still in the tree: run semif train again"
            )

    # -- storing ------------------------------------------------------------

    def save(self, workspace: Workspace) -> Path:
        """Write ``data/router.npz`` and ``data/router.json`` (each replaced in one step)."""
        import numpy as np

        folder = workspace.data_dir
        folder.mkdir(parents=True, exist_ok=True)
        weights = folder / WEIGHTS_FILE
        arrays = io.BytesIO()
        np.savez(
            arrays,
            w=self.w.astype(np.float32),
            v=self.v.astype(np.float32),
            b=self.b,
            none_w=self.none_w.astype(np.float32),
            none_v=self.none_v.astype(np.float32),
            words=np.array(self.vocabulary.words, dtype=str),
            idf=self.vocabulary.idf,
            numbers=np.array([self.beta, self.none_b, self.none_prior, self.temperature]),
            labelled=self.labelled.astype(np.float32),
            pulls=self.pulls,
        )
        replace_file(weights, arrays.getvalue())
        description = {"version": VERSION, **self.meta, "classes": self.classes}
        path = folder / ROUTER_FILE
        replace_file(path, json.dumps(description, indent=1) + "\n")
        return path

    @classmethod
    def load(cls, workspace: Workspace) -> LearnedHead | None:
        """The workspace's router, or ``None`` when it has none. A damaged one is a :class:`RouterMismatch`."""
        path = workspace.data_dir / ROUTER_FILE
        weights = workspace.data_dir / WEIGHTS_FILE
        if not path.is_file():
            return None
        try:
            import numpy as np

            meta = json.loads(path.read_text(encoding="utf-8"))
            from ._head import Vocabulary

            with np.load(weights, allow_pickle=False) as data:
                arrays = {key: data[key] for key in ("w", "v", "b", "none_w", "none_v", "words", "idf", "numbers")}
                arrays.update({key: data[key] for key in ("labelled", "pulls") if key in data})
        except ImportError as exc:
            raise EngineConfigError("the learned router needs numpy: pip install 'semif-agent[local]'") from exc
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise RouterMismatch(f"{path}: the learned router cannot be read ({exc}); run semif train again") from exc
        classes = meta.pop("classes", [])
        if meta.get("version") != VERSION or arrays["w"].shape[0] != len(classes):
            raise RouterMismatch(f"{path}: the learned router's files do not match; run semif train again")
        beta, none_b, none_prior, temperature = (float(v) for v in arrays["numbers"])
        vocabulary = Vocabulary([str(w) for w in arrays["words"]], arrays["idf"])
        return cls(
            list(classes),
            arrays["w"].astype(np.float64),
            arrays["v"].astype(np.float64),
            arrays["b"],
            beta,
            arrays["none_w"].astype(np.float64),
            arrays["none_v"].astype(np.float64),
            none_b,
            none_prior,
            temperature,
            vocabulary,
            meta,
            arrays.get("labelled"),
            arrays.get("pulls"),
        )


def stored_router(workspace: Workspace) -> LearnedHead | None:
    """The workspace's router when it has one (``None`` otherwise); see :meth:`LearnedHead.load`."""
    return LearnedHead.load(workspace)


class LearnedScorer(LeafScorer):
    """Every leaf's learned logit for a request (and ``none``'s), over the untrained scores of the same tree."""

    def __init__(self, tree: SkillTree, engine: Engine, router: LearnedHead) -> None:
        super().__init__(tree, engine, examples="off")
        router.check(tree, engine)
        self.router = router
        self._mapped: tuple[LeafIndex, np.ndarray, np.ndarray] | None = None

    @property
    def default_threshold(self) -> float:
        """``none``'s logit for a request that carries no signal (its prior and bias)."""
        return self.router.beta * self.router.none_prior + self.router.none_b

    def _columns(self, index: LeafIndex) -> tuple[np.ndarray, np.ndarray]:
        """Each leaf of ``index`` (in its order): its learned row, or -1 for a skill never learned; and the biases."""
        if self._mapped is None or self._mapped[0] is not index:
            np = index.numpy
            position = {name: i for i, name in enumerate(self.router.classes)}
            rows = np.array([position.get(name, -1) for name in index.names], dtype=int)
            b = np.where(
                rows >= 0, self.router.b[np.maximum(rows, 0)] if len(self.router.b) else 0.0, self.router.unseen_bias
            )
            self._mapped = (index, rows, b)
        return self._mapped[1], self._mapped[2]

    def learned(
        self, text: str, index: LeafIndex | None = None, *, vector: np.ndarray | None = None
    ) -> tuple[np.ndarray, float]:
        """The leaves' logits in ``index.names`` order, and ``none``'s logit, for ``text`` (embedded as ``vector``,
        when the caller has it)."""
        index = index or self.current()
        np = index.numpy
        vector = self.embedder.embed([text])[0] if vector is None else vector
        prior = super().score_array(text, index, vector=vector)
        router = self.router
        x = vector.astype(np.float64)
        cols, values = router.vocabulary.vector(text)
        learned = router.w @ x + router.v[:, cols] @ values
        rows, b = self._columns(index)
        logits = b + router.beta * prior
        seen = rows >= 0
        logits[seen] += learned[rows[seen]]
        none = float(router.none_w @ x + router.none_v[cols] @ values) + router.none_b + router.beta * router.none_prior
        if len(router.labelled):
            from ._head import nearness

            pulled = router.pulls @ nearness(x[None, :], router.labelled)[0]
            logits[seen] += pulled[rows[seen]]
            none += float(pulled[-1])
        return logits, none

    def score_array(self, text: str, index: LeafIndex | None = None, *, vector: np.ndarray | None = None) -> np.ndarray:
        return self.learned(text, index, vector=vector)[0]

    def none_score(self, text: str) -> float:
        return self.learned(text)[1]


class Learned(BestLeaf):
    """``best_leaf`` on the learned logits, ``none`` at its own logit per request, at the fitted temperature."""

    name = "learned"
    scorer: LearnedScorer

    def __init__(self, tree: SkillTree, engine: Engine, scorer: LearnedScorer) -> None:
        super().__init__(tree, engine, scorer, scorer.default_threshold, scorer.router.temperature)

    def leaf_scores(self, text: str, index: LeafIndex) -> tuple[Any, float]:
        scores, none = self.scorer.learned(text, index)
        return as_one_skill(index, scores), none
