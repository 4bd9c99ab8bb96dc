"""The route's probability does not shrink with the depth of the tree: the gate, the candidates and the act threshold
read the chosen skill's share of every leaf's, not a product of the shares along the way."""

from __future__ import annotations

import pytest

from semif_agent.engine import local_available
from semif_agent.engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from semif_agent.loop.runner import SkillRunner
from semif_agent.loop.settings import RunSettings
from semif_agent.tree.router import RoutedDecision, route_prefix
from semif_agent.workspace import Workspace

from ._deep_tree import deep_workspace

needs_local = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")


def _step(probabilities: dict[str, float], selected: str, *, whole: bool) -> RoutedDecision:
    options = [Option(k, k) for k in probabilities]
    result = DecisionResult(selected, dict(probabilities), dict(probabilities))
    return RoutedDecision("category", DecisionRequest(state="", question="?", options=options), result, whole=whole)


def test_a_route_whose_decisions_hold_the_routes_probability_is_not_multiplied_down() -> None:
    # one softmax over every leaf: 60% of it is under a, 55% under a.b, and the skill a.b.c holds 50%
    whole = [
        _step({"a": 0.6, "x": 0.3, NONE_ID: 0.1}, "a", whole=True),
        _step({"a.b": 0.55, "a.y": 0.05, NONE_ID: 0.4}, "a.b", whole=True),
        _step({"a.b.c": 0.5, "a.b.z": 0.05, NONE_ID: 0.45}, "a.b.c", whole=True),
    ]
    assert route_prefix(whole) == 1.0
    # an engine's own probabilities, each given the walk got there, multiply as before
    own = [_step({"a": 0.8, NONE_ID: 0.2}, "a", whole=False), _step({"a.b": 0.5, NONE_ID: 0.5}, "a.b", whole=False)]
    assert route_prefix(own) == pytest.approx(0.8)
    # an engine's decision below one that holds the route's: the route's share of the node, times the engine's
    assert route_prefix([*whole[:2], own[1]]) == pytest.approx(0.55)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> SkillRunner:
    if not local_available():
        pytest.skip("the local engine is not installed")
    ws = Workspace.load(deep_workspace(tmp_path_factory.mktemp("deep") / "ws"))
    return SkillRunner.from_settings(RunSettings.resolve(ws, act_threshold=0.5, log=False))


@needs_local
def test_a_skill_that_writes_four_decisions_down_among_300_acts_when_its_route_is_clear(runner: SkillRunner) -> None:
    # todos.add is the fourth decision down (personal > organising > todos > todos.add) beside 300 other skills; it
    # leads every other skill by far, and each decision on the way holds some doubt: multiplied, the shares along
    # the way came to 25%, under the act threshold of 50%, and the request was handed back
    verdict = runner.decide("Remind me to renew the passport")
    assert len(verdict.route.decisions) == 4
    assert (verdict.skill, verdict.acts, verdict.rule) == ("todos.add", True, "sure"), verdict.reason
    gate = verdict.gate
    assert gate is not None and gate.probability is not None and gate.margin is not None
    assert gate.probability >= 0.5 and gate.margin >= 0.3
    last = verdict.route.decisions[-1].result
    assert gate.probability == pytest.approx(last.probabilities["todos.add"])  # what the route shows as chosen
    assert gate.candidates[0].skill == "todos.add" and gate.candidates[0].probability == gate.probability
