"""The act threshold: how sure a route must be before a skill that writes acts, measured on the workspace itself.

Each example request of the workspace's skills is routed with that example
left out of the tree (leave-one-out), and each labelled run's request is
routed as it is; every route that ends at a skill that writes gives a pair
(the route's probability for it, whether it is the skill the example or the
label names). :func:`act_threshold_for` takes the lowest probability at which
the routes that clear it are right at least :data:`TARGET` of the time.

The measure costs one routing per example and label (embeddings are cached),
so it is made once per version of the tree, its labels and the routing, and
kept in ``data/act_threshold.json``; :func:`measured_act_threshold` reads it,
or measures again when any of them changed. A workspace that cannot measure
(an engine that does not score options, or fewer than :data:`MIN_PAIRS`
pairs) uses :data:`.gate.DEFAULT_ACT_THRESHOLD`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .._files import replace_file
from ..engine.base import Engine
from ..routing.evaluate import Example
from ..routing.scoring import can_score
from ..tree.effects import WRITE
from ..tree.router import Route
from ..tree.tree import SkillTree
from .gate import DEFAULT_ACT_THRESHOLD, gate_route

TARGET = 0.95  # the share of acted routes that must be right
WEIGHED = (
    "sure",
    "change-write",
)  # the gate's rules that let a skill act only when its probability clears the threshold
MIN_PAIRS = 8  # fewer routes to a writing skill, and the default stands
MAX_EXAMPLES = 400  # examples routed at most (a large tree: the first ones of each skill, in turn)
THRESHOLD_FILE = "act_threshold.json"


@dataclass(frozen=True)
class ActTradeOff:
    """The threshold chosen, and what it gives on the pairs it was chosen on."""

    threshold: float
    pairs: int  # routes to a skill that writes
    acted: float | None  # the share of them that clear the threshold
    accuracy: float | None  # the share of those that are right
    measured: bool = True  # False: too few pairs, the default threshold

    def to_dict(self) -> dict[str, Any]:
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


def gate_routes(strategy: Any) -> Callable[[Example, Route], tuple[float, bool]] | None:
    """:func:`gate_pair` for the routes of ``strategy``, over its tree and with its engine (``route_all``'s
    ``on_route``); None for a strategy that does not say them (a plug-in's may not)."""
    tree, engine = getattr(strategy, "tree", None), getattr(strategy, "engine", None)
    if not isinstance(tree, SkillTree) or engine is None:
        return None

    def gated(example: Example, route: Route) -> tuple[float, bool]:
        return gate_pair(route, example.text, example.skill, tree, engine)

    return gated


async def act_pairs(runner: Any, labelled: Iterable[tuple[str, str]] = ()) -> list[tuple[float, bool]]:
    """(probability, right?) of every route to a writing skill: the examples left out one at a time, and
    the ``labelled`` (request, skill) pairs, routed by ``runner``'s strategy, intent rules applied."""
    tree: SkillTree = runner.tree
    pairs: list[tuple[float, bool]] = []
    for skill, example in _examples(tree):
        left_out = SkillTree(
            dict(tree.categories),
            {**tree.skills, skill: dataclasses.replace(tree.skills[skill], examples=_without(tree, skill, example))},
            none_examples=tree.none_examples,
        )
        strategy = runner.settings.build_strategy(left_out, runner.engine)
        pairs += await _pair(runner, strategy, left_out, example, skill)
    for text, skill in labelled:
        pairs += await _pair(runner, runner.strategy, tree, text, skill)
    return pairs


@dataclass(frozen=True)
class Measuring:
    """What measuring the act threshold reads of a runner (a :class:`~.runner.SkillRunner` has it all); without a
    ``workspace``, only the tree's examples are routed, and nothing is kept."""

    settings: Any
    tree: SkillTree
    engine: Engine
    strategy: Any
    workspace: Any = None
    log: Any = None


async def threshold_in_force(runner: Any) -> tuple[ActTradeOff, str]:
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


async def measured_act_threshold(runner: Any) -> ActTradeOff:
    """The workspace's act threshold: kept in ``data/act_threshold.json`` while its tree, labels and routing stand."""
    if not can_score(runner.engine):
        return ActTradeOff(DEFAULT_ACT_THRESHOLD, 0, None, None, measured=False)
    # the key reads only people's label rows (and those taking labels back); the labelled requests are gathered (the whole
    # log read) only to measure
    labels = [row for row in runner.log.read(kinds=("label", "unlabel")) if row.get("source", "person") == "person"]
    key = _key(runner, [json.dumps(row, sort_keys=True) for row in labels])
    path = runner.workspace.data_dir / THRESHOLD_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            return ActTradeOff(**kept["trade_off"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or damaged: measured again
    # a person's labels only: a client's pick or report says nothing of how sure a route must be to act (a few
    # picks of a skill the route did not rank first would otherwise raise the threshold until nothing acts)
    labelled = [
        (r.request, r.label_skill) for r in runner.log.runs() if r.label_skill and r.request and r.label_source is None
    ]
    found = act_threshold_for(await act_pairs(runner, labelled))
    if not getattr(runner.settings, "log", True):
        return found  # a run that writes nothing (semif route, --dry-run, --no-log) keeps nothing either
    try:
        replace_file(path, json.dumps({"key": key, "trade_off": found.to_dict()}, indent=2) + "\n")
    except OSError:
        pass  # a read-only workspace measures again next time
    return found


async def _pair(runner: Any, strategy: Any, tree: SkillTree, text: str, skill: str) -> list[tuple[float, bool]]:
    route = await strategy.aroute(text)
    route, gate = gate_route(route, text, tree, runner.engine, threshold=0.0)
    if gate is None or not gate.acts or gate.effects != WRITE or gate.probability is None:
        return []
    return [(gate.probability, gate.skill == skill)]


def _examples(tree: SkillTree) -> list[tuple[str, str]]:
    """(skill, example) pairs, at most :data:`MAX_EXAMPLES`, taking each skill's examples in turn."""
    queues = [[(name, e) for e in skill.examples] for name, skill in tree.skills.items() if len(skill.examples) > 1]
    chosen: list[tuple[str, str]] = []
    depth = 0
    while len(chosen) < MAX_EXAMPLES and any(depth < len(q) for q in queues):
        chosen += [q[depth] for q in queues if depth < len(q)][: MAX_EXAMPLES - len(chosen)]
        depth += 1
    return chosen


def _without(tree: SkillTree, skill: str, example: str) -> tuple[str, ...]:
    examples = list(tree.skills[skill].examples)
    examples.remove(example)
    return tuple(examples)


def _key(runner: Any, labels: list[str]) -> str:
    tree: SkillTree = runner.tree
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
