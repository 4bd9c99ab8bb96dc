"""``set_visible_skills`` over 4,000 skills: semif vs agentsociety2.

    .venv/bin/python bench/catalog_visibility.py [--count 4000] [--rounds 5]

Both registries scan the same generated folders; each runtime then makes all
skills visible, once by display name and once by skill id, the two sides
taking turns ``--rounds`` times after a warm-up (``bench/_fair.py``: medians
with their spread, and the load at the start and end). agentsociety2 is the
version ``catalog_peers.py`` pins, in this process. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _fair import Load, interleave, table
from catalog_peers import agentsociety2, generate_skills

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per side (interleaved)")
    args = parser.parse_args()
    peer = agentsociety2()
    load = Load()
    with tempfile.TemporaryDirectory(prefix="semif-bench-visibility-") as tmp:
        root = Path(tmp) / "skills"
        generate_skills(root, args.count)
        ours = SkillCatalog()
        ours.scan_custom(root)
        theirs = peer["registry"].SkillRegistry()
        theirs.scan_custom(root)
    names = [f"skill-{index:05d}" for index in range(args.count)]
    ids = [f"custom@{name}" for name in names]
    our_runtime = AgentSkillRuntime(1, ours)
    peer_runtime = peer["runtime"].AgentSkillRuntime(1, theirs)
    print(f"set_visible_skills with {args.count} skills, the sides taking turns; {load.text()}")
    for label, tokens in (("display names", names), ("skill ids", ids)):

        def mine(tokens: list[str] = tokens) -> None:
            our_runtime.set_visible_skills(tokens)
            assert our_runtime.visible_skill_count() == args.count

        def peers(tokens: list[str] = tokens) -> None:
            peer_runtime.set_visible_skills(tokens)
            assert peer_runtime.visible_skill_count() == args.count

        spreads = interleave({"semif": mine, f"agentsociety2 {peer['version']}": peers}, args.rounds)
        print(f"  by {label}:")
        print(table(spreads, reference=f"agentsociety2 {peer['version']}"))


if __name__ == "__main__":
    main()
