"""Routing strategies reach the right leaf, back off on none, and keep model decisions small."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import ScriptedEngine, create_engine
from semif_agent.errors import EngineConfigError
from semif_agent.routing import STRATEGIES, LeafScorer, create_strategy
from semif_agent.tree import SkillTree
from semif_agent.tree.router import route_prefix

from .conftest import DATASET


def load(tree_file: Path) -> SkillTree:
    return SkillTree.load(tree_file, tree_file.parent)


@pytest.mark.parametrize(
    "name", [n for n in STRATEGIES if n != "learned"]
)  # learned needs a trained router: tests/routing/test_learned.py
def test_every_strategy_routes_clear_requests_with_the_local_engine(tree_file: Path, name: str) -> None:
    strategy = create_strategy(name, load(tree_file), create_engine("local"))
    right = 0
    for text, skill in DATASET:
        route = run_sync(strategy.aroute(text))
        right += (route.skill.name if route.skill else None) == skill
    # the same on every run (the embedded model is deterministic): 10/10, chain 9/10 (5 runs, each a new process)
    assert right >= len(DATASET) - 2, f"{name} routed only {right}/{len(DATASET)}"


def test_best_leaf_scores_categories_by_their_best_leaf(tree_file: Path) -> None:
    strategy = create_strategy("best_leaf", load(tree_file), create_engine("local"))
    route = run_sync(strategy.aroute("mark the laundry task as done"))
    first = route.decisions[0].result
    best_todo_leaf = max(
        strategy.scorer.scores("mark the laundry task as done")[n] for n in ("todos.add", "todos.complete")
    )
    assert first.selected == "todos" and abs(first.scores["todos"] - best_todo_leaf) < 1e-6
    assert first.scores["none"] == strategy.threshold
    assert route.skill.name == "todos.complete"


def test_beam_backs_off_to_the_next_category_when_the_leaf_step_says_none(tree_file: Path) -> None:
    tree = load(tree_file)
    engine = ScriptedEngine(["none", "calendar.add_event"])
    strategy = create_strategy("beam", tree, engine, scorer_engine=create_engine("local"), threshold=0.0)
    route = run_sync(strategy.aroute("book a meeting to write the email newsletter"))
    assert route.skill is not None and route.skill.name == "calendar.add_event"
    notes = [d.result.note for d in route.decisions if d.result.note]
    assert notes[0] == "scored from the leaves" and notes[1] == "backoff after none"
    tried = [d.result.selected for d in route.decisions if d.level == "category"]
    assert len(set(tried)) == 2


def test_shortlist_never_offers_a_model_more_than_16_options_none_included(tmp_path: Path) -> None:
    import json

    skills = [
        {"name": f"tools.tool_{i}", "category": "tools", "description": f"Tool number {i} for job {i}"}
        for i in range(40)
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"categories": [{"name": "tools", "description": "Tools"}], "skills": skills}))
    seen: list[int] = []
    engine = ScriptedEngine(fn=lambda req: (seen.append(len(req.options)), req.options[0].id)[1])
    strategy = create_strategy(
        "shortlist", SkillTree.load(path, tmp_path), engine, scorer_engine=create_engine("lexical")
    )
    route = run_sync(strategy.aroute("run tool number 33 for job 33"))
    assert seen == [16]  # 15 skills + none
    assert route.skill.name == "tools.tool_33"
    with pytest.raises(EngineConfigError, match="1 to 15 skills"):
        create_strategy(
            "shortlist",
            SkillTree.load(path, tmp_path),
            engine,
            scorer_engine=create_engine("lexical"),
            shortlist_size=40,
        )


def test_example_requests_pull_a_request_to_their_skill(tree_file: Path) -> None:
    tree = load(tree_file)
    plain = LeafScorer(tree, create_engine("local"), examples="off").scores(
        "book a dentist appointment on Friday at 3pm"
    )
    nn = LeafScorer(tree, create_engine("local"), examples="nn").scores("book a dentist appointment on Friday at 3pm")
    centroid = LeafScorer(tree, create_engine("local"), examples="centroid").scores(
        "book a dentist appointment on Friday at 3pm"
    )
    assert nn["calendar.add_event"] > 0.99  # identical to one of its examples
    assert nn["calendar.add_event"] > centroid["calendar.add_event"] > plain["calendar.add_event"] - 1e-6
    assert nn["todos.add"] == pytest.approx(plain["todos.add"])  # no examples: unchanged


def test_lexical_scorer_works_without_the_model(tree_file: Path) -> None:
    strategy = create_strategy("best_leaf", load(tree_file), create_engine("lexical"))
    assert run_sync(strategy.aroute("search my notes for the wifi password")).skill.name == "notes.search"


def test_unknown_strategy_is_a_clear_error(tree_file: Path) -> None:
    with pytest.raises(EngineConfigError, match="unknown routing strategy 'magic'"):
        create_strategy("magic", load(tree_file), create_engine("lexical"))


@pytest.mark.parametrize("name", ["best_leaf", "examples", "beam", "chain"])
def test_a_calibrated_route_holds_the_routes_probability_at_every_decision(tree_file: Path, name: str) -> None:
    # derived decisions, and an engine's decisions calibrated on the leaves, hold the probability that the route
    # ends under each option: the act gate reads the chosen skill's at the last decision, not a product down the tree
    strategy = create_strategy(name, load(tree_file), create_engine("local"))
    route = run_sync(strategy.aroute("mark the laundry task as done"))
    assert route.skill is not None and route.decisions and all(step.whole for step in route.decisions)
    assert route_prefix(route.decisions) == 1.0


def test_an_engines_own_probabilities_multiply_down_the_route(tree_file: Path) -> None:
    # a model's decisions (here a scripted one) keep their own probabilities, each given the walk reached its decision
    engine = ScriptedEngine(
        [
            {"selected": "todos", "probabilities": {"todos": 0.8, "notes": 0.2}},
            {"selected": "todos.complete", "probabilities": {"todos.complete": 0.6, "todos.add": 0.4}},
        ]
    )
    route = run_sync(create_strategy("chain", load(tree_file), engine).aroute("mark the laundry task as done"))
    assert len(route.decisions) == 2 and not any(step.whole for step in route.decisions)
    assert route_prefix(route.decisions) == pytest.approx(0.8)
