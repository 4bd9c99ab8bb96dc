"""How a new user's first hour goes: everyday requests on a fresh starter workspace, checked on the data.

    python bench/first_hour.py [--engine local] [--show] [--json]

Runs each request of ``tests/fixtures/first_hour.jsonl`` end to end (route,
predict, act, assess; confined bodies, real files) on a fresh starter
workspace, from empty write dirs each time, with the clock pinned to a Monday
morning, and prints three counts:

- routed right: the request went to the skill it should have (or to none);
- done right: the data shows what was asked (the draft, the event, the note,
  the to-do, the listing), checked as the row says;
- judged right: the assessment said ``success`` exactly for the runs done right.

``--show`` prints every request that went wrong in any of the three, with why.
"""

from __future__ import annotations

import json
import sys

from _starter_bench import parse_args  # first: it puts the repository on the import path

from semif_agent.engine import create_engine
from tests.starter._first_hour import FirstHour, load_requests, pinned_workspace


def main() -> None:
    args = parse_args(
        __doc__,
        show="print each request that went wrong, and why",
        json="print one JSON object: the counts and every run",
    )
    rows = load_requests()
    with pinned_workspace() as ws:
        first_hour = FirstHour(ws, create_engine(args.engine, {}))
        outcomes = []
        for n, row in enumerate(rows, 1):
            outcomes.append(first_hour.run(row))
            if sys.stderr.isatty():
                print(f"\r{n}/{len(rows)} requests", end="", file=sys.stderr, flush=True)
        if sys.stderr.isatty():
            print(file=sys.stderr)
    counts = {
        "requests": len(outcomes),
        "routed_right": sum(o.routed_right for o in outcomes),
        "done_right": sum(o.done_right for o in outcomes),
        "judged_right": sum(o.judged_right for o in outcomes),
        "false_success": sum(o.label == "success" and not o.done_right for o in outcomes),
        "false_failure": sum(o.label == "failure" and o.done_right and not o.hands_back for o in outcomes),
        "unclear": sum(o.label == "unclear" for o in outcomes),
    }
    if args.json:
        runs = [
            {
                "text": o.row["text"],
                "expected": o.row["skill"],
                "skill": o.skill,
                "label": o.label,
                "problems": o.problems,
            }
            for o in outcomes
        ]
        print(json.dumps({**counts, "runs": runs}, indent=2))
        return
    total = counts["requests"]
    print(f"first-hour requests on the starter workspace, engine {args.engine}: {total}")
    print(f"  routed right  {counts['routed_right']:3}/{total}")
    print(f"  done right    {counts['done_right']:3}/{total}")
    print(
        f"  judged right  {counts['judged_right']:3}/{total}   (success for a wrong result: {counts['false_success']}, "
        f"failure for a right one: {counts['false_failure']}, unclear: {counts['unclear']})"
    )
    if args.show:
        for o in outcomes:
            if o.routed_right and o.done_right and o.judged_right:
                continue
            print(
                f"\n{o.row['text']!r}: expected {o.row['skill']}, went to {o.skill}; judged {o.label}: "
                f"{o.result.assessment.reason}"
            )
            print(f"  {o.result.action.action_log.splitlines()[0][:160]}")
            for problem in o.problems:
                print(f"  - {problem[:160]}")


if __name__ == "__main__":
    main()
