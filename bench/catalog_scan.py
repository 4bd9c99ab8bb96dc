"""Scan and parse a few thousand generated skill folders: semif vs skills-ref vs agentsociety2.

    .venv/bin/python bench/catalog_scan.py [--count 3000] [--rounds 5]

The sides take turns over the same folders (warm file cache), round by round
after a warm-up (``bench/_fair.py``), and each is reported as its median round
with the quartiles and range, with the load at the start and end: semif's
``SkillCatalog.scan_custom`` (and a ``refresh`` with nothing changed),
agentsociety2's ``SkillRegistry.scan_custom`` (2.9.3, in this process), and
skills-ref's ``read_properties`` over every folder (0.1.1, pinned, timed in its
own interpreter, a child process of the bench that serves one round at a time). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _fair import Load, PeerProcess, interleave, table
from catalog_peers import agentsociety2, generate_skills, skills_ref_python

from semif_agent.catalog import SkillCatalog

SKILLS_REF_SERVER = """
import time
from pathlib import Path
from skills_ref import read_properties
folders = sorted(Path(sys.argv[1]).iterdir())

def handle(ask):
    started = time.perf_counter()
    loaded = [read_properties(folder) for folder in folders]
    assert len(loaded) == len(folders)
    return (time.perf_counter() - started) * 1000

serve(handle)
"""
"""skills-ref in a child process of the bench (``_fair.PeerProcess``): each request reads every folder once and
answers the ms it took."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per side (interleaved)")
    args = parser.parse_args()
    peer = agentsociety2()
    load = Load()
    with tempfile.TemporaryDirectory(prefix="semif-bench-scan-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, args.count)
        warm = SkillCatalog()
        warm.scan_custom(root)
        counts = {
            "semif": len(SkillCatalog().scan_custom(root)),
            "agentsociety2": len(peer["registry"].SkillRegistry().scan_custom(root)),
        }

        def ours() -> None:
            SkillCatalog().scan_custom(root)

        def refresh() -> None:
            warm.refresh()

        def theirs() -> None:
            peer["registry"].SkillRegistry().scan_custom(root)

        with PeerProcess(skills_ref_python(), "import sys\n" + SKILLS_REF_SERVER, str(root)) as reference:
            spreads = interleave(
                {
                    "semif SkillCatalog.scan_custom": ours,
                    "semif SkillCatalog.refresh (unchanged)": refresh,
                    f"agentsociety2 {peer['version']} scan_custom": theirs,
                    "skills-ref 0.1.1 read_properties x N": lambda: reference.ask({}),
                },
                args.rounds,
            )
    print(f"scan and parse {args.count} skill folders (warm file cache), the sides taking turns; {load.text()}")
    print(table(spreads, reference="semif SkillCatalog.scan_custom", digits=1))
    print(f"  skills loaded: semif {counts['semif']}, agentsociety2 {counts['agentsociety2']}")


if __name__ == "__main__":
    main()
