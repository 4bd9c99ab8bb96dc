"""Leaf scoring over per-tree indexes gives the scores of the plain computation, and routes the same way.

The reference here is the straightforward computation: ``LexicalEngine().score``
over every leaf as an option, and the cosine between the request and each
leaf's text (and examples) embedded one by one; a category scores its best
leaf, and the walk takes the best option at each level.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import ScriptedEngine, create_engine
from semif_agent.engine.decisions import NONE_ID, Option
from semif_agent.engine.lexical import LexicalEngine
from semif_agent.routing import LeafScorer, create_strategy
from semif_agent.routing.calibration import NEAR
from semif_agent.routing.scoring import leaf_text as embedded_text
from semif_agent.tree import SkillTree
from semif_agent.tree.manifests import SkillManifest

from .conftest import DATASET, TREE

REQUESTS = [text for text, _ in DATASET] + [
    "book the dentist on Friday",
    "list the files in my inbox folder",
    "export the quarterly budget report",
    "rename the vacation photo album",
    "what is on my plate for lunch",
    "note: call the plumber",
]
VERBS = "add find list send delete move schedule cancel archive rename share export track convert".split()
NOUNS = "note email file event invoice contact photo report meeting reminder playlist budget recipe ticket".split()


@pytest.fixture(scope="module")
def nested_tree(tmp_path_factory: pytest.TempPathFactory) -> SkillTree:
    """The routing test tree, with nested categories and generated skills that share many words."""
    rng = random.Random(7)
    categories = [dict(c) for c in TREE["categories"]] + [
        {"name": "office", "description": "Office work"},
        {"name": "office_docs", "description": "Documents and reports", "parent": "office"},
        {"name": "office_money", "description": "Invoices and budgets", "parent": "office"},
        {"name": "media", "description": "Photos and music"},
    ]
    skills = [dict(s) for s in TREE["skills"]]
    homes = ["office", "office_docs", "office_money", "media"]
    for i in range(40):
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        category = homes[i % len(homes)]
        skill = {
            "name": f"{category}.{verb}_{noun}_{i}",
            "category": category,
            "description": f"{verb.capitalize()} a {noun} in the {category.replace('_', ' ')} space",
        }
        if i % 3 == 0:
            skill["examples"] = [f"please {verb} my {noun}", f"{verb} the {noun} from last week"]
        skills.append(skill)
    path = tmp_path_factory.mktemp("nested") / "tree.json"
    path.write_text(json.dumps({"categories": categories, "skills": skills}))
    return SkillTree.load(path, path.parent)


def leaf_text(skill: SkillManifest, examples: str) -> str:
    return (
        skill.description
        if examples == "off" or not skill.examples
        else f"{skill.description} {' '.join(skill.examples)}"
    )


def reference_scores(tree: SkillTree, engine, text: str, examples: str = "off") -> dict[str, float]:
    """Every leaf's score, computed the plain way."""
    skills = list(tree.skills.values())
    keywords = LexicalEngine().score(text, [Option(s.name, leaf_text(s, examples)) for s in skills])
    if engine.name == "lexical":
        return keywords
    embed = engine.embedder.embed
    query = embed([text])[0].astype(np.float64)
    cosines = {}
    for skill in skills:
        rows = embed([embedded_text(skill.name, skill.description), *skill.examples]).astype(np.float64)
        if examples == "off":
            cosine = rows[0] @ query
        elif examples == "nn":
            cosine = max(rows @ query)
        else:
            centroid = rows.sum(axis=0)
            cosine = centroid @ query / np.linalg.norm(centroid)
        cosines[skill.name] = float(cosine)
    # the tree's fitted blend; BM25 re-ranks only the leaves near the best cosine
    weight = LeafScorer(tree, engine, examples=examples).calibration().lexical_weight
    best = max(cosines.values())
    return {n: c + (weight * keywords[n] if c >= best - NEAR else 0.0) for n, c in cosines.items()}


def reference_walk(
    tree: SkillTree, scores: dict[str, float], threshold: float
) -> tuple[str | None, list[dict[str, float]]]:
    """The best-leaf walk: each option scores its best leaf, ``none`` the threshold."""
    node, steps = "", []
    while True:
        offered = {}
        for option in tree.options_at(node):
            if option.id == NONE_ID:
                offered[NONE_ID] = threshold
            elif option.id in tree.skills:
                offered[option.id] = scores[option.id]
            else:
                offered[option.id] = max(scores[s.name] for s in tree.leaves_under(option.id))
        steps.append(offered)
        chosen = max(offered, key=lambda k: (offered[k], k == NONE_ID))
        if chosen == NONE_ID or chosen in tree.skills:
            return (None if chosen == NONE_ID else chosen), steps
        node = chosen


@pytest.mark.parametrize("examples", ["off", "nn", "centroid"])
def test_embedded_scores_are_the_cosine_blended_with_bm25(nested_tree: SkillTree, examples: str) -> None:
    engine = create_engine("local")
    scorer = LeafScorer(nested_tree, engine, examples=examples)
    for text in REQUESTS:
        expected = reference_scores(nested_tree, engine, text, examples)
        got = scorer.scores(text)
        assert list(got) == list(expected)
        assert max(abs(got[n] - expected[n]) for n in expected) < 1e-5, text
        array = scorer.score_array(text)
        assert np.allclose(array, [expected[n] for n in scorer.names], atol=1e-5)


def test_lexical_scores_are_the_lexical_engines(nested_tree: SkillTree) -> None:
    scorer = LeafScorer(nested_tree, create_engine("lexical"))
    for text in REQUESTS:
        expected = reference_scores(nested_tree, LexicalEngine(), text)
        got = scorer.scores(text)
        assert got.keys() == expected.keys()
        assert max(abs(got[n] - expected[n]) for n in expected) < 1e-12, text
    assert any(v > 0 for v in scorer.scores("export the quarterly budget report").values())


def test_without_numpy_the_lexical_scorer_and_strategies_use_plain_lists(nested_tree: SkillTree, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now fails, as on an install without it
    scorer = LeafScorer(nested_tree, create_engine("lexical"))
    for text in REQUESTS:
        expected = reference_scores(nested_tree, LexicalEngine(), text)
        assert isinstance(scorer.score_array(text), list)
        got = scorer.scores(text)
        assert max(abs(got[n] - expected[n]) for n in expected) < 1e-12, text
        ranked = sorted(expected, key=expected.get, reverse=True)[:5]
        assert [name for name, _ in scorer.top(text, 5)] == ranked
    strategy = create_strategy("best_leaf", nested_tree, create_engine("lexical"))
    for text in REQUESTS:
        want, steps = reference_walk(
            nested_tree, reference_scores(nested_tree, LexicalEngine(), text), strategy.threshold
        )
        route = run_sync(strategy.aroute(text))
        assert (route.skill.name if route.skill else None) == want
        assert len(route.decisions) == len(steps)
        for decision, expected in zip(route.decisions, steps):
            assert decision.result.scores == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("name", "engine_name"), [("best_leaf", "local"), ("examples", "local"), ("best_leaf", "lexical")]
)
def test_leaf_walks_take_the_reference_route_at_every_level(
    nested_tree: SkillTree, name: str, engine_name: str
) -> None:
    engine = create_engine(engine_name)
    strategy = create_strategy(name, nested_tree, engine)
    examples = "centroid" if name == "examples" else "off"
    deep = 0
    for text in REQUESTS:
        want, steps = reference_walk(
            nested_tree, reference_scores(nested_tree, engine, text, examples), strategy.threshold
        )
        route = run_sync(strategy.aroute(text))
        assert (route.skill.name if route.skill else None) == want, text
        assert len(route.decisions) == len(steps)
        for decision, expected in zip(route.decisions, steps):
            assert [o.id for o in decision.request.options] == list(expected)
            assert decision.result.scores == pytest.approx(expected, abs=1e-5)
        deep += len(route.decisions) > 2
    assert deep  # some requests went through a nested category


def test_beam_starts_from_the_reference_category_scores(nested_tree: SkillTree) -> None:
    engine = create_engine("local")
    strategy = create_strategy("beam", nested_tree, engine)
    for text in REQUESTS:
        _, steps = reference_walk(nested_tree, reference_scores(nested_tree, engine, text), strategy.threshold)
        first = run_sync(strategy.aroute(text)).decisions[0].result
        assert first.scores == pytest.approx(steps[0], abs=1e-5)


@pytest.mark.parametrize("engine_name", ["local", "lexical"])
def test_shortlist_offers_the_reference_top_skills(nested_tree: SkillTree, engine_name: str) -> None:
    offered: list[list[str]] = []
    engine = ScriptedEngine(fn=lambda request: (offered.append([o.id for o in request.options]), NONE_ID)[1])
    scorer_engine = create_engine(engine_name)
    strategy = create_strategy("shortlist", nested_tree, engine, scorer_engine=scorer_engine)
    for text in REQUESTS:
        expected = reference_scores(nested_tree, scorer_engine, text)
        run_sync(strategy.aroute(text))
        # ties (many leaves share no word with a request) keep the tree's order
        assert offered[-1] == sorted(expected, key=expected.get, reverse=True)[:15] + [NONE_ID]


def test_top_ranks_best_first_with_ties_in_tree_order(nested_tree: SkillTree) -> None:
    scorer = LeafScorer(nested_tree, create_engine("lexical"))
    text = "export the quarterly budget report"
    scores = scorer.scores(text)
    ranked = scorer.top(text, len(scores) + 5)
    assert [n for n, _ in ranked] == sorted(scores, key=scores.get, reverse=True)
    assert [s for _, s in ranked] == sorted(scores.values(), reverse=True)
    zeros = [n for n, s in ranked if s == 0.0]
    assert zeros and zeros == [n for n in scorer.names if scores[n] == 0.0]
    assert scorer.top(text, 3) == ranked[:3]
    assert scorer.top(text, 0) == []


def test_the_index_follows_the_trees_skills(tree_file: Path) -> None:
    tree = SkillTree.load(tree_file, tree_file.parent)
    engine = create_engine("local")
    strategy = create_strategy("best_leaf", tree, engine)
    text = "water the tomato plants in the garden"
    assert run_sync(strategy.aroute(text)).skill is None
    tree.skills["todos.water_plants"] = SkillManifest(
        name="todos.water_plants",
        category="todos",
        description="Water the garden plants, tomatoes included",
    )
    assert "todos.water_plants" in strategy.scorer.names
    assert strategy.scorer.scores(text) == pytest.approx(reference_scores(tree, engine, text), abs=1e-5)
    assert run_sync(strategy.aroute(text)).skill.name == "todos.water_plants"
    del tree.skills["todos.water_plants"]
    assert "todos.water_plants" not in strategy.scorer.scores(text)
    assert run_sync(strategy.aroute(text)).skill is None


def test_an_empty_tree_scores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tree.json"
    path.write_text(json.dumps({"categories": [], "skills": []}))
    tree = SkillTree.load(path, tmp_path)
    for engine in (create_engine("local"), create_engine("lexical")):
        scorer = LeafScorer(tree, engine)
        assert scorer.scores("anything") == {} and scorer.top("anything", 5) == []
        route = run_sync(create_strategy("best_leaf", tree, engine).aroute("anything"))
        assert route.skill is None and route.reason == "the skill tree has no skills"
