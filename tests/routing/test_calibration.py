"""Untrained routing probabilities fitted from the tree itself, and leaf routing that agrees with a flat scorer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import ScriptedEngine, create_engine, local_available
from semif_agent.routing import LeafScorer, create_strategy
from semif_agent.routing.calibration import (
    DEFAULT_TEMPERATURE,
    SPREAD_TEMPERATURE,
    ZERO_SHOT_NONE,
    expected_calibration_error,
    fit_none_threshold,
    fit_temperature,
    none_route_score,
)
from semif_agent.routing.evaluate import Example, route_all, summarize
from semif_agent.tree import SkillTree

from .conftest import TREE

pytestmark = pytest.mark.skipif(not local_available(), reason="needs the local engine")

SKILLS = {
    "email.compose": ["email Bob about the launch", "send a message to Alice", "write to Carla about lunch"],
    "email.list_drafts": ["show my drafts", "which emails have I not sent", "list the unsent emails"],
    "calendar.add_event": [
        "book a dentist appointment on Friday",
        "schedule lunch with Dan",
        "put a meeting on Monday",
    ],
    "calendar.list_events": ["what is on my agenda", "am I free tomorrow", "show this week's meetings"],
    "todos.add": ["remind me to buy milk", "add call mum to my tasks", "I need to renew the passport"],
}


def tree_with(tmp_path: Path, examples: dict[str, list[str]]) -> SkillTree:
    doc = json.loads(json.dumps(TREE))
    for skill in doc["skills"]:
        skill["examples"] = examples.get(skill["name"], [])
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(doc))
    return SkillTree.load(path, tmp_path / "skills")


def test_ece_of_a_hand_made_case() -> None:
    # bin (0.8, 0.9]: two at 0.85, one right: gap 0.35; bin (0.2, 0.3]: one at 0.25, wrong: gap 0.25
    assert expected_calibration_error([0.85, 0.85, 0.25], [True, False, False]) == pytest.approx(
        (2 * 0.35 + 0.25) / 3, abs=1e-4
    )
    assert expected_calibration_error([1.0, 0.0], [True, False]) == 0.0
    assert expected_calibration_error([], []) is None


def test_the_fitted_temperature_lowers_the_nll_of_a_synthetic_set() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(400, 5))
    targets = np.array([row.argmax() if rng.random() < 0.6 else rng.integers(5) for row in logits])

    def nll(t: float) -> float:
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        return float((np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(z)), targets]).mean())

    fitted = fit_temperature(logits, targets, np)
    assert nll(fitted) < min(nll(0.05), nll(20.0))
    assert all(nll(fitted) <= nll(t) + 1e-6 for t in (fitted * 0.8, fitted * 1.25))


def test_the_fit_uses_only_the_tree_and_lowers_the_ece(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, SKILLS)
    engine = create_engine("local")
    scorer = LeafScorer(tree, engine, examples="centroid")
    calibration = scorer.calibration()
    assert calibration.fitted and calibration.held_out == sum(len(v) for v in SKILLS.values())
    # the same tree gives the same fit: nothing but its skills and examples went in
    assert LeafScorer(tree, engine, examples="centroid").calibration() == calibration
    requests = [
        Example("drop Alice a line about the budget", "email.compose"),
        Example("anything I wrote but never sent?", "email.list_drafts"),
        Example("set up a call with the bank on Thursday", "calendar.add_event"),
        Example("what meetings do I have today", "calendar.list_events"),
        Example("don't let me forget to pay rent", "todos.add"),
        Example("save a note that the code is 1234", "notes.add"),
        Example("look through my notes for the code", "notes.search"),
        Example("I finished the laundry task", "todos.complete"),
    ]
    fitted = run_sync(route_all(create_strategy("examples", tree, engine), requests))
    fixed = run_sync(route_all(create_strategy("examples", tree, engine, temperature=0.005), requests))
    nll_fitted = -sum(np.log(o.confidence if o.correct else 1 - o.confidence + 1e-12) for o in fitted)
    nll_fixed = -sum(np.log(o.confidence if o.correct else 1 - o.confidence + 1e-12) for o in fixed)
    assert nll_fitted < nll_fixed


def test_a_tree_without_examples_falls_back_on_the_default(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, {})
    calibration = LeafScorer(tree, create_engine("local"), examples="centroid").calibration()
    assert not calibration.fitted and calibration.temperature == DEFAULT_TEMPERATURE
    assert "default" in calibration.describe()


def test_route_probabilities_are_the_routes_and_sum_to_one(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, SKILLS)
    route = run_sync(create_strategy("best_leaf", tree, create_engine("local")).aroute("show my email drafts"))
    top, last = route.decisions[0].result, route.decisions[-1].result
    for step in route.decisions:
        assert sum(step.result.probabilities.values()) == pytest.approx(1.0)
    # the skill's probability is its branch's share of the top decision at most
    assert last.probabilities[last.selected] <= top.probabilities[top.selected] + 1e-9


def test_best_leaf_picks_the_flat_argmax_when_its_margin_is_clear(tmp_path: Path) -> None:
    tree = tree_with(tmp_path, {})
    engine = create_engine("local")
    strategy = create_strategy("best_leaf", tree, engine, threshold=0.0)
    names = list(tree.skills)
    vectors = engine.embed([tree.skills[n].description for n in names])
    texts = [
        "write an email to my landlord",
        "what is on my calendar this week",
        "search my notes for the recipe",
        "mark the dishes task as done",
        "note down that the car is at the garage",
        "list my email drafts",
    ]
    checked = 0
    for text, query in zip(texts, engine.embed(texts)):
        cosines = vectors @ query
        first, second = np.sort(cosines)[::-1][:2]
        if first - second < 0.1:
            continue
        checked += 1
        route = run_sync(strategy.aroute(text))
        assert route.skill is not None and route.skill.name == names[int(cosines.argmax())], text
    assert checked >= 3


@pytest.mark.slow
def test_semif_eval_prints_the_ece_column(tree_file: Path, dataset_file: Path) -> None:
    command = [sys.executable, "-m", "semif_agent", "eval", str(dataset_file), "--tree", str(tree_file)]
    table = subprocess.run([*command, "--strategy", "examples"], capture_output=True, text=True, check=True).stdout
    assert "ECE" in table.splitlines()[1] and "calibration error" in table
    report = json.loads(
        subprocess.run([*command, "--strategy", "all", "--json"], capture_output=True, text=True, check=True).stdout
    )
    for name in ("best_leaf", "examples", "beam"):
        assert 0.0 <= report["strategies"][name]["calibration_error"] <= 1.0


def test_none_starts_below_the_held_out_examples_that_reach_their_skill() -> None:
    tops = np.array([0.9, 0.8, 0.7, 0.6, 0.25, 0.5])
    right = np.array([True, True, True, True, True, False])
    # no example of what no skill serves: keep every right route, never above the default
    found = fit_none_threshold(tops, right, np.zeros(0), 0.35, np)
    assert 0.25 - 1e-9 <= found < 0.26
    assert fit_none_threshold(np.array([0.9, 0.8]), np.array([True, True]), np.zeros(0), 0.35, np) == 0.35


def test_examples_of_what_no_skill_serves_move_none_to_the_balanced_best_but_never_above_the_default() -> None:
    tops = np.array([0.9, 0.8, 0.7, 0.6, 0.3])
    right = np.ones(5, dtype=bool)
    # requests no skill serves score 0.2 and 0.22: none starts just above them, keeping every right route
    found = fit_none_threshold(tops, right, np.array([0.2, 0.22]), 0.35, np)
    assert 0.22 < found <= 0.3
    # scored higher than the right routes, they cannot pull none above the default
    assert fit_none_threshold(tops, right, np.array([0.95, 0.97]), 0.35, np) <= 0.35


def test_examples_of_what_no_skill_serves_written_close_to_the_skills_take_no_right_route_for_a_few_of_them() -> None:
    # fifty held-out examples reach their skill; ten requests no skill serves score among their lowest. Counted alike,
    # a cut just above 0.325 would catch 3 of them (30%) for 3 right routes (6%): a trade of 5, not worth them.
    tops = np.concatenate([[0.30, 0.31, 0.32], np.linspace(0.4, 0.9, 47)])
    right = np.ones(50, dtype=bool)
    none_tops = np.array([0.305, 0.315, 0.325, 0.6, 0.62, 0.64, 0.66, 0.68, 0.7, 0.72])
    assert fit_none_threshold(tops, right, none_tops, 0.35, np) <= 0.30
    # caught ten times as often as right routes are taken (half of them for one in fifty), they move it
    far = np.array([0.1, 0.12, 0.14, 0.16, 0.305, 0.6, 0.62, 0.64, 0.66, 0.68])
    assert 0.305 < fit_none_threshold(tops, right, far, 0.35, np) <= 0.31


def test_a_tree_with_examples_fits_where_none_starts(tmp_path: Path) -> None:
    scorer = LeafScorer(tree_with(tmp_path, SKILLS), create_engine("local"), examples="centroid")
    fitted = scorer.calibration()
    assert fitted.none_threshold is not None and scorer.default_threshold == fitted.none_threshold
    assert fitted.none_threshold <= 0.35


# Eight skills described tersely (as intent names) and richly, and five requests of each, none worded like either.
DESCRIBED = {
    "alarm.set": ("alarm set", "Set an alarm to wake me up or ring at a given time."),
    "alarm.query": ("alarm query", "Tell me which alarms are set and when they will ring."),
    "weather.query": ("weather query", "Give the weather forecast: rain, sun, temperature for a place and day."),
    "music.play": ("play music", "Play songs, an artist, an album or a playlist."),
    "email.send": ("email sendemail", "Write and send an email message to someone."),
    "calendar.set": ("calendar set", "Put a meeting, appointment or event on my calendar."),
    "lists.add": ("lists createoradd", "Add an item to a list such as the shopping list, or create a new list."),
    "takeaway.order": ("takeaway order", "Order food to be delivered from a restaurant."),
}
ASKED = {
    "alarm.set": [
        "wake me up at six tomorrow",
        "set an alarm for 7:30",
        "I need to be up at five, ring me",
        "alarm for noon please",
        "remind me with a buzzer in twenty minutes",
    ],
    "alarm.query": [
        "what alarms do I have",
        "is my morning alarm on",
        "when will my alarm go off",
        "show all the alarms I set",
        "did I set an alarm for Sunday",
    ],
    "weather.query": [
        "will it rain tomorrow",
        "how hot is it in Madrid",
        "do I need an umbrella today",
        "what's the forecast for the weekend",
        "is it going to snow tonight",
    ],
    "music.play": [
        "play some jazz",
        "put on the new Adele album",
        "I want to hear my running playlist",
        "start playing Beethoven",
        "shuffle my favourite songs",
    ],
    "email.send": [
        "email Tom that I'm running late",
        "send a message to my boss about the report",
        "write to Anna and thank her",
        "mail the landlord about the heating",
        "reply to Sam's email saying yes",
    ],
    "calendar.set": [
        "book a dentist appointment on Friday",
        "add lunch with Dan to my calendar",
        "schedule a team meeting Monday at ten",
        "put the concert on my agenda for Saturday",
        "create an event for mum's birthday",
    ],
    "lists.add": [
        "add eggs to the shopping list",
        "put milk on my groceries",
        "start a new packing list",
        "add call the bank to my list",
        "note bread on the shopping list",
    ],
    "takeaway.order": [
        "order a pizza",
        "get me some sushi delivered",
        "I'd like Thai food brought to the house",
        "order a burger from the place downstairs",
        "can you get a curry delivered tonight",
    ],
}
REQUESTS = [Example(text, skill) for skill, texts in ASKED.items() for text in texts]


def described_tree(tmp_path: Path, rich: bool) -> SkillTree:
    doc = {
        "categories": [{"name": c, "description": c} for c in sorted({n.split(".")[0] for n in DESCRIBED})],
        "skills": [
            {"name": n, "category": n.split(".")[0], "description": texts[rich]} for n, texts in DESCRIBED.items()
        ],
    }
    path = tmp_path / f"{'rich' if rich else 'terse'}.json"
    path.write_text(json.dumps(doc))
    return SkillTree.load(path, tmp_path / "skills")


def test_the_zero_shot_calibration_comes_from_the_tree_alone(tmp_path: Path) -> None:
    tree = described_tree(tmp_path, rich=False)
    scorer = LeafScorer(tree, create_engine("local"))
    calibration = scorer.calibration()
    base, per_log_leaf = SPREAD_TEMPERATURE
    assert not calibration.fitted and calibration.spread_scale == pytest.approx(
        base + per_log_leaf * np.log(8), abs=1e-4
    )
    assert scorer.default_threshold == calibration.none_threshold == ZERO_SHOT_NONE
    assert "too few examples" in calibration.describe()
    # a request's probabilities depend on it and the tree only, not on what else was routed before
    strategy = create_strategy("best_leaf", tree, create_engine("local"))
    alone = run_sync(strategy.aroute("wake me up at six tomorrow")).decisions[-1].result.probabilities
    run_sync(route_all(strategy, REQUESTS))
    again = run_sync(strategy.aroute("wake me up at six tomorrow")).decisions[-1].result.probabilities
    assert alone == pytest.approx(again)


@pytest.mark.parametrize("rich", [False, True], ids=["terse", "rich"])
def test_terse_and_rich_descriptions_both_get_calibrated_probabilities_without_examples(
    tmp_path: Path, rich: bool
) -> None:
    tree = described_tree(tmp_path, rich)
    engine = create_engine("local")
    after = summarize(run_sync(route_all(create_strategy("best_leaf", tree, engine), REQUESTS)), tree)
    fixed = create_strategy("best_leaf", tree, engine, temperature=DEFAULT_TEMPERATURE, threshold=0.35)
    before = summarize(run_sync(route_all(fixed, REQUESTS)), tree)
    assert after["calibration_error"] <= 0.16
    assert after["accuracy"] >= before["accuracy"]
    if not rich:  # terse names score their requests low: a fixed temperature and cut were far off
        assert before["calibration_error"] >= 0.2 and after["calibration_error"] <= before["calibration_error"] - 0.1
        assert after["accuracy"] >= before["accuracy"] + 0.15


def test_the_zero_shot_none_cut_catches_unrelated_requests_and_keeps_the_skills_own(tmp_path: Path) -> None:
    for rich in (False, True):
        strategy = create_strategy("best_leaf", described_tree(tmp_path, rich), create_engine("local"))
        for text in ("what is the boiling point of tungsten", "who wrote war and peace"):
            assert run_sync(strategy.aroute(text)).skill is None, text
        routed = run_sync(route_all(strategy, REQUESTS))
        assert all(o.predicted is not None for o in routed)


@pytest.mark.parametrize("name", ["chain", "beam", "shortlist"])
def test_strategies_deciding_by_the_engine_get_calibrated_route_probabilities(tmp_path: Path, name: str) -> None:
    tree = described_tree(tmp_path, rich=False)
    engine = create_engine("local")
    after_outcomes = run_sync(route_all(create_strategy(name, tree, engine), REQUESTS))
    before_outcomes = run_sync(
        route_all(create_strategy(name, tree, engine, temperature=DEFAULT_TEMPERATURE), REQUESTS)
    )
    # calibration only: every request goes where it went
    assert [o.predicted for o in after_outcomes] == [o.predicted for o in before_outcomes]
    after, before = summarize(after_outcomes, tree), summarize(before_outcomes, tree)
    # terse descriptions: measured 0.23-0.27 before, 0.16 after for each of the three
    assert after["calibration_error"] < before["calibration_error"] and after["calibration_error"] <= 0.2
    # each decision's options add up to at most 1 (the rest under other branches)
    route = run_sync(create_strategy(name, tree, engine).aroute("wake me up at six tomorrow"))
    for step in route.decisions:
        assert step.result.probabilities is not None and sum(step.result.probabilities.values()) <= 1 + 1e-9


def test_a_route_ended_by_none_scores_none_by_how_terse_the_descriptions_are(tmp_path: Path) -> None:
    engine = create_engine("local")
    terse, rich = (LeafScorer(described_tree(tmp_path, r), engine).current() for r in (False, True))
    assert 1 <= terse.words_per_leaf < 4 < rich.words_per_leaf
    # terse descriptions score the requests they serve low: a low best score says less that no skill serves it
    assert none_route_score(terse.words_per_leaf) < none_route_score(rich.words_per_leaf)
    assert none_route_score(0) == none_route_score(1) == pytest.approx(0.18)
    # a model ends the route (the local engine's own shortlist is derived from the leaves: routing/builtin.py)
    strategy = create_strategy(
        "shortlist", described_tree(tmp_path, rich=False), ScriptedEngine(["none"]), scorer_engine=engine
    )
    unserved = run_sync(route_all(strategy, [Example("who wrote war and peace", None)]))
    index = strategy.scorer.current()
    leaf_scores, _ = strategy.leaf_scores("who wrote war and peace", index)
    _, expected = strategy.route_probabilities(index, leaf_scores, none_route_score(index.words_per_leaf))
    assert unserved[0].predicted is None and unserved[0].confidence == pytest.approx(expected)
