"""`semif log`: one line per run by default, the last 20; `semif log show RUN`: one run whole (real processes)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from semif_agent.records import DecisionLog, OutcomeRow


def fill_log(root: Path, runs: int) -> list[str]:
    """``runs`` finished runs in the workspace's log (outcome rows alone, as a run's last row is); their ids."""
    ids = [f"20260101-0000{i:02d}-a{i:05d}" for i in range(runs)]
    DecisionLog(root / "data" / "decisions.jsonl").extend(
        OutcomeRow(
            run_id=run_id, skill="email.compose", request=f"request number {i}", outcome="success", reason="it did"
        )
        for i, run_id in enumerate(ids)
    )
    return ids


def test_the_default_view_is_the_last_20_runs_one_line_each(semif, make_workspace) -> None:
    root = make_workspace()
    ids = fill_log(root, 23)
    shown = semif("log", "-w", str(root))
    assert shown.returncode == 0, shown.stderr
    assert [line.split()[0] for line in shown.stdout.splitlines()] == ids[-20:]
    assert shown.stdout.splitlines()[-1] == f'{ids[-1]}  "request number 22"  -> email.compose  [success (engine)]'
    assert shown.stderr == "(3 earlier runs not shown: --limit 0 shows all)\n"
    assert [line.split()[0] for line in semif("log", "-w", str(root), "--limit", "2").stdout.splitlines()] == ids[-2:]
    everything = semif("log", "-w", str(root), "--limit", "0")
    assert len(everything.stdout.splitlines()) == 23 and everything.stderr == ""
    as_json = semif("log", "-w", str(root), "--json")  # complete unless --limit says otherwise
    assert [json.loads(line)["run_id"] for line in as_json.stdout.splitlines()] == ids


def test_show_tells_one_run_whole_and_its_label(semif, make_workspace) -> None:
    root = make_workspace()
    done = semif("run", "Email Alice that the report is ready", "-w", str(root), "--engine", "lexical", "--json")
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    shown = semif("log", "show", run_id[:-2], "-w", str(root))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.startswith(f"run         {run_id}  ")
    assert 'request     "Email Alice that the report is ready"' in out
    assert re.search(
        r"^route +1\. Which category of skills fits this request\?\n +-> email \(p [^)]+\)   next: none \S+%", out, re.M
    )
    assert re.search(r"^prediction +\d\. Which contact is the intended recipient\?\n +-> Alice", out, re.M)
    assert re.search(r"^skill +email\.compose$", out, re.M)
    assert re.search(r"^changes +created data/drafts/\S+\.txt$", out, re.M)
    assert re.search(r"^diff +data/drafts/\S+\.txt\n +@@ -0,0 \+1,\d+ @@\n +\+To: Alice", out, re.M)
    assert re.search(r"^assessment +\w+ \(.+\)$", out, re.M) and re.search(r"^ +decided by: +\w+", out, re.M)
    assert re.search(rf"^label +none yet \(semif label {run_id} ", out, re.M)

    labelled = semif("label", run_id, "--outcome", "failure", "--note", "wrong Alice", "--by", "bob", "-w", str(root))
    assert labelled.returncode == 0, labelled.stderr
    after = semif("log", "show", run_id, "-w", str(root)).stdout
    assert re.search(r"^label +failure, labelled by bob \(wrong Alice\)$", after, re.M)
    data = json.loads(semif("log", "show", run_id, "-w", str(root), "--json").stdout)
    assert data["run"]["run_id"] == run_id and data["run"]["true_outcome"] == "failure"
    assert [row["kind"] for row in data["decisions"]][:2] == ["route", "route"]
    assert data["outcome"]["changes"]["created"] and [row["by"] for row in data["labels"]] == ["bob"]
    assert any(
        line.startswith("+To: Alice") for line in data["outcome"]["diffs"][data["outcome"]["changes"]["created"][0]]
    )


def test_an_unknown_run_is_one_line_and_json_errors_are_json(semif, make_workspace) -> None:
    root = make_workspace()
    fill_log(root, 1)
    for args in (("log", "--run", "nope"), ("log", "show", "nope")):
        plain = semif(*args, "-w", str(root))
        assert plain.returncode == 1 and plain.stdout == ""
        assert plain.stderr.strip().splitlines() == [
            f"Error: no run 'nope' in the decision log {root / 'data' / 'decisions.jsonl'}"
        ]
        as_json = semif(*args, "-w", str(root), "--json")
        assert (as_json.returncode, as_json.stderr) == (1, "")
        assert json.loads(as_json.stdout) == {"error": plain.stderr.strip().removeprefix("Error: ")}


def test_export_makes_the_missing_folder_and_a_file_in_the_way_is_one_line(
    semif, make_workspace, tmp_path: Path
) -> None:
    root = make_workspace()
    ids = fill_log(root, 2)
    target = tmp_path / "exports" / "2026" / "runs.jsonl"
    done = semif("log", "-w", str(root), "--export", str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote 2 rows to {target}\n"
    assert [json.loads(line)["run_id"] for line in target.read_text().splitlines()] == ids
    (tmp_path / "blocked").write_text("a file, not a folder")
    blocked = semif("log", "-w", str(root), "--export", str(tmp_path / "blocked" / "runs.jsonl"))
    assert blocked.returncode == 1 and "cannot write the export" in blocked.stderr
    assert len(blocked.stderr.strip().splitlines()) == 1


def test_json_rows_escape_the_line_separators_a_request_holds(semif, make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    request = 'Email Alice\u2028{"run_id": "forged"}\u2029done'
    DecisionLog(root / "data" / "decisions.jsonl").append(
        OutcomeRow(run_id="20260101-000000-a00000", skill="email.compose", request=request, outcome="success")
    )
    target = tmp_path / "runs.jsonl"
    printed = semif("log", "-w", str(root), "--json").stdout
    assert semif("log", "-w", str(root), "--export", str(target)).returncode == 0
    for text in (printed, target.read_text(encoding="utf-8")):
        assert "\u2028" not in text and "\u2029" not in text
        [row] = [json.loads(line) for line in text.splitlines()]  # one row, even where every line break splits
        assert (row["run_id"], row["request"]) == ("20260101-000000-a00000", request)


def cut_last_run(root: Path) -> str:
    """``semif run`` once, then its outcome row torn as a crash mid-write leaves it; the run's id."""
    log = root / "data" / "decisions.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[-1])["kind"] == "outcome"
    log.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    return json.loads(lines[-1])["run_id"]


def test_a_run_whose_outcome_row_was_torn_names_its_routed_skill_and_says_the_outcome_is_missing(
    semif, make_workspace
) -> None:
    root = make_workspace()
    done = semif("run", "Email Alice that the report is ready", "-w", str(root), "--engine", "lexical")
    assert done.returncode == 0, done.stderr
    run_id = cut_last_run(root)
    listed = semif("log", "-w", str(root))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        f'{run_id}  "Email Alice that the report is ready"  -> email.compose  '
        "[outcome missing: the log was cut, or the run is still going]"
    ]
    assert "torn last line" in listed.stderr
    shown = semif("log", "show", run_id, "-w", str(root))
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^skill +email\.compose$", shown.stdout, re.M)
    assert re.search(r"^assessment +outcome missing: the log was cut, or the run is still going$", shown.stdout, re.M)
    data = json.loads(semif("log", "show", run_id, "-w", str(root), "--json").stdout)
    assert data["outcome"] is None and data["run"]["outcome_missing"] is True
    assert data["run"]["skill"] == "email.compose"
    assert semif("log", "-w", str(root), "--skill", "email.compose").stdout.split()[0] == run_id


def test_the_kinds_offered_by_log_kind_are_the_table_s(semif, make_workspace) -> None:
    from semif_agent.records import RECORD_KINDS

    root = make_workspace()
    refused = semif("log", "-w", str(root), "--kind", "outcome")
    assert refused.returncode == 2
    offered = re.search(r"'outcome' is not one of (.*)\.", " ".join(refused.stderr.split())).group(1)
    expected = [name for name, kind in RECORD_KINDS.items() if kind.role in ("decision", "step")]
    assert offered.replace("'", "").split(", ") == expected


def test_a_clients_find_is_shown_as_a_find_never_as_a_cut_run(semif, tmp_path) -> None:
    """A new user's `semif log` listed each find a client made as a run whose "outcome missing: the log was cut".
    A find ran nothing: it is left out of the runs, `--finds` lists it, and `log show` tells it as a find."""
    from semif_agent import Router
    from semif_agent.starter import create_workspace

    root = create_workspace(tmp_path / "ws")
    router = Router(root, client="tester")
    picked = router.find("Email Grace that I accept the offer")
    router.load("email.compose", choice_id=picked.choice_id)
    unpicked = router.find("What is on my calendar tomorrow?")
    done = semif("run", "Email Alice that the report is ready", "-w", str(root), "--engine", "lexical", "--json")
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]

    listed = semif("log", "-w", str(root))
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [run_id]
    assert "outcome missing" not in listed.stdout + listed.stderr
    assert "(2 finds of a client not listed: --finds lists them)" in listed.stderr

    finds = semif("log", "-w", str(root), "--finds").stdout.splitlines()
    assert finds == [
        f'{picked.choice_id}  find by tester "Email Grace that I accept the offer"  [picked email.compose]',
        f'{unpicked.choice_id}  find by tester "What is on my calendar tomorrow?"  [nothing picked yet]',
    ]
    shown = semif("log", "show", unpicked.choice_id, "-w", str(root))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"find        {unpicked.choice_id}  ")
    assert "nothing was run" in shown.stdout and re.search(r"^picked +nothing picked yet$", shown.stdout, re.M)
    assert "outcome missing" not in shown.stdout and "label " not in shown.stdout
    as_json = json.loads(semif("log", "show", picked.choice_id, "-w", str(root), "--json").stdout)
    assert as_json["run"]["find"] is True and as_json["run"]["outcome_missing"] is False


def test_a_hand_edited_run_still_shows_its_fields_of_the_wrong_type_read_as_empty(semif, make_workspace) -> None:
    root = make_workspace()
    run_id = "20260101-000000-edited"
    lines = [  # rows a person edited by hand, or an old version wrote: a step as a word, changes as a list
        {"v": 1, "ts": 1.7e9, "run_id": run_id, "step": "one", "kind": "route", "question": "Which skill?",
         "selected": "email.compose", "options": [{"id": "email.compose"}], "level": "skill"},
        {"v": 1, "ts": 1.7e9, "run_id": run_id, "kind": "outcome", "skill": "email.compose", "request": "Email Bo",
         "outcome": "success", "reason": "it did", "changes": ["data/drafts/a.txt"], "action_log": 7},
    ]  # fmt: skip
    (root / "data" / "decisions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    shown = semif("log", "show", run_id, "-w", str(root))
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^route +0\. Which skill\?\n +-> email\.compose$", shown.stdout, re.M)
    assert re.search(r"^changes +no files changed$", shown.stdout, re.M)
    assert re.search(r"^action +-$", shown.stdout, re.M)
    decisions = semif("log", "--decisions", "-w", str(root))
    assert decisions.returncode == 0, decisions.stderr
    assert decisions.stdout.startswith(f"{run_id}  #0 route   Which skill? -> email.compose  [None; success (engine)]")
    as_json = [json.loads(line) for line in semif("log", "--decisions", "--json", "-w", str(root)).stdout.splitlines()]
    assert as_json == [{**lines[0], "step": 0, "outcome": "success"}]  # the row as it was, but for what cannot be read
