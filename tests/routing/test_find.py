"""Finding skills for a client to choose from: the cosine and BM25 fused over every leaf, on real skills."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from semif_agent.engine import create_engine
from semif_agent.routing import LeafScorer
from semif_agent.routing.calibration import fuse
from semif_agent.tree import SkillTree
from semif_agent.tree.build import load_flat_skills
from semif_agent.tree.manifests import Category, SkillManifest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "skills-corpus"
REQUESTS = ROOT / "bench" / "data" / "skill_requests.jsonl"


def test_fusion_keeps_the_cosines_scale_and_lets_a_keyword_decide() -> None:
    cosines = np.array([[0.50, 0.48, 0.20, 0.10], [0.30, 0.31, 0.29, 0.05]])
    keywords = np.array([[0.0, 0.9, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    fused = fuse(cosines, keywords, 1.0, np)
    assert fused[0].argmax() == 1  # the keyword lifts the near second over the first
    assert np.allclose(fused.mean(axis=1), cosines.mean(axis=1)) and np.allclose(fused.std(axis=1), cosines.std(axis=1))
    assert np.allclose(fused[1], cosines[1])  # no known word: the cosines as they are
    assert np.allclose(fuse(cosines[0], keywords[0], 1.0, np), fused[0])  # one row alone gives the same
    assert fuse(cosines, keywords, 0.0, np) is cosines


def corpus_tree() -> SkillTree:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = load_flat_skills(CORPUS)
    skills = {s.name: SkillManifest(s.name, "skills", s.description) for s in flat}
    return SkillTree({"skills": Category("skills", "Skills.")}, skills)


def hits(rank, requests: list[dict]) -> tuple[int, int]:
    top1 = top5 = 0
    for item in requests:
        best = [name for name, _ in rank(item["text"])]
        top1 += best[0] == item["skill"]
        top5 += item["skill"] in best
    return top1, top5


def test_find_does_at_least_as_well_as_bm25_or_the_encoder_alone_on_real_skills() -> None:
    tree = corpus_tree()
    requests = [json.loads(line) for line in REQUESTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    requests = [item for item in requests if item["set"] == "corpus" and item["skill"] in tree.skills]
    assert len(requests) >= 60
    local = create_engine("local")
    found = hits(lambda text: LeafScorer(tree, local).find(text, 5), requests)
    dense = hits(lambda text: LeafScorer(tree, local, lexical_weight=0.0).top(text, 5), requests)
    bm25 = hits(lambda text: LeafScorer(tree, create_engine("lexical")).top(text, 5), requests)
    assert found[0] >= max(dense[0], bm25[0]) and found[1] >= max(dense[1], bm25[1]), (found, dense, bm25)


def test_without_bm25_find_ranks_as_the_scores_do() -> None:
    tree = corpus_tree()
    for scorer in (
        LeafScorer(tree, create_engine("local"), lexical_weight=0.0),
        LeafScorer(tree, create_engine("lexical")),
    ):
        text = "the checks on my pull request are failing"
        assert scorer.find(text, 3) == scorer.top(text, 3)
