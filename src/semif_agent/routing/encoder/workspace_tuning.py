"""``semif train --encoder``: tune the embedded encoder on a workspace's own evidence, train the head on it, and
switch to both only when the replay of known routes says so.

The encoder is always tuned from the installed model (never from an earlier tuned one: every run starts from
the same weights and all the evidence), without the held-out requests (so the held-out measure stays one), with
hard negatives from the skills the routing in use confuses. The tuned weights are written in the engine's ONNX
int8 format to a candidate folder of ``data/encoder``; the head is trained on that very file's embeddings and
replayed against the routing in use (:func:`~semif_agent.routing.training.train_workspace`, which here also
requires the fixes to outnumber the breaks beyond noise). Switched, the candidate becomes the workspace's tuned
encoder and the routing of the encoder it replaces is kept (``semif encoder off`` brings it back); not switched,
nothing is left of it.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._text import plural
from ...engine.local import Embedder, LocalEngine, model_file
from ..training import TrainingExample, TrainingReport, _held_out_rows, train_workspace
from . import store
from .pairs import confusions, training_pairs
from .tuning import Pair, TuneReport, TuneSettings

if TYPE_CHECKING:
    from ...engine.base import Engine
    from ...tree.tree import SkillTree
    from ...workspace import Workspace
    from .._fitting import Encoder
    from ..learned import LearnedHead
    from ..strategies import RoutingStrategy

MIN_PAIRS = 20
"""Fewer pairs than this and the encoder is not tuned (the head alone learns from so little)."""
HELD_OUT_PAIRS = 0.1
"""With no held-out requests (too few known), this share of the pairs (by request) measures the tuning's loss."""
MEASURED_PAIRS = 1024
"""At most this many held-out pairs measure each epoch (drawn once, with a fixed seed): the loss of a thousand
pairs is steady to a few thousandths, and measuring thousands costs minutes an epoch."""


@dataclass
class EncoderTuning:
    """What tuning the encoder did: the pairs, the estimate, the tuning's report, and the encoder it made."""

    pairs: int
    held_out_pairs: int
    estimate_seconds: float
    tune: TuneReport | None = None
    model_id: str | None = None
    note: str = ""  # why nothing was tuned or tried, when so
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "held_out_pairs": self.held_out_pairs,
            "estimate_seconds": round(self.estimate_seconds, 1),
            "tune": None if self.tune is None else asdict(self.tune),
            "model_id": self.model_id,
            "note": self.note,
            "seconds": self.seconds,
        }


def split_pairs(
    tree: SkillTree,
    rows: Sequence[TrainingExample],
    held: set[int],
    known_confusions: Mapping[str, Sequence[str]],
    seed: int = 0,
) -> tuple[list[Pair], list[Pair]]:
    """The pairs to tune on and the held-out pairs that measure the tuning (from the held-out rows, or, with none,
    a share of the pairs chosen by a hash of their request)."""
    train_rows = [row for i, row in enumerate(rows) if i not in held]
    held_rows = [rows[i] for i in sorted(held)]
    texts = {row.text for row in held_rows}  # the skills' learned examples among them are not tuned on either
    pairs = training_pairs(tree, train_rows, confusions=known_confusions, seed=seed, set_aside=texts)
    if held:  # the learned examples are tuned on: not measured on
        return pairs, training_pairs(tree, held_rows, confusions=known_confusions, seed=seed, learned=False)

    def aside(pair: Pair) -> bool:
        return int(hashlib.sha256(pair.anchor.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < HELD_OUT_PAIRS

    measured = [p for p in pairs if aside(p)]
    anchors = {p.anchor for p in measured}  # a request measured on is not another's positive either
    return [p for p in pairs if p.anchor not in anchors and p.positive not in anchors], measured


def tune_workspace(
    workspace: Workspace,
    tree: SkillTree,
    rows: Sequence[TrainingExample],
    engine: Engine,
    *,
    current: RoutingStrategy,
    force: bool = False,
    held_out: float,
    settings: TuneSettings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    say: Callable[[str], None] = lambda line: None,
    cluster: Callable[[Mapping[str, object]], Encoder] | None = None,
) -> tuple[LearnedHead | None, TrainingReport | None, Path | None, EncoderTuning]:
    """Tune the encoder on ``rows``, train the head on it and switch to both when the replay allows.

    ``engine`` is the local engine routing now (its threshold, temperature and embedding cache are the tuned
    engine's too); ``say`` hears the estimate before tuning starts; ``cluster`` makes a cluster encoder from
    engine settings (``--ray``: the head's embedding and scoring then run there). Returns the head (``None``
    when nothing was tuned), the training report, where the router was saved (``None``: not switched) and
    what tuning did.
    """
    from . import estimate_seconds, read_encoder, tune_encoder, write_encoder

    settings = settings or TuneSettings()
    tell = progress or (lambda stage, done, total: None)
    started = time.perf_counter()
    rows = list(rows)
    held = set(_held_out_rows(rows, held_out))
    confused = confusions(current, [row for i, row in enumerate(rows) if i not in held])
    pairs, held_pairs = split_pairs(tree, rows, held, confused)
    if len(held_pairs) > MEASURED_PAIRS:
        held_pairs = random.Random(0).sample(held_pairs, MEASURED_PAIRS)
    tuning = EncoderTuning(len(pairs), len(held_pairs), 0.0)
    if len(pairs) < MIN_PAIRS or not held_pairs:
        tuning.note = (
            f"only {plural(len(pairs), 'pair')} of a request and its skill to tune on ({MIN_PAIRS} needed, and some "
            "to hold out): the encoder in use is kept; label more runs, or give skills examples"
        )
        return None, None, None, tuning
    base_file = model_file()
    base = read_encoder(base_file)
    tuning.estimate_seconds = estimate_seconds(base, pairs, settings)
    say(
        f"tuning the encoder on {plural(len(pairs), 'pair')} ({len(held_pairs)} held out), at most "
        f"{plural(settings.epochs, 'epoch')}: about {_duration(tuning.estimate_seconds)} on this machine"
    )
    weights, tuning.tune = tune_encoder(
        base, pairs, held_pairs, settings, progress=lambda done, total: tell("tuning", done, total)
    )
    tuned_at = time.perf_counter()
    tuning.seconds["tuning"] = round(tuned_at - started, 1)
    if tuning.tune.best_epoch == 0 and not force:
        losses = tuning.tune.held_out_loss
        tuning.note = (
            f"tuning never lowered the held-out loss ({losses[0]:.3f} before, {min(losses[1:], default=losses[0]):.3f} "
            "at best): the encoder in use is kept (--force tries the tuned one anyway)"
        )
        return None, None, None, tuning
    candidate = store.candidate_folder(workspace)
    try:
        written = candidate / "model.partial"
        sha256 = write_encoder(weights, base_file, written)
        written.rename(candidate / store.model_name(sha256))
        model = store.write_manifest(candidate, sha256, _about(tuning, len(rows), settings))
        tuning.model_id = model.model_id
        tuned = LocalEngine(
            Embedder(model.path, model_id=model.model_id, model_sha256=model.sha256, store=_store_of(engine)),
            threshold=getattr(engine, "threshold", 0.3),
            temperature=getattr(engine, "temperature", 0.05),
        )
        now = store.routing_encoder(workspace)

        def put_in_place() -> None:
            if now == "base":
                store.keep_routing(workspace, "base")
            store.forget_tuned_slot(workspace)
            store.publish_candidate(workspace, candidate)

        options: dict[str, object] = {"encoder": str(candidate)}
        router, report, path = train_workspace(
            workspace,
            tree,
            rows,
            tuned,
            current=current,
            force=force,
            held_out=held_out,
            progress=progress,
            encoder=cluster(options) if cluster is not None else None,
            before_switch=put_in_place,
            require_gain=True,
        )
    finally:
        store.discard(candidate)
    tuning.seconds["head"] = round(time.perf_counter() - tuned_at, 1)
    return router, report, path, tuning


def _about(tuning: EncoderTuning, rows: int, settings: TuneSettings) -> dict[str, Any]:
    """What ``encoder.json`` says of how the encoder was tuned."""
    report = tuning.tune
    return {
        "tuned_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rows": rows,
        "pairs": tuning.pairs,
        "held_out_pairs": tuning.held_out_pairs,
        "settings": asdict(settings),
        "held_out_loss": None if report is None else report.held_out_loss,
        "best_epoch": None if report is None else report.best_epoch,
    }


def _store_of(engine: Engine) -> Any:
    embedder = getattr(engine, "embedder", None)
    return getattr(embedder, "store", None)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
