"""The act threshold: how sure a route must be before a skill that writes acts, measured on the workspace itself.

Each example request of the workspace's skills is routed with that example
left out of the tree, and each labelled run's request is routed as it is;
every route that ends at a skill that writes gives a pair (the route's
probability for it, whether it is the skill the example or the label names).
:func:`act_threshold_for` takes the lowest probability at which the routes
that clear it are right at least :data:`TARGET` of the time.

Examples are left out by folds, as the scorer's calibration leaves them out:
fold ``f`` of ``k`` takes out every skill's examples at positions ``f``,
``f + k``... at once, and routes them on the rest, so a measure builds at most
:data:`MAX_FOLDS` strategies, whatever the tree's size. A fold's strategy
scores with the calibration of the whole tree (fitted on the same examples,
each held out already), so a fold costs one leaf index, not a calibration.
At most :data:`MAX_EXAMPLES` examples and the :data:`MAX_LABELLED` latest
labelled requests are routed: a tree of thousands of skills measures in
seconds, not minutes.

The measure is made once per version of the tree, its labels and the routing,
and kept in ``data/act_threshold.json``; :func:`measured_act_threshold` reads
it, or measures again when any of them changed. A workspace that cannot
measure (an engine that does not score options, or fewer than
:data:`MIN_PAIRS` pairs) uses :data:`.gate.DEFAULT_ACT_THRESHOLD`.
``progress(stage, done, total)``, when the runner has one, hears of each
request routed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .._files import replace_file
from ..engine.base import Engine
from ..routing.evaluate import Example
from ..routing.scoring import LeafScorer, can_score
from ..tree.effects import WRITE
from ..tree.router import Route
from ..tree.tree import SkillTree
from .gate import DEFAULT_ACT_THRESHOLD, gate_route
from .settings import RunSettings

if TYPE_CHECKING:
    from .._json import JsonObject
    from ..records import DecisionLog
    from ..routing.strategies import RoutingStrategy
    from ..tree.manifests import SkillManifest
    from ..workspace import Workspace

TARGET = 0.95  # the share of acted routes that must be right
WEIGHED = (
    "sure",
    "change-write",
)  # the gate's rules that let a skill act only when its probability clears the threshold
MIN_PAIRS = 8  # fewer routes to a writing skill, and the default stands
MAX_EXAMPLES = 200  # examples routed at most (a large tree: the first ones of each skill, in turn)
MAX_LABELLED = 200  # labelled requests routed at most (the latest)
MAX_FOLDS = 5  # strategies built at most to leave examples out
STAGE = "act threshold"  # the progress stage of a measure
THRESHOLD_FILE = "act_threshold.json"


@dataclass(frozen=True)
class ActTradeOff:
    """The threshold chosen, and what it gives on the pairs it was chosen on."""

    threshold: float
    pairs: int  # routes to a skill that writes
    acted: float | None  # the share of them that clear the threshold
    accuracy: float | None  # the share of those that are right
    measured: bool = True  # False: too few pairs, the default threshold

    def to_dict(self) -> JsonObject:
        return dataclasses.asdict(self)


def act_threshold_for(pairs: Iterable[tuple[float, bool]], target: float = TARGET) -> ActTradeOff:
    """The lowest threshold whose routes at or above it are right at least ``target`` of the time.

    Any threshold between the last route kept and the next one below gives the same routes; the midpoint is taken.
    """
    ranked = sorted(pairs, key=lambda pair: -pair[0])
    if len(ranked) < MIN_PAIRS:
        return trade_off(ranked, DEFAULT_ACT_THRESHOLD, measured=False)
    chosen, right = None, 0
    for count, (_, ok) in enumerate(ranked, 1):
        right += ok
        if right / count >= target:
            chosen = count
    if chosen is None:
        return trade_off(ranked, 1.0)
    below = ranked[chosen][0] if chosen < len(ranked) else 0.0
    return trade_off(ranked, (ranked[chosen - 1][0] + below) / 2)  # midway to the first route left out


def trade_off(pairs: list[tuple[float, bool]], threshold: float, *, measured: bool = True) -> ActTradeOff:
    """What ``threshold`` gives on ``pairs``: the share acted, and the accuracy of those."""
    acted = [ok for p, ok in pairs if p >= threshold]
    share = len(acted) / len(pairs) if pairs else None
    accuracy = sum(acted) / len(acted) if acted else None
    return ActTradeOff(round(threshold, 4), len(pairs), share, accuracy, measured)


def gate_pair(route: Route, text: str, expected: str | None, tree: SkillTree, engine: Engine) -> tuple[float, bool]:
    """What the act gate does with ``route`` at every threshold, as one pair for :func:`trade_off`: the probability
    a threshold must not exceed for a skill to run (``inf``: one runs at any, a skill that reads...; ``-inf``: none
    runs, the route ended at none or a rule hands it back), and whether the skill that runs is ``expected``."""
    _, gate = gate_route(route, text, tree, engine, threshold=0.0)
    if gate is None or not gate.acts:
        return -math.inf, False
    right = gate.skill == expected
    if gate.rule in WEIGHED and gate.probability is not None:
        return gate.probability, right
    return math.inf, right


def gate_routes(strategy: RoutingStrategy) -> Callable[[Example, Route], tuple[float, bool]] | None:
    """:func:`gate_pair` for the routes of ``strategy``, over its tree and with its engine (``route_all``'s
    ``on_route``); None for a strategy that does not say them (a plug-in's may not)."""
    tree, engine = getattr(strategy, "tree", None), getattr(strategy, "engine", None)
    if not isinstance(tree, SkillTree) or engine is None:
        return None

    def gated(example: Example, route: Route) -> tuple[float, bool]:
        return gate_pair(route, example.text, example.skill, tree, engine)

    return gated


async def act_pairs(runner: MeasuredRunner, labelled: Iterable[tuple[str, str]] = ()) -> list[tuple[float, bool]]:
    """(probability, right?) of every route to a writing skill: the examples left out by folds, and the latest
    ``labelled`` (request, skill) pairs, routed by ``runner``'s strategy, intent rules applied."""
    tree = runner.tree
    chosen = _examples(tree)
    latest = list(labelled)[-MAX_LABELLED:]
    # at least two folds: with one, a skill would be left with none of its examples
    folds = max(2, min(MAX_FOLDS, 1 + max(position for _, _, position in chosen))) if chosen else 0
    progress = runner.progress
    total, done = len(chosen) + len(latest), 0
    pairs: list[tuple[float, bool]] = []

    async def route(strategy: RoutingStrategy, routed_on: SkillTree, text: str, skill: str) -> None:
        nonlocal done
        pairs.extend(await _pair(runner, strategy, routed_on, text, skill))
        done += 1
        if progress is not None:
            progress(STAGE, done, total)

    for fold in range(folds):
        held = [(skill, example) for skill, example, position in chosen if position % folds == fold]
        if held:
            left_out = _left_out(tree, fold, folds)
            strategy = fold_strategy(runner, left_out)
            for skill, example in held:
                await route(strategy, left_out, example, skill)
    for text, skill in latest:
        await route(runner.strategy, tree, text, skill)
    return pairs


def fold_strategy(runner: MeasuredRunner, tree: SkillTree) -> RoutingStrategy:
    """``runner``'s strategy over ``tree`` (the runner's tree with some examples left out).

    A strategy that scores every leaf (:class:`~semif_agent.routing.scoring.LeafScorer`) is given the ``none``
    cut and the calibration of the runner's own: both were fitted with each example held out already, and
    fitting them again would cost a calibration per fold. Any other is built as the settings say.
    """
    strategy = runner.strategy
    scorer, cut = getattr(strategy, "scorer", None), getattr(strategy, "threshold", None)
    settings = runner.settings
    if not isinstance(scorer, LeafScorer) or not isinstance(cut, float) or not isinstance(settings, RunSettings):
        return settings.build_strategy(tree, runner.engine)
    built = dataclasses.replace(settings, threshold=cut).build_strategy(tree, runner.engine)
    fold_scorer = getattr(built, "scorer", None)
    if isinstance(fold_scorer, LeafScorer):
        fold_scorer.current().calibration = scorer.calibration()
    return built


class MeasuredRunner(Protocol):
    """What measuring the act threshold reads of a runner: a :class:`~.runner.SkillRunner`, or a :class:`Measuring`
    made of its parts. A runner may also say which skills can act in its runs (a ``can_act`` method)."""

    @property
    def settings(self) -> RunSettings: ...
    @property
    def tree(self) -> SkillTree: ...
    @property
    def engine(self) -> Engine: ...
    @property
    def strategy(self) -> RoutingStrategy: ...
    @property
    def workspace(self) -> Workspace | None: ...
    @property
    def log(self) -> DecisionLog | None: ...
    @property
    def progress(self) -> Callable[[str, int, int], None] | None: ...


@dataclass(frozen=True)
class Measuring:
    """What measuring the act threshold reads of a runner (a :class:`~.runner.SkillRunner` has it all); without a
    ``workspace``, only the tree's examples are routed, and nothing is kept."""

    settings: RunSettings
    tree: SkillTree
    engine: Engine
    strategy: RoutingStrategy
    workspace: Workspace | None = None
    log: DecisionLog | None = None
    progress: Callable[[str, int, int], None] | None = None


async def threshold_in_force(runner: MeasuredRunner) -> tuple[ActTradeOff, str]:
    """The act threshold ``runner`` acts at, and where it comes from: ``"set"`` (``[routing] act_threshold`` or the
    caller's), ``"measured"`` (on the workspace's examples and labels) or ``"default"`` (too few to measure)."""
    given = runner.settings.act_threshold
    if given is not None:
        return ActTradeOff(float(given), 0, None, None, measured=False), "set"
    if runner.workspace is not None:
        found = await measured_act_threshold(runner)
    elif can_score(runner.engine):
        found = act_threshold_for(await act_pairs(runner))
    else:
        found = ActTradeOff(DEFAULT_ACT_THRESHOLD, 0, None, None, measured=False)
    return found, "measured" if found.measured else "default"


async def measured_act_threshold(runner: MeasuredRunner) -> ActTradeOff:
    """The workspace's act threshold: kept in ``data/act_threshold.json`` while its tree, labels and routing stand."""
    if not can_score(runner.engine):
        return ActTradeOff(DEFAULT_ACT_THRESHOLD, 0, None, None, measured=False)
    workspace, log = runner.workspace, runner.log
    if workspace is None or log is None:
        return act_threshold_for(await act_pairs(runner))  # the tree's examples only, and nothing kept
    # the key reads only people's label rows (and those taking labels back); the labelled requests are gathered (the whole
    # log read) only to measure
    from ..records import LABEL_KIND, UNLABEL_KIND, LabelRow

    said = log.read(kinds=(LABEL_KIND, UNLABEL_KIND))
    labels = [row for row in said if not isinstance(row, LabelRow) or row.source == "person"]
    key = _key(runner, [json.dumps(row.to_dict(), sort_keys=True) for row in labels])
    path = workspace.data_dir / THRESHOLD_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return ActTradeOff(**kept["trade_off"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or damaged: measured again
    # a person's labels only: a client's pick or report says nothing of how sure a route must be to act (a few
    # picks of a skill the route did not rank first would otherwise raise the threshold until nothing acts)
    labelled = [
        (r.request, r.label_skill) for r in log.runs() if r.label_skill and r.request and r.label_source is None
    ]
    found = act_threshold_for(await act_pairs(runner, labelled))
    if not runner.settings.log:
        return found  # a run that writes nothing (semif route, --dry-run, --no-log) keeps nothing either
    try:
        replace_file(path, json.dumps({"key": key, "trade_off": found.to_dict()}, indent=2) + "\n")
    except OSError:
        pass  # a read-only workspace measures again next time
    return found


async def _pair(
    runner: MeasuredRunner, strategy: RoutingStrategy, tree: SkillTree, text: str, skill: str
) -> list[tuple[float, bool]]:
    route = await strategy.aroute(text)
    route, gate = gate_route(route, text, tree, runner.engine, threshold=0.0, can_act=_can_act(runner))
    # only routes the threshold decides: a skill that cannot act in the run (a SKILL.md skill with no model shows
    # its instructions) is never held back, and its routes, right or wrong, say nothing of how sure one must be
    if gate is None or not gate.acts or gate.effects != WRITE or gate.rule not in WEIGHED or gate.probability is None:
        return []
    return [(gate.probability, gate.skill == skill)]


def _can_act(runner: MeasuredRunner) -> Callable[[SkillManifest], bool]:
    """Whether a skill can change anything in ``runner``'s runs (every skill, for a runner that does not say)."""
    can_act: Callable[[SkillManifest], bool] | None = getattr(runner, "can_act", None)
    return can_act or (lambda skill: True)


def _examples(tree: SkillTree) -> list[tuple[str, str, int]]:
    """(skill, example, its position) triples, at most :data:`MAX_EXAMPLES`, taking each skill's examples in turn;
    only a skill with more than one example lends them (left out, it keeps one)."""
    queues = [
        [(name, e, i) for i, e in enumerate(s.examples)] for name, s in tree.skills.items() if len(s.examples) > 1
    ]
    chosen: list[tuple[str, str, int]] = []
    depth = 0
    while len(chosen) < MAX_EXAMPLES and any(depth < len(q) for q in queues):
        chosen += [q[depth] for q in queues if depth < len(q)][: MAX_EXAMPLES - len(chosen)]
        depth += 1
    return chosen


def _left_out(tree: SkillTree, fold: int, folds: int) -> SkillTree:
    """``tree`` without the examples of fold ``fold`` of ``folds`` (those at positions ``fold``, ``fold + folds``...)
    of every skill with more than one."""
    skills = {
        name: dataclasses.replace(skill, examples=tuple(e for i, e in enumerate(skill.examples) if i % folds != fold))
        if len(skill.examples) > 1
        else skill
        for name, skill in tree.skills.items()
    }
    return SkillTree(dict(tree.categories), skills, none_examples=tree.none_examples)


def _key(runner: MeasuredRunner, labels: list[str]) -> str:
    tree = runner.tree
    parts = [
        runner.engine.name,
        runner.strategy.name,
        str(getattr(runner.strategy, "threshold", None)),
        str(getattr(runner.strategy, "temperature", None)),
        *(f"{s.name}|{s.description}|{s.effects}|{s.examples}" for s in tree.skills.values()),
        *tree.none_examples,
        *labels,
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
