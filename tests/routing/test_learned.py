"""The learned router: trained from every source, refused when the tree moved away, decisions still SemIf decisions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from semif_agent._sync import run_sync
from semif_agent.cli import main
from semif_agent.engine import create_engine
from semif_agent.records import DecisionLog, DecisionRow, RunRecord
from semif_agent.routing._fitting import Fitter
from semif_agent.routing.evaluate import Example
from semif_agent.routing.learned import Learned, LearnedHead, LearnedScorer, RouterMismatch
from semif_agent.routing.scoring import LeafScorer
from semif_agent.routing.training import (
    TrainingExample,
    examples_from_dataset,
    examples_from_log,
    examples_from_tree,
    train,
)
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree
from semif_agent.workspace import Workspace

from .conftest import DATASET


@pytest.fixture(scope="module")
def engine():
    return create_engine("local")


@pytest.fixture
def tree(tree_file: Path) -> SkillTree:
    return SkillTree.load(tree_file, tree_file.parent)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def route(strategy, text: str) -> str | None:
    found = run_sync(strategy.aroute(text))
    return found.skill.name if found.skill else None


def test_each_source_gives_rows(tree: SkillTree) -> None:
    assert {r.skill for r in examples_from_tree(tree)} == {"email.compose", "calendar.add_event"}
    rows = examples_from_dataset([Example("hi there", None), Example("log my run", "notes.add")], tree)
    assert [(r.skill, r.source) for r in rows] == [(None, "dataset"), ("notes.add", "dataset")]
    runs = [
        RunRecord("a", "mail Bob", "notes.add", "success", "run", label_skill="email.compose", label_has_skill=True),
        RunRecord("b", "weather?", "notes.add", "success", "run", label_skill=None, label_has_skill=True),
        RunRecord("c", "save a memo", "notes.add", "success", "run"),
        RunRecord("d", "book lunch", "todos.add", "failure", "run", evidence={"handed_back": False}),
        RunRecord("e", "book dinner", "todos.add", "failure", "run", evidence={"handed_back": True}),
        RunRecord("f", "book a call", "todos.add", "success", "run", label_outcome="failure"),
        RunRecord("g", "old", "gone.skill", "success", "run"),
    ]
    taught = examples_from_log(runs, tree)
    assert [(r.text, r.skill, r.wrong, r.source, r.weight) for r in taught] == [
        ("mail Bob", "email.compose", None, "label", 4.0),
        ("weather?", None, None, "label", 4.0),
        ("save a memo", "notes.add", None, "success", 0.5),
        ("book lunch", None, "todos.add", "failure", 0.5),  # a hand-back blames the skill, not the route: left out
        ("book a call", None, "todos.add", "failure", 1.0),
    ]


@pytest.mark.slow
def test_a_dataset_teaches_what_the_names_alone_miss(tree: SkillTree, engine) -> None:
    # "stand-up" is in no description: untrained, these go elsewhere; taught, they go to calendar.add_event.
    teach = [
        TrainingExample(f"put the stand-up with team {t} on the board", "calendar.add_event", "dataset")
        for t in range(40)
    ]
    teach += [TrainingExample(f"jot down idea number {n} for later", "notes.add", "dataset") for n in range(40)]
    teach += [TrainingExample(f"what is the weather in city {n}", None, "dataset") for n in range(40)]
    router, report = train(tree, teach, engine, held_out=0.5)  # enough rows held out to measure on
    strategy = Learned(tree, engine, LearnedScorer(tree, engine, router))
    assert route(strategy, "put the stand-up with team zeta on the board") == "calendar.add_event"
    assert route(strategy, "what is the weather in city 99") is None  # none was learned from the null rows
    assert report.counts == {"dataset": 120, "none": 40} and report.held_out
    assert report.after["in_scope_accuracy"] is not None and report.after["out_of_scope_recall"] is not None
    assert report.calibration["temperature"] > 0


def test_decisions_stay_semif_decisions_with_probabilities_and_none(tree: SkillTree, engine) -> None:
    router, _ = train(
        tree, examples_from_tree(tree) + [TrainingExample("add milk to the list", "todos.add", "dataset")], engine
    )
    found = run_sync(Learned(tree, engine, LearnedScorer(tree, engine, router)).aroute("add eggs to my to-do list"))
    assert found.skill is not None and found.skill.name == "todos.add"
    for step in found.decisions:
        options = step.request.option_ids
        assert len(options) <= 16 and options[-1] == "none"
        assert set(step.result.probabilities) == set(options)
        assert abs(sum(step.result.probabilities.values()) - 1.0) < 1e-6


def test_a_tree_that_moved_away_is_refused_and_a_new_skill_is_scored_untrained(
    tree: SkillTree, engine, tmp_path
) -> None:
    router, _ = train(
        tree,
        [
            TrainingExample(f"{verb} {thing}", skill, "dataset")
            for verb, thing, skill in [
                ("email", "Ann", "email.compose"),
                ("mail", "Ben", "email.compose"),
                ("note", "keys", "notes.add"),
                ("jot", "code", "notes.add"),
                ("todo", "bins", "todos.add"),
                ("task", "taxes", "todos.add"),
            ]
        ],
        engine,
    )
    gone = SkillTree(tree.categories, {n: s for n, s in tree.skills.items() if n.startswith("calendar")})
    with pytest.raises(RouterMismatch, match="only 0 of them are still in the tree"):
        LearnedScorer(gone, engine, router)
    from dataclasses import replace

    grown = SkillTree(
        tree.categories,
        {
            **tree.skills,
            "calendar.free_slots": replace(
                tree.skills["calendar.list_events"], name="calendar.free_slots", description="Find free time slots"
            ),
        },
    )
    scorer = LearnedScorer(grown, engine, router)
    logits, _ = scorer.learned("when am I free on Tuesday")
    untrained = scorer.__class__.__mro__[1].score_array(scorer, "when am I free on Tuesday")
    new = scorer.current().names.index("calendar.free_slots")
    assert logits[new] == pytest.approx(router.unseen_bias + router.beta * untrained[new])


def test_save_and_load_and_a_damaged_router(tree: SkillTree, engine, make_workspace) -> None:
    ws = Workspace.load(make_workspace())
    router, _ = train(tree, examples_from_tree(tree), engine)
    router.save(ws)
    again = LearnedHead.load(ws)
    assert again.classes == router.classes and again.temperature == router.temperature
    assert again.vocabulary.words == router.vocabulary.words
    (ws.data_dir / "router.npz").write_bytes(b"not a zip")
    with pytest.raises(RouterMismatch, match="cannot be read"):
        LearnedHead.load(ws)


@pytest.mark.slow
def test_the_loop_label_train_and_the_reworded_request_routes_right(tmp_path: Path) -> None:
    root = str(create_workspace(tmp_path / "ws"))
    code, out, _ = invoke("run", "show my unsent messages", "-w", root, "--json")
    first = json.loads(out)
    assert first["skill"] != "email.list_drafts"  # the untrained router gets it wrong
    code, out, err = invoke("label", first["run_id"], "--skill", "email.list_drafts", "-w", root)
    assert code == 0, err
    code, out, err = invoke("train", "-w", root)
    assert code == 0, err
    assert "learned 11 skills from" in out and "1 label" in out
    code, out, _ = invoke("run", "list the messages I have not sent yet", "-w", root, "--json")
    after = json.loads(out)
    assert after["skill"] == "email.list_drafts"
    assert after["decisions"][0]["engine"] == "local" and "none" in after["decisions"][0]["probabilities"]
    assert json.loads((Path(root) / "data" / "routing.json").read_text())["strategy"] == "learned"
    stored = json.loads((Path(root) / "data" / "router.json").read_text())
    assert stored["counts"]["label"] == 1 and stored["model"] and stored["trained_at"]


@pytest.mark.slow
def test_a_failure_label_moves_the_router_away_from_the_wrong_skill(tmp_path: Path) -> None:
    root = str(create_workspace(tmp_path / "ws"))
    code, out, _ = invoke("run", "Find the banana bread recipe", "-w", root, "--json")
    wrong = json.loads(out)["skill"]  # notes.add, on a fresh starter
    invoke("label", json.loads(out)["run_id"], "--outcome", "failure", "-w", root)
    assert invoke("train", "-w", root)[0] == 0
    code, out, _ = invoke("run", "Find the banana bread recipe", "-w", root, "--json")
    assert json.loads(out)["skill"] != wrong


@pytest.mark.slow
def test_eval_lists_learned_with_the_other_strategies(tmp_path: Path, dataset_file: Path, tree_file: Path) -> None:
    root = str(create_workspace(tmp_path / "ws"))
    assert invoke("train", "-w", root)[0] == 0
    rows = [json.loads(line) for line in (Path(__file__).parent / "starter_requests.jsonl").read_text().splitlines()]
    data = tmp_path / "set.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows[:12]))
    code, out, err = invoke("eval", str(data), "-w", root, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert "learned" in report["strategies"] and report["strategies"]["learned"]["examples"] == 12
    code, out, err = invoke("eval", str(dataset_file), "--tree", str(tree_file), "--strategy", "learned")
    assert code == 1 and "pass -w" in err


@pytest.mark.slow
def test_run_with_a_damaged_router_warns_and_routes_the_untrained_way(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    assert invoke("train", "-w", str(root))[0] == 0
    (root / "data" / "router.npz").write_bytes(b"")
    code, out, err = invoke("run", "Email Alice that the report is ready", "-w", str(root), "--json")
    assert code == 0 and json.loads(out)["skill"] == "email.compose"
    assert "cannot be read" in err and "routing the untrained way" in err


def test_nothing_to_learn_is_one_clear_error(make_workspace) -> None:
    root = make_workspace()
    code, _, err = invoke("train", "-w", str(root), "--no-log")
    assert code == 1 and "nothing to learn from" in err


def test_decision_rows_of_learned_routing_are_logged(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    invoke("train", "-w", str(root))
    invoke("run", "add buy milk to my to-do list", "-w", str(root))
    rows = [
        r
        for r in DecisionLog(root / "data" / "decisions.jsonl").read()
        if isinstance(r, DecisionRow) and r.kind == "route"
    ]
    assert rows and all(r.probabilities and "none" in r.probabilities for r in rows)


def test_a_replay_ends_where_routing_ends(tree: SkillTree, engine) -> None:
    """The destination a replay reads (no decision records) is the skill a full route ends at, learned or not."""
    from semif_agent.routing import create_strategy
    from semif_agent.routing.switching import routed_skills

    teach = [TrainingExample(f"jot down idea number {n} for later", "notes.add", "dataset") for n in range(30)]
    teach += [TrainingExample(f"what is the weather in city {n}", None, "dataset") for n in range(30)]
    router, _ = train(tree, teach + examples_from_tree(tree), engine)
    texts = [text for text, _ in DATASET] + [f"jot down idea number {n}" for n in (3, 77)] + ["weather in city 5", ""]
    for strategy in (
        Learned(tree, engine, LearnedScorer(tree, engine, router)),
        create_strategy("best_leaf", tree, engine),
        create_strategy("examples", tree, engine),
    ):
        ends = [route(strategy, text) for text in texts]
        assert routed_skills(strategy, texts) == ends
        assert {None, "notes.add"} <= set(ends) or strategy.name != "learned"


def test_training_starts_from_the_centroids_the_examples_strategy_routes_by(tree: SkillTree, engine) -> None:
    """One centroid for both: a part fitted on the tree's own examples starts each skill where the untrained
    ``examples`` strategy stands it (its description and examples summed and scaled to length 1)."""
    fitter = Fitter(tree, engine, examples_from_tree(tree), base_threshold=None)
    part = fitter.part(np.arange(len(fitter.rows)))
    index = LeafScorer(tree, engine, examples="centroid").current()
    columns = [fitter.position[name] for name in part.skills]
    started = fitter.descriptions[columns] + part.shift
    assert np.allclose(started, index.vectors[[index.position[name] for name in part.skills]], atol=1e-5)
