"""Act only when sure: the act gate on a fresh starter workspace, and the act threshold it measured.

    python bench/act_when_sure.py [--engine local] [--show] [--json] [--requests FILE]

Runs each request of ``tests/fixtures/act_when_sure.jsonl`` (the held-out set;
``--requests tests/fixtures/gate_dev.jsonl`` runs the set the gate's rules
were tuned on) end to end on a fresh starter workspace (clock pinned, empty write dirs each time) and prints:

- acted / right / handed back: how many requests a skill acted on, how many
  ended right (the named skill acted, or a request no skill serves changed
  nothing), how many the gate or the route handed back;
- the gate's share acted and the accuracy of the acted runs, and of those
  where a skill that writes acted (the runs the act threshold gates);
- requests that broke the hard rule (a file changed for a request that asked
  for no change a skill serves);
- the act threshold measured on the workspace's own examples (left out one at
  a time), with the share of those routes it lets act and their accuracy.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from _starter_bench import parse_args  # first: it puts the repository on the import path

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.loop.act_threshold import measured_act_threshold
from tests.starter._act_when_sure import counts, load_rows, run_all
from tests.starter._first_hour import FirstHour, make_workspace


def main() -> None:
    args = parse_args(
        __doc__,
        show="print every request, what ran and the gate's rule",
        json="print one JSON object",
        requests="tests/fixtures/act_when_sure.jsonl",
    )
    with tempfile.TemporaryDirectory() as scratch:
        first_hour = FirstHour(make_workspace(Path(scratch) / "ws"), create_engine(args.engine, {}))
        threshold = run_sync(measured_act_threshold(first_hour.runner))
        runs = run_all(first_hour, load_rows(args.requests))
    found = {**counts(runs), "act_threshold": threshold.to_dict()}
    if args.json:
        print(json.dumps(found, indent=2))
        return
    if args.show:
        for run in runs:
            gate = run.result.gate
            mark = "ok " if run.right else "BAD"
            print(
                f"{mark} {run.row['text'][:60]:60} -> {run.result.skill or '(none)'} [{gate.rule if gate else 'none'}]"
            )
    print(f"requests     {found['requests']}")
    print(f"acted        {found['acted']}  (share acted {found['share_acted']:.0%})")
    print(f"right        {found['right']}  (accuracy of acted {found['accuracy_of_acted']:.0%})")
    writing = found["accuracy_of_acted_writing"]
    print(
        f"wrote        {found['acted_writing']}  (a skill that writes acted; accuracy "
        f"{'-' if writing is None else format(writing, '.0%')})"
    )
    print(f"handed back  {found['handed_back']}")
    print(f"broke rule   {found['broke_the_rule'] or 'none'}")
    t = threshold
    share = f"{t.acted:.0%}" if t.acted is not None else "-"
    accuracy = f"{t.accuracy:.0%}" if t.accuracy is not None else "-"
    how = "measured" if t.measured else "default (too few routes to measure)"
    print(
        f"act threshold {t.threshold:.2f} {how}: on {t.pairs} left-out example and labelled routes to a skill that writes, "
        f"{share} act, {accuracy} of those right"
    )


if __name__ == "__main__":
    main()
