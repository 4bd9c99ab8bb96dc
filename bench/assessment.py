"""How often the run assessment agrees with people's labels, against the judge alone.

    python bench/assessment.py [--runs bench/assessment_runs.jsonl] [--show] [--json]

Makes a fresh starter workspace (``semif-bench-assessment/ws`` in the
temporary folder) and runs each request of the runs file, in order, through ``semif run --json`` with the local engine (later requests
see what earlier ones wrote: the drafts, notes, events and to-dos). Each run
has a label a person gave after looking at what that run did (its action
log, its changes, the files written), with why. For each label it prints the
precision and recall of the assessment against those labels, the share of
``unclear``, and the same figures for the old rule: the judge's verdict alone
(the ``assess`` decision), or the loop's fixed label where no judge is asked
(an error, no skill). Then the runs where the assessment and the person
disagree.

Runs are deterministic enough for the labels to hold: the local engine is
deterministic and the workspace path fixed, but the request ids in the action
logs move the judge's probabilities by about 0.01, and dates are read
against today (the events of "today" differ from day to day). A run that now goes to another skill
than the one it was labelled for is flagged: its label may no longer hold.

The rules' thresholds (the judge's probability, the close-call margin) were
set looking at the ``tuned`` runs; the ``held-out`` runs were labelled after
the rules were written, and are reported apart.

``--show`` prints every run (skill, action log, changes, both labels), which
is what the labels were decided from.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from semif_agent.cli import main as semif
from semif_agent.engine import local_available

ROOT = Path(__file__).resolve().parents[1]
# One fixed path, whatever the checkout: the action logs the judge reads name it, and its words move the scores.
WORKSPACE = Path(tempfile.gettempdir()) / "semif-bench-assessment" / "ws"
LABELS = ("success", "failure", "unclear")


def run_all(items: list[dict[str, Any]], progress: bool) -> list[dict[str, Any]]:
    """Each request through ``semif run --json`` on one fresh starter workspace."""
    cli = CliRunner()
    runs = []
    shutil.rmtree(WORKSPACE, ignore_errors=True)
    ws = str(WORKSPACE)
    made = cli.invoke(semif, ["init", ws])
    if made.exit_code != 0:
        sys.exit(f"semif init failed: {made.output}")
    for n, item in enumerate(items, 1):
        result = cli.invoke(semif, ["run", item["text"], "-w", ws, "--engine", "local", "--json"])
        if result.exit_code != 0:
            sys.exit(f"semif run {item['text']!r} failed: {result.output}")
        out = json.loads(result.stdout)
        judged = [d["selected"] for d in out["decisions"] if d["kind"] == "assess"]
        runs.append(
            {
                **item,
                "got_skill": out["skill"],
                "action_log": out["action_log"],
                "changes": out["changes"],
                "new": out["assessment"]["label"],
                "reason": out["assessment"]["reason"],
                "evidence": out["assessment"].get("evidence", {}),
                "old": judged[0] if judged else out["assessment"]["label"],
            }
        )
        if progress and sys.stderr.isatty():
            print(f"\r{n}/{len(items)} runs", end="", file=sys.stderr, flush=True)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    return runs


def figures(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Precision and recall per label of ``run[key]`` against the hand labels, and the share of unclear."""
    out: dict[str, Any] = {}
    for label in LABELS:
        said = [r for r in runs if r[key] == label]
        meant = [r for r in runs if r["label"] == label]
        right = sum(1 for r in said if r["label"] == label)
        out[label] = {
            "precision": right / len(said) if said else None,
            "recall": right / len(meant) if meant else None,
            "said": len(said),
            "right": right,
        }
    decided = [r for r in runs if r[key] != "unclear"]
    out["unclear_share"] = 1 - len(decided) / len(runs)
    out["wrong_decided"] = sum(1 for r in decided if r[key] != r["label"])
    out["decided"] = len(decided)
    return out


def _pct(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.0%}"


def table(runs: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """Print the figures of ``runs`` (assessment beside the judge alone) and return them."""
    new, old = figures(runs, "new"), figures(runs, "old")
    hand = {label: sum(1 for r in runs if r["label"] == label) for label in LABELS}
    print(f"{title}: {len(runs)} runs; hand labels " + ", ".join(f"{n} {label}" for label, n in hand.items()))
    print(f"{'':10} {'assessment':^26}   {'judge alone (old)':^26}")
    print(f"{'label':10} {'precision':>9} {'recall':>7} {'said':>6}   {'precision':>9} {'recall':>7} {'said':>6}")
    for label in LABELS:
        a, b = new[label], old[label]
        print(
            f"{label:10} {_pct(a['precision']):>9} {_pct(a['recall']):>7} {a['said']:>6}   "
            f"{_pct(b['precision']):>9} {_pct(b['recall']):>7} {b['said']:>6}"
        )
    print(f"unclear share {_pct(new['unclear_share']):>6}{'':20}{_pct(old['unclear_share']):>9}")
    print(
        f"wrong success/failure labels: {new['wrong_decided']} of {new['decided']} "
        f"(judge alone: {old['wrong_decided']} of {old['decided']})\n"
    )
    return {"assessment": new, "judge_alone": old}


def report(runs: list[dict[str, Any]]) -> dict[str, Any]:
    print("starter workspace, local engine; the rules' thresholds were set on the 'tuned' runs\n")
    result = {"all": table(runs, "all")}
    for name in dict.fromkeys(r.get("set", "") for r in runs):
        if name:
            result[name] = table([r for r in runs if r.get("set") == name], name)
    moved = [r for r in runs if r["got_skill"] != r.get("skill")]
    if moved:
        print(f"{len(moved)} run(s) went to another skill than when labelled (their labels may not hold):")
        for r in moved:
            print(f"  {r['text']!r}: labelled on {r.get('skill')}, now {r['got_skill']}")
        print()
    disagree = [r for r in runs if r["new"] != r["label"]]
    print(f"disagreements with the hand labels ({len(disagree)}):")
    for r in disagree:
        print(
            f"  {r['text']!r} [{r['got_skill']}, {r.get('set', '')}]\n    person: {r['label']} ({r['why']})\n"
            f"    assessment: {r['new']} ({r['reason']}); judge alone: {r['old']}"
        )
    return result


def show(runs: list[dict[str, Any]]) -> None:
    for n, r in enumerate(runs, 1):
        changes = "; ".join(f"{k} {', '.join(v)}" for k, v in r["changes"].items() if v) or "no changes"
        print(
            f"{n:2}. {r['text']} -> {r['got_skill']}\n    {r['action_log'].splitlines()[0]}\n    {changes}\n"
            f"    person: {r['label']}; assessment: {r['new']} ({r['reason']}); judge alone: {r['old']}\n"
            f"    evidence: {json.dumps(r['evidence'])}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        type=Path,
        default=ROOT / "bench" / "assessment_runs.jsonl",
        help="JSON lines {text, label, why, skill, set}",
    )
    parser.add_argument("--show", action="store_true", help="print every run, as the labels were decided from")
    parser.add_argument("--json", action="store_true", help="print the figures and runs as JSON")
    args = parser.parse_args()
    if not local_available():
        sys.exit("the local engine is not installed: pip install 'semif-agent[local]'")
    items = [json.loads(line) for line in args.runs.read_text(encoding="utf-8").splitlines() if line.strip()]
    runs = run_all(items, progress=not args.json)
    if args.json:
        sets = {"all": runs, **{r["set"]: [x for x in runs if x.get("set") == r["set"]] for r in runs if r.get("set")}}
        figures_by_set = {
            name: {"assessment": figures(part, "new"), "judge_alone": figures(part, "old")}
            for name, part in sets.items()
        }
        print(json.dumps({"figures": figures_by_set, "runs": runs}, indent=2))
        return
    if args.show:
        show(runs)
        print()
    report(runs)


if __name__ == "__main__":
    main()
