"""``semif undo``: a run's changes taken back from the before-images it kept, refused when a file changed since."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from semif_agent.cli.workspace_cmds import load_tree
from semif_agent.loop.act_lock import ActLock
from semif_agent.records import DecisionLog, OutcomeRow, UndoRow
from semif_agent.routing.training import examples_from_log
from semif_agent.workspace import Workspace

from .conftest import Semif

# A skill that does what its request says, to the drafts folder: "create a.txt; append keep.bin; delete old.txt".
EDIT_BODY = """
import time
from pathlib import Path

from semif_agent.skills import ActionResult, Prediction


def predict(ctx, request):
    return Prediction(text=request.text)


def act(ctx, request, prediction):
    drafts = Path(ctx.config["drafts"])
    drafts.mkdir(parents=True, exist_ok=True)
    done = []
    for step in prediction.text.split(";"):
        verb, _, name = step.strip().partition(" ")
        target = drafts / name
        if verb == "create":
            target.write_text(f"made by {request.id}\\n", encoding="utf-8")
        elif verb == "append":
            target.write_bytes(target.read_bytes() + b"\\x00tail\\xff")
        elif verb == "delete":
            target.unlink()
        elif verb == "sleep":
            time.sleep(float(name))
        done.append(step.strip())
    return ActionResult(action_log="drafts.edit: " + ", ".join(done), new_state="done: " + ", ".join(done))
"""


@pytest.fixture
def ws(make_workspace) -> Path:
    root = make_workspace(
        {"drafts.edit": EDIT_BODY},
        descriptions={"drafts.edit": "Create, change and delete draft files."},
        settings='[engine]\nname = "lexical"\n',
    )
    drafts = root / "data" / "drafts"
    drafts.mkdir(parents=True)
    (drafts / "keep.bin").write_bytes(bytes(range(256)) * 3)
    (drafts / "old.txt").write_bytes(b"an old draft\r\nwith \xe9 bytes\n")
    return root


def run(semif: Semif, root: Path, text: str) -> dict:
    done = semif("run", text, "-w", str(root), "--skill", "drafts.edit", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_undo_removes_what_a_run_created_and_puts_back_what_it_modified_or_deleted(semif: Semif, ws: Path) -> None:
    drafts = ws / "data" / "drafts"
    kept, old = (drafts / "keep.bin").read_bytes(), (drafts / "old.txt").read_bytes()
    ran = run(semif, ws, "create new.txt; append keep.bin; delete old.txt")
    assert ran["changes"] == {
        "created": ["data/drafts/new.txt"],
        "modified": ["data/drafts/keep.bin"],
        "deleted": ["data/drafts/old.txt"],
    }
    assert (drafts / "keep.bin").read_bytes() != kept and not (drafts / "old.txt").exists()

    done = semif("undo", ran["run_id"], "-w", str(ws), "--by", "ada", "--json")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["removed"] == ["data/drafts/new.txt"]
    assert said["restored"] == ["data/drafts/keep.bin", "data/drafts/old.txt"]
    assert not (drafts / "new.txt").exists()
    assert (drafts / "keep.bin").read_bytes() == kept  # byte for byte
    assert (drafts / "old.txt").read_bytes() == old
    assert sorted(p.name for p in drafts.iterdir()) == ["keep.bin", "old.txt"]

    rows = [r for r in DecisionLog(ws / "data" / "decisions.jsonl").read() if isinstance(r, UndoRow)]
    assert [(r.run_id, r.by, r.skill) for r in rows] == [(ran["run_id"], "ada", "drafts.edit")]

    twice = semif("undo", ran["run_id"], "-w", str(ws))
    assert twice.returncode == 1
    assert twice.stderr.strip().splitlines() == [f"Error: run {ran['run_id']} was undone already"]


def test_undo_refuses_naming_the_file_when_it_changed_since_and_touches_nothing(semif: Semif, ws: Path) -> None:
    drafts = ws / "data" / "drafts"
    ran = run(semif, ws, "create mine.txt; append keep.bin")
    (drafts / "mine.txt").write_text("edited by hand afterwards\n", encoding="utf-8")
    appended = (drafts / "keep.bin").read_bytes()

    refused = semif("undo", ran["run_id"][:-2], "-w", str(ws))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"Error: cannot undo run {ran['run_id']}: data/drafts/mine.txt changed since the run; nothing was changed "
        "(--force undoes the rest and leaves it as it is now)"
    )
    assert (drafts / "mine.txt").read_text(encoding="utf-8") == "edited by hand afterwards\n"
    assert (drafts / "keep.bin").read_bytes() == appended
    assert not [r for r in DecisionLog(ws / "data" / "decisions.jsonl").read() if isinstance(r, UndoRow)]


@pytest.mark.slow
def test_a_later_run_that_changed_the_same_file_blocks_the_earlier_undo_until_it_is_undone(
    semif: Semif, ws: Path
) -> None:
    first = run(semif, ws, "append keep.bin")
    second = run(semif, ws, "append keep.bin")
    blocked = semif("undo", first["run_id"], "-w", str(ws))
    assert blocked.returncode == 1 and "data/drafts/keep.bin changed since the run" in blocked.stderr
    assert semif("undo", second["run_id"], "-w", str(ws)).returncode == 0
    assert semif("undo", first["run_id"], "-w", str(ws)).returncode == 0
    assert (ws / "data" / "drafts" / "keep.bin").read_bytes() == bytes(range(256)) * 3


@pytest.mark.slow
def test_a_file_edited_between_runs_with_its_size_and_mtime_kept_is_put_back_as_edited(semif: Semif, ws: Path) -> None:
    """The first run keeps old.txt in the store; edited by hand to the same size with its mtime set back, it is
    read again before the next run (its ctime changed), so undoing that run puts back the edit, not the old copy."""
    old = ws / "data" / "drafts" / "old.txt"
    run(semif, ws, "create first.txt")
    status = os.stat(old)
    edited = old.read_bytes().replace(b"old", b"OLD")
    old.write_bytes(edited)
    os.utime(old, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert (os.stat(old).st_size, os.stat(old).st_mtime_ns) == (status.st_size, status.st_mtime_ns)
    ran = run(semif, ws, "delete old.txt")
    assert ran["changes"]["deleted"] == ["data/drafts/old.txt"]
    assert semif("undo", ran["run_id"], "-w", str(ws)).returncode == 0
    assert old.read_bytes() == edited


def test_an_unknown_run_is_one_line_and_exit_1(semif: Semif, ws: Path) -> None:
    missing = semif("undo", "19990101-000000-abcdef", "-w", str(ws))
    assert missing.returncode == 1
    assert len(missing.stderr.strip().splitlines()) == 1 and "no run '19990101-000000-abcdef'" in missing.stderr
    as_json = semif("undo", "nope", "-w", str(ws), "--json")
    assert as_json.returncode == 1 and "no run 'nope'" in json.loads(as_json.stdout)["error"]


def test_a_run_that_changed_nothing_has_nothing_to_undo(semif: Semif, ws: Path) -> None:
    ran = run(semif, ws, "sleep 0")
    nothing = semif("undo", ran["run_id"], "-w", str(ws))
    assert nothing.returncode == 1
    assert nothing.stderr.strip() == f"Error: run {ran['run_id']} changed no files: there is nothing to undo"


def examples_of(ws: Path, text: str) -> list[tuple]:
    """What training reads of the runs of ``text``: (source, skill, wrong, weight) of each example."""
    runs = DecisionLog(ws / "data" / "decisions.jsonl").runs()
    tree = load_tree(Workspace.load(ws))
    return [(e.source, e.skill, e.wrong, e.weight) for e in examples_from_log(runs, tree) if e.text == text]


@pytest.mark.slow
def test_only_an_undo_of_a_wrong_route_is_a_routing_failure_that_training_reads(semif: Semif, ws: Path) -> None:
    wrong_route = run(semif, ws, "create a.txt")
    unwanted = run(semif, ws, "create b.txt")
    assert wrong_route["assessment"]["label"] != "failure"
    assert examples_of(ws, "create a.txt") == examples_of(ws, "create b.txt") == [("success", "drafts.edit", None, 0.5)]

    route = semif("undo", wrong_route["run_id"], "-w", str(ws), "--reason", "route")
    assert route.returncode == 0, route.stderr
    assert "the route was wrong: the request should not have gone to drafts.edit" in route.stdout
    result = semif("undo", unwanted["run_id"], "-w", str(ws), "--reason", "result", "--by", "ada")
    assert result.returncode == 0, result.stderr
    assert "only the result was unwanted: the route to drafts.edit was right (not a routing failure)" in result.stdout
    assert not (ws / "data" / "drafts" / "a.txt").exists() and not (ws / "data" / "drafts" / "b.txt").exists()

    assert examples_of(ws, "create a.txt") == [("failure", None, "drafts.edit", 1.0)]
    assert examples_of(ws, "create b.txt") == [("success", "drafts.edit", None, 0.5)]  # as before the undo
    records = {r.run_id: r for r in DecisionLog(ws / "data" / "decisions.jsonl").runs()}
    routed, kept = records[wrong_route["run_id"]], records[unwanted["run_id"]]
    assert (routed.undone, routed.undo_reason, routed.true_outcome) == (True, "route", "failure")
    assert (kept.undone, kept.undo_reason, kept.true_outcome) == (True, "result", "success")
    listed = semif("log", "--runs", "-w", str(ws)).stdout
    assert "undone: wrong route" in listed and "undone: result unwanted" in listed
    shown = semif("log", "show", unwanted["run_id"], "-w", str(ws)).stdout
    [line] = [line.split(None, 1)[1] for line in shown.splitlines() if line.startswith("undone ")]
    assert line == (
        "by ada: only the result was unwanted: the route to drafts.edit was right (not a routing failure); "
        "removed data/drafts/b.txt"
    )


def test_an_undo_without_a_reason_off_a_terminal_is_a_result_and_says_so(semif: Semif, ws: Path) -> None:
    ran = run(semif, ws, "create a.txt")
    done = semif("undo", ran["run_id"], "-w", str(ws), input="")
    assert done.returncode == 0, done.stderr
    assert "(no --reason given: taken as result; `semif label RUN --outcome failure` says the route was wrong)" in (
        done.stdout
    )
    assert examples_of(ws, "create a.txt") == [("success", "drafts.edit", None, 0.5)]
    [row] = [r for r in DecisionLog(ws / "data" / "decisions.jsonl").read() if isinstance(r, UndoRow)]
    assert row.reason == "result"


def test_an_undo_row_from_before_undos_asked_why_stays_a_routing_failure(semif: Semif, ws: Path) -> None:
    ran = run(semif, ws, "create a.txt")
    log = DecisionLog(ws / "data" / "decisions.jsonl")
    log.append({"run_id": ran["run_id"], "kind": "undo", "by": "ada", "skill": "drafts.edit", "removed": ["x"]})
    assert examples_of(ws, "create a.txt") == [("failure", None, "drafts.edit", 1.0)]
    [record] = [r for r in log.runs() if r.run_id == ran["run_id"]]
    assert (record.undone, record.undo_reason, record.true_outcome) == (True, "route", "failure")


def test_on_a_terminal_undo_asks_what_was_unwanted_before_it_acts(ws: Path, tmp_path: Path, semif: Semif) -> None:
    ran = run(semif, ws, "create a.txt")
    home = tmp_path / "home"
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "semif_agent", "undo", ran["run_id"], "-w", str(ws), "--json"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "HOME": str(home), "SEMIF_HOME": str(home / "semif-workspace")},
    )
    os.close(follower)
    try:
        os.write(leader, b"route\n")
        out, err = process.communicate(timeout=120)
    finally:
        os.close(leader)
    assert process.returncode == 0, err
    assert "What was unwanted?" in err.decode() and "the request should not have gone to drafts.edit" in err.decode()
    said = json.loads(out)
    assert (said["reason"], said["routing_failure"], said["removed"]) == ("route", True, ["data/drafts/a.txt"])
    assert examples_of(ws, "create a.txt") == [("failure", None, "drafts.edit", 1.0)]


def test_a_created_file_the_user_deleted_blocks_the_undo_until_force_undoes_the_rest(semif: Semif, ws: Path) -> None:
    drafts = ws / "data" / "drafts"
    kept = (drafts / "keep.bin").read_bytes()
    ran = run(semif, ws, "create a.txt; append keep.bin")
    (drafts / "a.txt").unlink()  # the user removed it by hand
    appended = (drafts / "keep.bin").read_bytes()

    blocked = semif("undo", ran["run_id"], "-w", str(ws), "--reason", "route")
    assert blocked.returncode == 1
    assert blocked.stderr.strip().splitlines() == [
        f"Error: cannot undo run {ran['run_id']}: data/drafts/a.txt is gone since the run; nothing was changed "
        "(--force undoes the rest and leaves it as it is now)"
    ]
    assert (drafts / "keep.bin").read_bytes() == appended
    assert not [r for r in DecisionLog(ws / "data" / "decisions.jsonl").read() if isinstance(r, UndoRow)]

    forced = semif("undo", ran["run_id"], "-w", str(ws), "--reason", "route", "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    said = json.loads(forced.stdout)
    assert said["removed"] == [] and said["restored"] == ["data/drafts/keep.bin"]
    assert said["skipped"] == {"data/drafts/a.txt": "is gone since the run"}
    assert (said["reason"], said["routing_failure"]) == ("route", True)
    assert said["row"]["skipped"] == said["skipped"] and said["row"]["reason"] == "route"
    assert (drafts / "keep.bin").read_bytes() == kept
    assert not (drafts / "a.txt").exists()
    assert examples_of(ws, "create a.txt; append keep.bin") == [("failure", None, "drafts.edit", 1.0)]


def test_force_never_overwrites_nor_removes_a_file_edited_since_the_run(semif: Semif, ws: Path) -> None:
    drafts = ws / "data" / "drafts"
    old = (drafts / "old.txt").read_bytes()
    ran = run(semif, ws, "create mine.txt; append keep.bin; delete old.txt")
    (drafts / "mine.txt").write_text("my own words now\n", encoding="utf-8")
    (drafts / "keep.bin").write_bytes(b"rewritten by hand")

    forced = semif("undo", ran["run_id"], "-w", str(ws), "--reason", "result", "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == (
        f"undid run {ran['run_id']} (drafts.edit): put back data/drafts/old.txt; "
        "left data/drafts/mine.txt as it is (it changed since the run); "
        "left data/drafts/keep.bin as it is (it changed since the run)"
    )
    assert (drafts / "mine.txt").read_text(encoding="utf-8") == "my own words now\n"
    assert (drafts / "keep.bin").read_bytes() == b"rewritten by hand"
    assert (drafts / "old.txt").read_bytes() == old


def start_run(root: Path, tmp_path: Path, text: str) -> subprocess.Popen:
    """``semif run TEXT --skill drafts.edit --json`` on ``root``, in a process of its own, not waited for."""
    home = tmp_path / "home"
    return subprocess.Popen(
        [sys.executable, "-m", "semif_agent", "run", text, "-w", str(root), "--skill", "drafts.edit", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(home), "SEMIF_HOME": str(home / "semif-workspace")},
    )


WAIT_NOTICE = "waiting for another run in this workspace to finish acting..."


def test_a_run_kept_waiting_by_another_says_so_then_acts(ws: Path, tmp_path: Path) -> None:
    with ActLock.of(Workspace.load(ws)):  # another run acting, as far as the new one can tell
        waiting = start_run(ws, tmp_path, "create late.txt")
        # Wait on what the process does, not on the clock: its stderr, read until it says it waits (or ends);
        # a process that hangs is killed after a generous deadline, which ends the read.
        deadline = threading.Timer(180, waiting.kill)
        deadline.start()
        told = []
        try:
            for line in waiting.stderr:
                told.append(line)
                if line.rstrip("\n") == WAIT_NOTICE:
                    break
        finally:
            deadline.cancel()
        assert told and told[-1].rstrip("\n") == WAIT_NOTICE, "".join(told)
        assert not (ws / "data" / "drafts" / "late.txt").exists()
    out, err = waiting.communicate(timeout=180)
    assert waiting.returncode == 0, "".join(told) + err
    assert json.loads(out)["changes"]["created"] == ["data/drafts/late.txt"]


@pytest.mark.slow
def test_four_concurrent_runs_each_record_exactly_their_own_changes(semif: Semif, ws: Path, tmp_path: Path) -> None:
    """Four real `semif run` processes started together on one workspace, each writing its own file while the
    others are acting (each sleeps between its two writes): each outcome lists only its own two files."""
    processes = [start_run(ws, tmp_path, f"create p{i}-a.txt; sleep 0.4; create p{i}-b.txt") for i in range(4)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        results.append(json.loads(out))
    for i, result in enumerate(results):
        assert result["changes"] == {
            "created": [f"data/drafts/p{i}-a.txt", f"data/drafts/p{i}-b.txt"],
            "modified": [],
            "deleted": [],
        }
    outcomes = {
        r.request: (r.changes or {})["created"]
        for r in DecisionLog(ws / "data" / "decisions.jsonl").read()
        if isinstance(r, OutcomeRow)
    }
    assert sorted(outcomes.values()) == [[f"data/drafts/p{i}-a.txt", f"data/drafts/p{i}-b.txt"] for i in range(4)]


def test_a_forced_undo_that_put_nothing_back_says_nothing_was_changed_and_why(semif: Semif, ws: Path) -> None:
    drafts = ws / "data" / "drafts"
    ran = run(semif, ws, "create mine.txt; append keep.bin")
    (drafts / "mine.txt").write_text("my own words now\n", encoding="utf-8")
    (drafts / "keep.bin").write_bytes(b"rewritten by hand")
    forced = semif("undo", ran["run_id"], "-w", str(ws), "--reason", "result", "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == (
        f"nothing was changed: every file run {ran['run_id']} (drafts.edit) changed was changed since, and --force "
        "leaves such files as they are (data/drafts/mine.txt changed since the run; "
        "data/drafts/keep.bin changed since the run)"
    )
    assert "undid" not in forced.stdout


def test_log_show_says_a_run_undone_for_its_route_failed_by_its_route(semif: Semif, ws: Path) -> None:
    ran = run(semif, ws, "create a.txt")
    assert semif("undo", ran["run_id"], "-w", str(ws), "--reason", "route").returncode == 0
    shown = semif("log", "show", ran["run_id"], "-w", str(ws)).stdout
    [label] = [line.split(None, 1)[1] for line in shown.splitlines() if line.startswith("label ")]
    assert label == (
        "failure of its route to drafts.edit (undone: wrong route); "
        f"`semif label {ran['run_id']} --skill NAME` says where it should have gone"
    )
