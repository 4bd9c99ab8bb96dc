"""Which words the learned router learns from: a word that marks one skill stays known however many skills there are."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from semif_agent.engine import create_engine
from semif_agent.routing._fitting import Fitter
from semif_agent.routing.training import TrainingExample
from semif_agent.tree import SkillTree
from semif_agent.tree.build import LeafSpec, build_tree

LETTERS = "bcdfghjklmnpqrstvwxz"


def made_up(number: int, ending: str) -> str:
    """A word of letters only, one per number (no stemming touches its ending)."""
    return "".join(LETTERS[int(digit)] for digit in f"{number:03d}") + ending


def vocabulary_of(tmp_path: Path, skills: int, per_skill: int) -> set[str]:
    """The words a training of ``per_skill`` requests for each of ``skills`` skills learns from: each skill's
    requests share its filler word, and two of them carry the skill's own marker word."""
    flat = [LeafSpec(f"tool{made_up(k, 'ix')}", f"the {made_up(k, 'ix')} service") for k in range(skills)]
    (tmp_path / "tree.json").write_text(json.dumps(build_tree(flat)))
    tree = SkillTree.load(tmp_path / "tree.json", tmp_path)
    rows = [
        TrainingExample(
            f"ask {made_up(k, 'ul')} request {made_up(j, 'ab')}" + (f" {made_up(k, 'ome')}" if j < 2 else ""),
            skill.name,
            "dataset",
        )
        for k, skill in enumerate(flat)
        for j in range(per_skill)
    ]
    rng = np.random.default_rng(0)

    def encoder(texts, progress):  # the requests' vectors do not matter here: only their words
        vectors = rng.normal(size=(len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), np.zeros((len(texts), len(flat)))

    fitter = Fitter(tree, create_engine("local"), rows, base_threshold=None, encoder=encoder)
    return set(fitter.vocabulary.words)


@pytest.mark.slow
def test_a_word_that_marks_one_skill_among_many_is_learned_from(tmp_path: Path) -> None:
    # 5,000 requests of 250 skills, 20 each: a skill's marker is in 2 of its requests, a tenth of them. A share of
    # all requests (1 in 2,000: at least 3 requests) left every marker out.
    words = vocabulary_of(tmp_path, 250, 20)
    markers = {made_up(k, "ome") for k in range(250)}
    assert markers <= words


def test_among_many_requests_of_few_skills_a_word_seen_twice_is_still_left_out(tmp_path: Path) -> None:
    # 5,000 requests of 5 skills: a word in 2 of a skill's 1,000 requests carries little over the embedding, and
    # costs a weight per class in every step of the fit.
    words = vocabulary_of(tmp_path, 5, 1000)
    assert not {made_up(k, "ome") for k in range(5)} & words
    assert {made_up(k, "ul") for k in range(5)} <= words
