"""Teaching the router: what a workspace knows, turned into a :class:`~.learned.LearnedHead`.

Sources, each row a request and the skill it should go to (``None``: no
skill fits), with a weight:

- ``examples``: the example requests of the tree's skills (manifests'
  ``examples``, SKILL.md skills' ``examples``), and its ``none_examples``
  (requests no skill serves, ``categories.json``) for ``none``, weight 1:
  what out of scope looks like is then known before any label says so, and
  one ``none`` label is one row among dozens, not the only one that places
  the ``none`` cut;
- ``dataset``: labelled datasets (``{"text", "skill"}`` JSON lines; a
  ``null`` skill teaches ``none``), weight 1;
- ``label``: runs a person labelled (``semif label``, the web view) with the
  skill they should have gone to (or ``none``), or as a success of the skill
  they went to, weight 4: the strongest evidence there is (at 2, a label of a
  request the examples send elsewhere did not bring it over, on a starter
  workspace with 24 requests of its own and four labels; at 4 it did, and
  nothing that was right went wrong; at 16 a skill's own example did);
- ``success``: runs the assessment judged a success (and nobody relabelled),
  for the skill they chose, weight 0.5;
- ``failure``: runs judged (or labelled) a failure say only which skill was
  WRONG for the request: weight 1 when a person said so, 0.5 when the engine
  did. A run the engine judged a failure because the skill raised, handed the
  request back or said it could not act is left out: that says more about
  the skill (or what the request lacked) than about the route.

and what clients say (an MCP client, a program using :class:`semif_agent.Router`),
which never outweighs the rest:

- ``implicit``: requests a client asked ``find`` about and then loaded or ran
  a skill for: that skill, weight 0.5 (a pick, not a judgement); a pick of a
  skill the shortlist did not rank first also says, at the same weight, that
  the first was wrong;
- ``reported``: a client's own ``report_outcome`` of a run (the skill it
  should have gone to, or how it went), weight 0.5, never replacing a
  person's label of the same run (:data:`~semif_agent.records.rows.SOURCE_RANK`).

A client's rows count once per request (:func:`request_key`: its repeats of
one pick, however many, are one row), none count about a request a person
labelled or an example or dataset routes, and they weigh little together: each
client's at most :data:`._fitting.CLIENT_SHARE` of what the workspace's own evidence
weighs (its rows above and one per skill for its description), all clients'
at most :data:`._fitting.CLIENTS_SHARE` (:func:`._fitting.client_capped`); a client is
named by what it calls itself, which is why the second cap is there. Their
requests are neither held out nor replayed before a switch
(:mod:`.switching`): what decides whether a router is better is what the
workspace itself knows.

A skill's example that a person's label of the same or nearly the same
request contradicts is left out: the label outranks it (:mod:`.outranked`).

:func:`train` embeds every request with the local model, holds out part of
the rows, fits the head (:mod:`._head`) on the rest for a few strengths of
regularisation and keeps the best on the held-out rows, fits the temperature
and (without ``none`` rows) the ``none`` threshold there, reports before and
after, and refits on everything. With too few rows to hold any out (a fresh
workspace's examples and a few labels), the same choices are made by
cross-validation: each fold scored by the head fitted on the others.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.local import MODEL_ID
from ..errors import UserError
from ..tree.tree import SkillTree
from .evaluate import Example
from .outranked import contradicted_examples
from .switching import HeldOut, SwitchDecision, compare_routers, label_culprits, request_key

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ..engine.base import Engine
    from ..records import RunRecord
    from ..workspace import Workspace
    from ._fitting import Encoder
    from .learned import LearnedHead
    from .strategies import RoutingStrategy

SOURCES = ("examples", "dataset", "label", "success", "failure", "implicit", "reported")
WEIGHTS = {
    "examples": 1.0,
    "dataset": 1.0,
    "label": 4.0,
    "success": 0.5,
    "failure": 0.5,
    "implicit": 0.5,
    "reported": 0.5,
}
SETTLED_BY = ("label", "dataset", "examples")  # rows in which people say where a request goes: no client row overrides
PERSON_FAILURE_WEIGHT = 1.0
HELD_OUT = 0.2
# Fewer held-out rows than this and nothing is held out (the report says so): the settings and the `none` cut are
# chosen by cross-validation on every row instead. A score on twenty-odd rows (a starter workspace's examples, its
# `none_examples` and a few labels) is noise: it chose the strongest regularisation and a `none` cut that sent a
# `none` example, right before, to a skill; every row scored once in its fold chose what switched with nothing broken.
MIN_HELD_OUT = 50
FOLDS = 5  # with too few rows to hold any out, the strength is chosen by cross-validation over this many folds
MIN_CROSS_VALIDATED = 10  # and with fewer rows of a known answer than this, not chosen at all:
DEFAULT_L2 = 1.0  # the strongest strength tried is used,
DEFAULT_BETA = 32.0  # with the heaviest weight of the untrained scores (what a handful of requests supports)
# The fit's matrix products have one column per skill: a second BLAS thread gains nothing on them, and its
# waiting competes with the optimiser for the cores (15,000 requests on 2 cores: fitting 21.8 s with two, 13.8 s with one)
FIT_BLAS_THREADS = 1

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class TrainingExample:
    """A request and the skill it should go to (``None``: no skill fits), or only a skill it must not go to."""

    text: str
    skill: str | None
    source: str
    weight: float = 1.0
    wrong: str | None = None  # set for a failure: the right skill is unknown
    client: str | None = None  # the client behind it (implicit, reported), None for the workspace's own evidence
    run_id: str | None = None  # the run a person labelled, for a person's label: what `semif label --undo` takes back


def once_per_request(rows: Sequence[TrainingExample]) -> list[TrainingExample]:
    """``rows`` with each client pick or report counted once per request (:func:`request_key`), whoever repeats it
    (the first of the rows saying the same of the same request, at the strongest weight it was given), and none
    about a request people have said where to go (a label, a dataset, a skill's example): a client cannot
    outvote that, however often it asks."""
    settled = {request_key(row.text) for row in rows if row.client is None and row.source in SETTLED_BY}
    kept: dict[tuple[str, str | None, str | None], TrainingExample] = {}
    own = []
    for row in rows:
        if row.client is None:
            own.append(row)
            continue
        key = (request_key(row.text), row.skill, row.wrong)
        if key[0] in settled:
            continue
        held = kept.get(key)
        kept[key] = row if held is None else replace(held, weight=max(held.weight, row.weight))
    return own + list(kept.values())


def examples_from_tree(tree: SkillTree) -> list[TrainingExample]:
    """The example requests a person gave every skill of ``tree`` (the learned ones come from the log's runs), and
    the tree's ``none_examples``, each a row for ``none``."""
    skills = [
        TrainingExample(text, leaf.name, "examples", WEIGHTS["examples"])
        for leaf in tree.skills.values()
        for text in leaf.own_examples
        if text.strip()
    ]
    return skills + [TrainingExample(text, None, "examples", WEIGHTS["examples"]) for text in tree.none_examples]


def examples_from_dataset(examples: Iterable[Example], tree: SkillTree) -> list[TrainingExample]:
    """Rows of a labelled dataset; a skill the tree does not have is an error naming it."""
    rows = list(examples)
    unknown = sorted({e.skill for e in rows if e.skill is not None and e.skill not in tree.skills})
    if unknown:
        raise UserError(
            f"the dataset names skills the tree does not have: {', '.join(unknown[:5])}"
            + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        )
    return [TrainingExample(e.text, e.skill, "dataset", WEIGHTS["dataset"]) for e in rows]


def examples_from_log(runs: Iterable[RunRecord], tree: SkillTree) -> list[TrainingExample]:
    """What the decision log's runs teach (see the module docstring); runs about skills now gone are left out."""
    out = []
    for run in runs:
        text = (run.request or "").strip()
        if not text:
            continue
        client = run.label_client or run.labelled_by or "client"
        if run.label_has_skill and run.label_source == "implicit":
            out.extend(_implicit(text, run, tree, client))
            continue
        if run.label_has_skill:
            if run.label_skill is None or run.label_skill in tree.skills:
                if run.label_source == "client":
                    out.append(TrainingExample(text, run.label_skill, "reported", WEIGHTS["reported"], client=client))
                else:
                    out.append(TrainingExample(text, run.label_skill, "label", WEIGHTS["label"], run_id=run.run_id))
            continue
        outcome = run.label_outcome or run.outcome
        if run.skill is None or run.skill not in tree.skills:
            continue
        reported = run.label_outcome is not None and run.label_outcome_source is not None
        if reported and outcome == "success":
            out.append(TrainingExample(text, run.skill, "reported", WEIGHTS["reported"], client=client))
        elif reported and outcome == "failure":
            out.append(TrainingExample(text, None, "reported", WEIGHTS["reported"], wrong=run.skill, client=client))
        elif outcome == "success":  # a person's "success" says the run's skill was right: a label of it
            source = "label" if run.label_outcome else "success"
            labelled = run.run_id if run.label_outcome else None
            out.append(TrainingExample(text, run.skill, source, WEIGHTS[source], run_id=labelled))
        elif outcome == "failure" and (run.label_outcome or not _skill_trouble(run.evidence)):
            weight = PERSON_FAILURE_WEIGHT if run.label_outcome else WEIGHTS["failure"]
            labelled = run.run_id if run.label_outcome and not run.undone else None
            out.append(TrainingExample(text, None, "failure", weight, wrong=run.skill, run_id=labelled))
    return out


def _implicit(text: str, run: RunRecord, tree: SkillTree, client: str) -> list[TrainingExample]:
    """A client's pick after a find: the skill it picked, and the first-ranked one it passed over as wrong. A run the
    client had a skill make that the engine judged a failure (not the skill's own trouble) says the pick was wrong."""
    weight = WEIGHTS["implicit"]
    out = []
    if run.outcome == "failure" and run.label_skill == run.skill and run.label_skill in tree.skills:
        if not _skill_trouble(run.evidence):
            out.append(TrainingExample(text, None, "implicit", weight, wrong=run.label_skill, client=client))
    elif run.label_skill is None or run.label_skill in tree.skills:
        out.append(TrainingExample(text, run.label_skill, "implicit", weight, client=client))
    if run.label_wrong and run.label_wrong in tree.skills and run.label_wrong != run.label_skill:
        out.append(TrainingExample(text, None, "implicit", weight, wrong=run.label_wrong, client=client))
    return out


def _skill_trouble(evidence: Mapping[str, object] | None) -> bool:
    """Whether the assessment blamed the skill itself (an error, a hand-back, a "could not")."""
    return evidence is not None and any(evidence.get(key) for key in ("error", "handed_back", "could_not"))


@dataclass
class TrainingReport:
    """What a training used and what it measured (held out), for the command line and ``router.json``."""

    counts: dict[str, int]
    classes: int
    held_out: int
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    calibration: dict[str, Any] = field(default_factory=dict)
    l2: float = 0.0
    folds: int = 0  # 1: chosen on the held-out rows; more: by cross-validation; 0: not chosen (too few rows)
    seconds: dict[str, float] = field(default_factory=dict)
    held_out_routes: HeldOut | None = None  # where each held-out request went, untrained and learned
    decision: SwitchDecision | None = None  # whether the workspace switched to the router (train_workspace)
    rows: Sequence[TrainingExample] = field(default=(), repr=False)  # the rows fitted on, in the fit's order
    # the router fitted the same way without the rows at some positions of ``rows`` (what one label did)
    refit: Callable[[Sequence[int]], LearnedHead] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, object]:
        return {
            "counts": self.counts,
            "classes": self.classes,
            "held_out": self.held_out,
            "before": self.before,
            "after": self.after,
            "calibration": self.calibration,
            "l2": self.l2,
            "folds": self.folds,
            "seconds": self.seconds,
            **({"decision": self.decision.to_dict()} if self.decision is not None else {}),
        }


def train_workspace(
    workspace: Workspace,
    tree: SkillTree,
    rows: Sequence[TrainingExample],
    engine: Engine,
    *,
    current: RoutingStrategy,
    force: bool = False,
    held_out: float = HELD_OUT,
    progress: Progress | None = None,
    encoder: Encoder | None = None,
    before_switch: Callable[[], None] | None = None,
    require_gain: bool = False,
) -> tuple[LearnedHead, TrainingReport, Path | None]:
    """Train ``workspace``'s router (:func:`train`, from its tuned threshold) and switch to it unless that breaks
    what was right (:func:`.switching.compare_routers` against ``current``, the strategy routing now);
    ``force`` switches anyway; ``require_gain`` switches only when it fixes more than it breaks beyond noise.
    The decision is ``report.decision``. ``before_switch`` runs when it switches,
    before the router is written (a tuned encoder is put in place by it). A router trained on a tuned
    encoder's embeddings switches that encoder in with it (``routing.json``'s ``encoder``).

    Returns the router, the report and the path it was stored at (``None``: not switched, nothing written).
    """
    from .learned import Learned, LearnedScorer
    from .tune import routing_settings, save_tuned

    router, report = train(
        tree,
        rows,
        engine,
        base_threshold=routing_settings(workspace, "local").threshold,
        held_out=held_out,
        progress=progress,
        encoder=encoder,
    )
    new = Learned(tree, engine, LearnedScorer(tree, engine, router))
    report.decision = compare_routers(
        current, new, rows, held_out=report.held_out_routes, force=force, progress=progress, require_gain=require_gain
    )
    refit = report.refit
    if report.decision.broken and not report.decision.switched and refit is not None:
        report.decision.culprits = label_culprits(
            report.decision,
            report.rows,
            lambda leaving_out: Learned(tree, engine, LearnedScorer(tree, engine, refit(leaving_out))),
            progress=progress,
        )
    router.meta["decision"] = {
        k: v for k, v in report.decision.to_dict().items() if k not in ("flips", "unlearned", "culprits")
    }
    if not report.decision.switched:
        return router, report, None
    if before_switch is not None:
        before_switch()
    path = router.save(workspace)
    encoder_used = "base" if engine.model == MODEL_ID else "tuned"
    save_tuned(
        workspace,
        {"strategy": "learned", "engine": "local", "encoder": encoder_used, "trained_at": router.meta["trained_at"]},
    )
    return router, report, path


def train(
    tree: SkillTree,
    rows: Sequence[TrainingExample],
    engine: Engine,
    *,
    base_threshold: float | None = None,
    held_out: float = HELD_OUT,
    progress: Progress | None = None,
    encoder: Encoder | None = None,
) -> tuple[LearnedHead, TrainingReport]:
    """A learned router for ``tree`` from ``rows``, and the report of its held-out measurement.

    ``encoder`` embeds the requests and scores them the untrained way (default: here, with ``engine``;
    :func:`semif_agent.distributed.jobs.encoder` does it on a cluster, to the same arrays).
    """
    import numpy as np
    import scipy.optimize  # noqa: F401 - its own BLAS loaded now: the thread limit below covers only loaded ones
    from threadpoolctl import threadpool_limits

    from ._fitting import Fitter, Setting

    rows = once_per_request([r for r in rows if r.skill is None or r.skill in tree.skills])
    outranked = contradicted_examples(rows)  # a skill's example a person's label contradicts is left out
    rows = [r for r in rows if r.source != "examples" or r.text not in outranked]
    if not any(r.skill is not None for r in rows):
        raise UserError(
            "nothing to learn from: no example requests, datasets or labelled runs name a skill of this tree"
        )
    started = time.perf_counter()
    fitter = Fitter(tree, engine, rows, base_threshold=base_threshold, progress=progress, encoder=encoder)
    embedded = time.perf_counter()
    test = _held_out_rows(rows, held_out)
    kept_out = set(test)
    train_rows = np.array([i for i in range(len(rows)) if i not in kept_out], dtype=int)
    taught = {r.skill for r in rows if r.skill is not None} | {r.wrong for r in rows if r.wrong}
    report = TrainingReport(dict(Counter(r.source for r in rows)), len(taught), len(test))
    report.counts["none"] = sum(1 for r in rows if r.skill is None and r.wrong is None)
    settings = [Setting(DEFAULT_L2, DEFAULT_BETA)]
    folds = [(train_rows, test)] if test else _folds(rows)
    with threadpool_limits(limits=FIT_BLAS_THREADS, user_api="blas"):
        if folds:
            routers, settings = fitter.choose(folds)
            report.folds = len(folds)
        if test:
            untrained, learned = fitter.untrained_predicted(test), fitter.predicted(routers[0], test)
            report.held_out_routes = HeldOut([rows[i].skill for i in test], untrained, learned)
            report.before = fitter.metrics(untrained, test)
            report.after, report.calibration = fitter.held_out_metrics(routers[0], test, learned)
        report.l2 = settings[0].l2
        router = fitter.fit_all(settings)

    def refit(leaving_out: Sequence[int]) -> LearnedHead:
        fitter._tell = lambda stage, done, total: None  # the caller tells how the refits go, not each fit
        with threadpool_limits(limits=FIT_BLAS_THREADS, user_api="blas"):
            refitted = fitter.fit_all(settings, leaving_out=leaving_out)
        refitted.meta = dict(router.meta)  # what it was trained on, as the router it stands in for
        return refitted

    report.rows, report.refit = rows, refit
    fitted = time.perf_counter()
    report.seconds = {"embedding": round(embedded - started, 2), "fitting": round(fitted - embedded, 2)}
    router.meta = {
        "trained_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": engine.model,
        "tree": tree_fingerprint(tree),
        "skills_in_tree": len(tree.skills),
        "beta": settings[0].beta,
        "settings": [[setting.l2, setting.beta] for setting in settings],
        **report.to_dict(),
    }
    return router, report


def tree_fingerprint(tree: SkillTree) -> str:
    """A short hash of the tree's leaves (names and descriptions)."""
    digest = hashlib.sha256()
    for leaf in sorted(tree.skills.values(), key=lambda s: s.name):
        digest.update(f"{leaf.name}\0{leaf.description}\0".encode())
    return digest.hexdigest()[:16]


def _folds(rows: Sequence[TrainingExample]) -> list[tuple[NDArray[np.int_], list[int]]]:
    """:data:`FOLDS` folds of the rows with a known answer (by a hash of the text), each with the other rows to fit on;
    none when fewer than :data:`MIN_CROSS_VALIDATED` rows have a known answer (a client's rows are never tested on)."""
    import numpy as np

    candidates = [i for i, r in enumerate(rows) if r.wrong is None and r.client is None]
    if len(candidates) < MIN_CROSS_VALIDATED:
        return []
    fold = {i: _text_hash(rows[i].text) % FOLDS for i in candidates}
    folds = []
    for k in range(FOLDS):
        test = [i for i in candidates if fold[i] == k]
        if test:
            folds.append((np.array([i for i in range(len(rows)) if fold.get(i) != k], dtype=int), test))
    return folds


def _text_hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _held_out_rows(rows: Sequence[TrainingExample], share: float) -> list[int]:
    """A deterministic share of the rows with a known answer (by a hash of the text), when it makes enough rows.

    Not stratified: a skill's only request may be held out, which measures
    what routing will meet, skills seen seldom or never. A client's rows are
    never held out: they say what a client claims, not what is right.
    """
    candidates = [i for i, r in enumerate(rows) if r.wrong is None and r.client is None]
    chosen = [i for i in candidates if _text_hash(rows[i].text) / 0xFFFFFFFF < share]
    return chosen if len(chosen) >= MIN_HELD_OUT else []
