"""Measuring the act threshold costs a few strategies and a bounded number of routings, whatever the tree's size.

Each example used to be left out on a strategy built for it alone (a calibration each): on a tree of a
thousand real skills and the starter's examples, the first run spent minutes there before it answered.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.loop import act_threshold
from semif_agent.loop.act_threshold import MAX_EXAMPLES, MAX_FOLDS, STAGE, Measuring, act_pairs
from semif_agent.loop.settings import RunSettings
from semif_agent.starter import create_workspace
from semif_agent.tree.tree import SkillTree
from semif_agent.workspace import Workspace


def larger(tree: SkillTree, copies: int) -> SkillTree:
    """``tree`` with ``copies`` more skills beside each one, each with its own examples."""
    skills = dict(tree.skills)
    for name, skill in tree.skills.items():
        for copy in range(copies):
            examples = tuple(f"{example} for project {copy}" for example in skill.examples)
            skills[f"{name}_{copy}"] = dataclasses.replace(skill, name=f"{name}_{copy}", examples=examples)
    return SkillTree(dict(tree.categories), skills, none_examples=tree.none_examples)


@pytest.fixture(scope="module")
def larger_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunSettings, Any, SkillTree, Any]:
    settings = RunSettings.resolve(Workspace.load(create_workspace(tmp_path_factory.mktemp("measuring") / "ws")))
    engine = create_engine("lexical")
    tree = larger(settings.build_tree(engine), copies=12)
    return settings, engine, tree, settings.build_strategy(tree, engine)


@pytest.fixture
def measuring(larger_tree, monkeypatch: pytest.MonkeyPatch) -> tuple[Measuring, dict[str, int]]:
    settings, engine, tree, strategy = larger_tree
    counts = {"strategies": 0, "routes": 0}
    build, gate = RunSettings.build_strategy, act_threshold.gate_route

    def counted_build(self, *args, **kwargs):
        counts["strategies"] += 1
        return build(self, *args, **kwargs)

    def counted_gate(*args, **kwargs):
        counts["routes"] += 1
        return gate(*args, **kwargs)

    monkeypatch.setattr(RunSettings, "build_strategy", counted_build)
    monkeypatch.setattr(act_threshold, "gate_route", counted_gate)
    return Measuring(settings, tree, engine, strategy), counts


def test_a_larger_tree_builds_a_few_strategies_and_routes_a_bounded_sample(measuring) -> None:
    runner, counts = measuring
    examples = sum(len(s.examples) for s in runner.tree.skills.values())
    assert len(runner.tree.skills) > 100 and examples > 2 * MAX_EXAMPLES
    labelled = [("Add milk to my todo list", "todos.add")] * 500

    pairs = run_sync(act_pairs(runner, labelled))

    assert counts["strategies"] <= MAX_FOLDS, "one strategy per fold, not one per example left out"
    assert counts["routes"] <= MAX_EXAMPLES + act_threshold.MAX_LABELLED
    assert len(pairs) >= act_threshold.MIN_PAIRS, "still measured: routes to skills that write"


def test_measuring_says_how_far_it_is(measuring) -> None:
    runner, counts = measuring
    heard: list[tuple[str, int, int]] = []
    runner = dataclasses.replace(runner, progress=lambda stage, done, total: heard.append((stage, done, total)))

    run_sync(act_pairs(runner))

    assert heard and {stage for stage, _, _ in heard} == {STAGE}
    assert heard[-1][1] == heard[-1][2] == counts["routes"], "each routing reported, the last one at the total"


def test_a_runner_without_a_workspace_is_measured_on_its_tree_and_keeps_nothing(larger_tree) -> None:
    settings, engine, tree, strategy = larger_tree
    runner = Measuring(settings, tree, engine, strategy)  # no workspace, no log: only the tree's examples

    found = run_sync(act_threshold.measured_act_threshold(runner))

    assert found == act_threshold.act_threshold_for(run_sync(act_pairs(runner)))
    assert settings.workspace is not None
    assert not (settings.workspace.data_dir / act_threshold.THRESHOLD_FILE).exists()
