"""A tree's calibration is fitted once and kept: a new process reads it back instead of fitting it again.

On a workspace of 4,600 real skills each new `semif run` fitted it anew (a fold per example position, each
with its own index): eight seconds of CPU before every answer.
"""

from __future__ import annotations

import dataclasses

import pytest

from semif_agent.engine import local_available
from semif_agent.engine.embed_cache import EmbeddingStore
from semif_agent.routing import LeafScorer
from semif_agent.routing import scoring as scoring_module
from semif_agent.starter import create_workspace
from semif_agent.tree import SkillTree
from semif_agent.workspace import Workspace

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calibrations were fitted (each entry one fit)."""
    counted: list[int] = []
    fit = scoring_module.LeafScorer._calibrate

    def counting(self, index):
        counted.append(1)
        return fit(self, index)

    monkeypatch.setattr(scoring_module.LeafScorer, "_calibrate", counting)
    return counted


def new_process_scorer(tree: SkillTree, store_path) -> LeafScorer:
    """A scorer as a new process makes one: its own embedder and engine, the same store on disk."""
    from semif_agent.engine.local import Embedder, LocalEngine, model_file

    return LeafScorer(tree, LocalEngine(Embedder(model_file(), store=EmbeddingStore(store_path))), examples="centroid")


@pytest.mark.slow
def test_a_new_process_reads_the_calibration_back_and_a_changed_tree_fits_anew(tmp_path, fits) -> None:
    workspace = Workspace.load(create_workspace(tmp_path / "ws"))
    tree = SkillTree.load(workspace.categories_path, workspace.bodies_dir)
    store = tmp_path / "cache.sqlite3"

    first = new_process_scorer(tree, store).calibration()
    assert first.fitted and len(fits) == 1
    again = new_process_scorer(tree, store).calibration()
    assert again == first and len(fits) == 1, "the second process fitted the calibration again"

    name, skill = next((n, s) for n, s in tree.skills.items() if s.examples)
    changed = SkillTree(
        dict(tree.categories),
        {**tree.skills, name: dataclasses.replace(skill, examples=(*skill.examples, "one more way to ask for it"))},
        none_examples=tree.none_examples,
    )
    new_process_scorer(changed, store).calibration()
    assert len(fits) == 2, "a tree with another example read the old tree's calibration"


def test_a_damaged_kept_calibration_is_fitted_again(tmp_path, fits) -> None:
    workspace = Workspace.load(create_workspace(tmp_path / "ws"))
    tree = SkillTree.load(workspace.categories_path, workspace.bodies_dir)
    store_path = tmp_path / "cache.sqlite3"
    right = new_process_scorer(tree, store_path).calibration()
    store = EmbeddingStore(store_path)
    import sqlite3

    with sqlite3.connect(store_path) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM embeddings WHERE key LIKE 'calibration/%'")]
    assert len(keys) == 1
    for damaged in (b"not json", b'{"temperature": -1}', b'{"temperature": NaN}', b'{"no_such_field": 1}'):
        store.put_many([(keys[0], damaged)])
        assert new_process_scorer(tree, store_path).calibration() == right
    assert len(fits) == 5
