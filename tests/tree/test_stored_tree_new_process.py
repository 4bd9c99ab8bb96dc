"""A new process finds the stored tree and uses it: nothing is placed, embedded or written again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from semif_agent.tree.workspace_tree import tree_file
from semif_agent.workspace import Workspace

from .test_workspace_tree import skill

pytestmark = pytest.mark.slow  # two new processes, each importing the package: about 8 s on a busy machine

LOAD = """
import json, sys
from semif_agent.tree import SkillTree, _vectors, workspace_tree
from semif_agent.workspace import Workspace

counts = {"builds": 0, "embedded": 0}
update = workspace_tree.update_tree

def counted_update(*args, **kwargs):
    counts["builds"] += 1
    return update(*args, **kwargs)

def counted_embed(texts):
    counts["embedded"] += len(texts)
    return _vectors.word_vectors(texts)

workspace_tree.update_tree = counted_update
tree = SkillTree.for_workspace(Workspace.load(sys.argv[1]), embed=counted_embed)
print(json.dumps({**counts, "skills": sorted(tree.skills)}))
"""


def load_in_a_new_process(root: Path) -> dict:
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(root)], env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


def test_a_new_process_reuses_the_stored_tree(make_workspace) -> None:
    root = make_workspace({"email.compose": None})
    for number in range(20):
        skill(root / "skills" / "pack", f"task-{number}", f"Handle task number {number} of the release checklist.")
    first = load_in_a_new_process(root)
    stored = tree_file(Workspace.load(root))
    before = (stored.read_bytes(), stored.stat().st_mtime_ns)

    again = load_in_a_new_process(root)

    assert first["builds"] == 1 and first["embedded"] >= 20
    assert again["builds"] == 0 and again["embedded"] == 0, "the stored tree is read, not built again"
    assert again["skills"] == first["skills"]
    assert (stored.read_bytes(), stored.stat().st_mtime_ns) == before
