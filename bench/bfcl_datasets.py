"""Turn the BFCL data (PyPI wheel ``bfcl-eval``, Apache-2.0) into routing datasets for ``semif eval``.

    python bench/bfcl_datasets.py [--out .bench/bfcl]

Writes, from ``live_multiple`` (a user request and the function that should
serve it) and ``live_irrelevance`` (requests no offered function serves):

- ``skills.jsonl``: every distinct function as a skill (name, description);
- ``tree.json``: those skills grouped by ``semif tree build`` (at most 16 children per category);
- ``dataset.jsonl``: ``{"text", "skill"}`` rows, ``skill: null`` for the irrelevance requests.

Then: ``semif eval .bench/bfcl/dataset.jsonl --tree .bench/bfcl/tree.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from semif_agent.tree.build import LeafSpec, build_tree, manifest_name

ROOT = Path(__file__).resolve().parents[1]
BFCL_PACKAGE = "bfcl-eval==2026.3.23"  # pinned: the figures of bench/learning.py and bench/intent_trees.py are on it
FILES = {
    "multiple": "bfcl_eval/data/BFCL_v4_live_multiple.json",
    "answers": "bfcl_eval/data/possible_answer/BFCL_v4_live_multiple.json",
    "irrelevance": "bfcl_eval/data/BFCL_v4_live_irrelevance.json",
}


def fetch_wheel(cache: Path) -> Path:
    wheels = sorted(cache.glob("bfcl_eval-*.whl"))
    if not wheels:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), BFCL_PACKAGE], check=True
        )
        wheels = sorted(cache.glob("bfcl_eval-*.whl"))
    return wheels[-1]


def read_lines(wheel: zipfile.ZipFile, name: str) -> list[dict]:
    return [json.loads(line) for line in wheel.read(name).decode("utf-8").splitlines() if line.strip()]


def user_text(item: dict) -> str:
    turns = item["question"][0]
    return " ".join(t["content"] for t in turns if t.get("role") == "user").strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".bench" / "bfcl")
    args = parser.parse_args()
    with zipfile.ZipFile(fetch_wheel(args.out / "wheel")) as wheel:
        multiple = read_lines(wheel, FILES["multiple"])
        answers = {a["id"]: a["ground_truth"] for a in read_lines(wheel, FILES["answers"])}
        irrelevance = read_lines(wheel, FILES["irrelevance"])
    skills: dict[str, LeafSpec] = {}
    for item in multiple + irrelevance:
        for function in item["function"]:
            name = manifest_name(function["name"])
            skills.setdefault(name, LeafSpec(name, " ".join(function.get("description", "").split()) or name))
    rows = []
    for item in multiple:
        gold = answers.get(item["id"])
        text = user_text(item)
        if gold and text:
            rows.append({"text": text, "skill": manifest_name(next(iter(gold[0])))})
    rows += [{"text": t, "skill": None} for t in (user_text(i) for i in irrelevance) if t]
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "skills.jsonl").open("w") as handle:
        for skill in skills.values():
            handle.write(json.dumps({"name": skill.name, "description": skill.description}) + "\n")
    (args.out / "tree.json").write_text(json.dumps(build_tree(list(skills.values())), indent=1))
    with (args.out / "dataset.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    in_scope = sum(1 for r in rows if r["skill"])
    print(
        f"{len(skills)} skills, {len(rows)} requests ({in_scope} in scope, {len(rows) - in_scope} irrelevant) -> {args.out}"
    )


if __name__ == "__main__":
    main()
