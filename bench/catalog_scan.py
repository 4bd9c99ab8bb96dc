"""Scan and parse a few thousand generated skill folders: semif vs skills-ref vs agentsociety2.

    .venv/bin/python bench/catalog_scan.py [--count 3000] [--rounds 3]

Each figure is the best of ``--rounds`` runs over the same folders (warm file
cache), measured in the same run: semif's ``SkillCatalog.scan_custom`` (and
a ``refresh`` with nothing changed), agentsociety2's ``SkillRegistry.scan_custom``,
and skills-ref's ``read_properties`` over every folder (timed inside its own
interpreter). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_peers import agentsociety2, generate_skills, ratio, skills_ref_python

from semif_agent.catalog import SkillCatalog

SKILLS_REF_TIMER = """
import json, sys, time
from pathlib import Path
from skills_ref import read_properties
folders = sorted(Path(sys.argv[1]).iterdir())
best = float("inf")
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    loaded = [read_properties(folder) for folder in folders]
    best = min(best, time.perf_counter() - started)
print(json.dumps({"seconds": best, "loaded": len(loaded)}))
"""


def best_of(rounds: int, action) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(rounds):
        started = time.perf_counter()
        value = action()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    peer = agentsociety2()
    reference = skills_ref_python()
    with tempfile.TemporaryDirectory(prefix="semif-bench-scan-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, args.count)

        def ours() -> int:
            registry = SkillCatalog()
            return len(registry.scan_custom(root))

        ours_seconds, ours_count = best_of(args.rounds, ours)
        warm = SkillCatalog()
        warm.scan_custom(root)
        refresh_seconds, _ = best_of(args.rounds, warm.refresh)

        def theirs() -> int:
            return len(peer["registry"].SkillRegistry().scan_custom(root))

        peer_seconds, peer_count = best_of(args.rounds, theirs)
        done = subprocess.run(
            [str(reference), "-c", SKILLS_REF_TIMER, str(root), str(args.rounds)],
            capture_output=True,
            text=True,
            check=True,
        )
        reference_result = json.loads(done.stdout)

    print(f"scan and parse {args.count} skill folders (best of {args.rounds})")
    print(f"  semif SkillCatalog.scan_custom           {ours_seconds * 1000:9.1f} ms  ({ours_count} skills)")
    print(f"  semif SkillCatalog.refresh (unchanged)   {refresh_seconds * 1000:9.1f} ms")
    print(
        f"  agentsociety2 {peer['version']} scan_custom      {peer_seconds * 1000:9.1f} ms  ({peer_count} skills)"
        f"   semif is {ratio(ours_seconds, peer_seconds)}"
    )
    print(
        f"  skills-ref 0.1.1 read_properties x N     {reference_result['seconds'] * 1000:9.1f} ms"
        f"  ({reference_result['loaded']} skills)   semif is {ratio(ours_seconds, reference_result['seconds'])}"
    )


if __name__ == "__main__":
    main()
