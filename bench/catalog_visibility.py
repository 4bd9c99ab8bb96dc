"""``set_visible_skills`` over 4,000 skills: semif vs agentsociety2.

    .venv/bin/python bench/catalog_visibility.py [--count 4000] [--rounds 5]

Both registries scan the same generated folders; each runtime then makes all
skills visible, once by display name and once by skill id (best of
``--rounds``; the peer's slower path is run fewer times). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_peers import agentsociety2, generate_skills, ratio

from semif_agent.catalog import AgentSkillRuntime, SkillCatalog


def best_of(rounds: int, action) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    peer = agentsociety2()
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
    figures = {}
    for label, tokens in (("display names", names), ("skill ids", ids)):
        ours_seconds = best_of(args.rounds, lambda: our_runtime.set_visible_skills(tokens))  # noqa: B023 - called in this iteration
        assert our_runtime.visible_skill_count() == args.count
        peer_seconds = best_of(max(1, args.rounds // 5), lambda: peer_runtime.set_visible_skills(tokens))  # noqa: B023 - called in this iteration
        assert peer_runtime.visible_skill_count() == args.count
        figures[label] = (ours_seconds, peer_seconds)
    print(f"set_visible_skills with {args.count} skills")
    for label, (ours_seconds, peer_seconds) in figures.items():
        print(
            f"  by {label:13}  semif {ours_seconds * 1000:9.2f} ms   agentsociety2 {peer['version']} "
            f"{peer_seconds * 1000:10.1f} ms   semif is {ratio(ours_seconds, peer_seconds)}"
        )


if __name__ == "__main__":
    main()
