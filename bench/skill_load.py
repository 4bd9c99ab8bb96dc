"""Load real SKILL.md collections as users install them: what loaded, what was left out and why, and how fast.

    .venv/bin/python bench/skill_load.py [--collections DIR] [--rounds 2]

Makes a fresh workspace (``semif init``) and copies every package that
``bench/skill_collections.py`` fetched into its ``skills/`` folder, laid out
as the package ships it. Then it scans the workspace as every command does
and prints: the folders holding a SKILL.md on disk (a plain walk that follows
no link), the skills loaded, the folders left out by reason, how many of the
folders on disk were neither loaded nor named with a reason (0 is the
promise), and the same-name skills kept apart under distinct ids. The time is
the best of ``--rounds`` scans, wall and CPU (a loaded machine shows in the
wall time). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from skill_collections import DEST

from semif_agent.catalog.loader import SKILL_MD_NAMES, is_skipped_folder
from semif_agent.catalog.names import skill_md_leaf_id
from semif_agent.starter import create_workspace
from semif_agent.tree.leaf_ids import distinct_ids
from semif_agent.tree.skill_md import SkillMdScan, scan_skill_md
from semif_agent.tree.skill_md_report import SkillMdReport
from semif_agent.workspace import Workspace


def folders_on_disk(root: Path) -> set[str]:
    """Every folder below ``root`` holding an entry named SKILL.md (links not followed; version control, caches
    and environments left aside, as the search leaves them)."""
    found = set()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if not is_skipped_folder(name)]
        if any(name in SKILL_MD_NAMES for name in [*files, *subfolders]):
            found.add(os.path.normpath(folder))
    return found


def timed_scan(workspace: Workspace, rounds: int) -> tuple[SkillMdScan, float, float]:
    """The scan, and its best wall and CPU seconds over ``rounds`` runs."""
    best_wall = best_cpu = float("inf")
    scan = SkillMdScan()
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        scan = scan_skill_md(workspace)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return scan, best_wall, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=Path, default=DEST, help="the fetched packages (skill_collections.py)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not args.collections.is_dir():
        sys.exit(f"{args.collections}: no such folder; fetch the packages with: python bench/skill_collections.py")
    with tempfile.TemporaryDirectory() as tmp:
        root = create_workspace(Path(tmp) / "ws")
        skills = root / "skills"
        packages = sorted(path for path in args.collections.iterdir() if path.is_dir())
        for package in packages:
            shutil.copytree(package, skills / package.name, symlinks=True)
        workspace = Workspace.load(root)
        scan, wall, cpu = timed_scan(workspace, args.rounds)
        on_disk = folders_on_disk(skills)
        loaded = {os.path.normpath(found.folder) for found in scan.skills}
        left_out = {os.path.normpath(item.folder) for item in scan.skipped}
        unexplained = on_disk - loaded - left_out
        ids, collisions = distinct_ids(
            [(skill_md_leaf_id(found.name, found.folder.name), found.folder) for found in scan.skills]
        )
        print(f"{len(packages)} packages copied into a fresh workspace's skills/")
        print(f"folders holding a SKILL.md on disk: {len(on_disk)}")
        print(f"skills loaded: {len(loaded)} (distinct ids: {len(set(ids))}; same-name kept apart: {len(collisions)})")
        report = SkillMdReport.bounded((), scan.skipped, scan.more_skipped)
        print(f"folders left out, each with its reason: {report.left_out}")
        for reason, count in report.left_out_counts().items():
            print(f"  {count:5d}  {reason}")
        counted = sum(scan.more_skipped.values())  # left out past the ones a search names: counted, not named
        among = f" (some may be among the {counted} counted by reason, not named)" if counted else ""
        print(f"left out without a reason: {len(unexplained)}{among}")
        for folder in sorted(unexplained)[:10]:
            print(f"  {folder}")
        print(f"scan: {wall:.2f} s wall, {cpu:.2f} s CPU (best of {args.rounds})")


if __name__ == "__main__":
    main()
