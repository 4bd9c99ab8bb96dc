"""The act gate on everyday phrasing: what a fresh starter workspace would do with requests people actually type.

    python bench/gate_phrasing.py [--engine local] [--show] [--json] [--set dev|heldout|both]
    python bench/gate_phrasing.py --margins [FILE...]   # the leads ACT_MARGIN is chosen from

Each request of ``bench/data/gate_phrasing_dev.jsonl`` (the set the gate's
phrasing and margin were developed on) and ``bench/data/gate_phrasing_heldout.jsonl``
(written apart, with other phrasing habits: terse, texting, long and polite;
looked at once) is routed on a fresh starter workspace and passed through the
act gate, at the act threshold the workspace measures; nothing runs. Each row
names the skill that should serve it (``null``: none does) and whether that
skill writes. Printed per set:

- acted: requests a skill would run on (the route ended at a skill and the gate let it);
- right among acted: those where it is the named skill;
- handed back wrongly: requests a skill serves that were handed back (or routed to none);
- harmful writes: a skill that writes would act, and it is not the named one (a file written for the wrong
  request: the error that costs the user most).

It decides through the runner's own decision (``SkillRunner.adecide``, the one
``semif run``, ``semif route`` and ``find_skills`` share), or, on a version of
the code before it, through the route and ``gate_route`` as ``semif run`` did.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from _starter_bench import ROOT  # first: it puts the repository on the import path

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.loop import SkillRunner
from semif_agent.loop.gate import gate_route
from semif_agent.tree.effects import WRITE
from tests.starter._first_hour import make_workspace

SETS = {
    "dev": ROOT / "bench" / "data" / "gate_phrasing_dev.jsonl",
    "heldout": ROOT / "bench" / "data" / "gate_phrasing_heldout.jsonl",
}


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def decide(runner: SkillRunner, text: str) -> tuple[str | None, bool, str, str]:
    """The skill the request would go to, whether it would act, the gate's rule and its reason."""
    if hasattr(runner, "adecide"):
        found = await runner.adecide(text)
        return found.skill, found.acts, found.rule, found.reason
    route = await runner.strategy.aroute(text)
    threshold = await runner.aact_threshold()
    route, gate = gate_route(route, text, runner.tree, runner.engine, threshold=threshold, can_act=runner.can_act)
    if gate is None:
        return None, False, "none", route.reason or "no skill fits"
    skill = route.skill.name if route.skill is not None else None
    return skill, gate.acts and skill is not None, gate.rule, gate.reason


def measure(runner: SkillRunner, rows: list[dict[str, Any]]) -> tuple[dict[str, int], list[dict[str, Any]]]:
    counts = {"requests": len(rows), "acted": 0, "right_among_acted": 0, "handed_back_wrongly": 0, "harmful_writes": 0}
    seen = []
    for row in rows:
        skill, acts, rule, reason = run_sync(decide(runner, row["text"]))
        expected = row["skill"]
        writes = skill is not None and runner.tree.skills[skill].effects == WRITE
        if acts:
            counts["acted"] += 1
            counts["right_among_acted"] += skill == expected
            counts["harmful_writes"] += writes and skill != expected
        elif expected is not None:
            counts["handed_back_wrongly"] += 1
        seen.append({**row, "went": skill, "acts": acts, "rule": rule, "reason": reason})
    return counts, seen


def margins(runner: SkillRunner, rows: list[dict[str, Any]]) -> list[tuple[float, bool, str, str]]:
    """How far each write the gate would let act (the margin rule off) leads its runner-up, where the request's
    words name the runner-up too (the rule's case): (margin, right?, rule, text). What ACT_MARGIN is chosen from."""
    from semif_agent.loop import gate

    kept, gate.ACT_MARGIN = gate.ACT_MARGIN, -1.0
    found = []
    try:
        for row in rows:
            route = run_sync(runner.strategy.aroute(row["text"]))
            threshold = run_sync(runner.aact_threshold())
            _, result = gate.gate_route(route, row["text"], runner.tree, runner.engine, threshold=threshold)
            if result is None or not result.acts or result.effects != WRITE:
                continue
            state = gate._read(route, row["text"], runner.tree)
            gate._intent(state)
            closest = gate.runner_up(state)
            if closest is None:
                continue
            other, p_other, own = closest
            named = [runner.tree.skills[other]] if other in runner.tree.skills else runner.tree.leaves_under(other)
            if any(s.name != state.skill.name and gate._names(state.reading, s) for s in named):
                found.append((own - p_other, result.skill == row["skill"], result.rule, row["text"]))
    finally:
        gate.ACT_MARGIN = kept
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="local", help="the engine that routes (default: local)")
    parser.add_argument("--show", action="store_true", help="print every request, where it went and why")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--set", choices=[*SETS, "both"], default="both", help="which set to run (default: both)")
    parser.add_argument(
        "--margins",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="print the lead of each write over a runner-up its words name, on the dev set and these request files "
        '(JSON lines with "text" and "skill"), the margin rule off: what the gate\'s ACT_MARGIN is chosen from',
    )
    args = parser.parse_args()
    if args.margins is not None:
        with tempfile.TemporaryDirectory() as scratch:
            runner = SkillRunner(make_workspace(Path(scratch) / "ws"), engine=create_engine(args.engine, {}))
            rows = [row for path in [SETS["dev"], *args.margins] for row in load(path)]
            for margin, right, rule, text in margins(runner, rows):
                print(f"{margin:+.2f}  {'right' if right else 'WRONG'}  {rule:<13} {text}")
        return
    chosen = list(SETS) if args.set == "both" else [args.set]
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        runner = SkillRunner(make_workspace(Path(scratch) / "ws"), engine=create_engine(args.engine, {}))
        threshold = run_sync(runner.aact_threshold())
        for name in chosen:
            counts, seen = measure(runner, load(SETS[name]))
            found[name] = {"counts": counts, "rows": seen}
    if args.json:
        print(json.dumps({"act_threshold": threshold, **found}, indent=2))
        return
    print(f"act threshold {threshold:.1%}")
    print(
        f"{'set':<8} {'requests':>8} {'acted':>6} {'right among acted':>18} {'handed back wrongly':>20} {'harmful writes':>15}"
    )
    for name in chosen:
        c = found[name]["counts"]
        right = f"{c['right_among_acted']} ({c['right_among_acted'] / c['acted']:.0%})" if c["acted"] else "-"
        print(
            f"{name:<8} {c['requests']:>8} {c['acted']:>6} {right:>18} {c['handed_back_wrongly']:>20} "
            f"{c['harmful_writes']:>15}"
        )
    if args.show:
        for name in chosen:
            print(f"\n{name}")
            for row in found[name]["rows"]:
                ok = (
                    "ok "
                    if (row["acts"] and row["went"] == row["skill"]) or (not row["acts"] and row["skill"] is None)
                    else "BAD"
                )
                print(
                    f"  {ok} {row['text'][:60]:<60} want {row['skill'] or 'none':<20} -> {row['went'] or 'none':<20} "
                    f"{'acts' if row['acts'] else 'back'} [{row['rule']}] {row['reason'][:90]}"
                )


if __name__ == "__main__":
    main()
