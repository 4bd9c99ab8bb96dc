"""The act gate on a new user's workspace: the starter with four real packages of SKILL.md skills, no model.

    python bench/gate_installed_skills.py [--collections DIR] [--show]

A workspace made by ``semif init`` gets four whole packages that
``bench/skill_collections.py`` fetches (about 1,600 skills), copied as their
users install them under ``skills/<package>/...``. Each request of
``bench/data/gate_installed_skills.jsonl`` (20 that a skill of those packages
serves, 10 that none does, in everyday words) is decided as ``semif run``
would (``SkillRunner.adecide``), at the act threshold the workspace measures;
nothing runs. Printed: right skills shown (the named skill, or a copy of it
under another folder: ``name~folder``), routes that reached the named skill
and were handed back all the same, and no-skill requests handed back.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from _starter_bench import ROOT  # first: it puts the repository on the import path

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

COLLECTIONS = ROOT / ".bench" / "skill-collections"
PACKAGES = [
    "npm__ecc-universal-2.0.0",
    "pypi__skillforge-agent-1.0.1",
    "pypi__hermes-agent-0.19.0",
    "npm__openclaw-2026.9.6",
]
REQUESTS = ROOT / "bench" / "data" / "gate_installed_skills.jsonl"


def same_skill(name: str | None, wanted: str | None) -> bool:
    return name is not None and name.split("~")[0] == wanted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collections", type=Path, default=COLLECTIONS)
    parser.add_argument("--show", action="store_true", help="print each request's verdict")
    args = parser.parse_args()
    rows = [json.loads(line) for line in REQUESTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    counts: dict[str, Any] = {"right_requests": 0, "right_shown": 0, "route_right": 0, "route_right_handed_back": 0}
    counts |= {"none_requests": 0, "none_handed_back": 0}
    with tempfile.TemporaryDirectory() as scratch:
        root = create_workspace(Path(scratch) / "ws")
        for package in PACKAGES:
            shutil.copytree(args.collections / package, root / "skills" / package, symlinks=True)
        runner = SkillRunner(Workspace.load(root), engine=create_engine("local", {}))
        print(f"{len(runner.tree.skills)} skills, act threshold {run_sync(runner.aact_threshold()):.1%}")
        for row in rows:
            verdict = runner.decide(row["text"])
            wanted = row["skill"]
            routed = verdict.gate.skill if verdict.gate is not None else verdict.skill
            if wanted is None:
                counts["none_requests"] += 1
                counts["none_handed_back"] += verdict.handed_back
            else:
                counts["right_requests"] += 1
                counts["right_shown"] += verdict.acts and same_skill(verdict.skill, wanted)
                if same_skill(routed, wanted):
                    counts["route_right"] += 1
                    counts["route_right_handed_back"] += verdict.handed_back
            if args.show:
                print(f"  {row['text'][:50]:50} want {wanted}: {routed} {verdict.rule} acts={verdict.acts}")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
