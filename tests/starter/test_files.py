"""files.find and files.recent over the starter's sample files (read-only)."""

from __future__ import annotations

import os
import time


def snapshot(root):
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}


def test_find_by_name(ws, run):
    root = ws.root / "files"
    before = snapshot(root)
    done = run("files.find", "Where is the Q3 summary report?", ["document"])
    assert done.engine.calls[0].option_ids == ["document", "spreadsheet", "image", "code", "none"]
    assert done.result.new_state == "1 file(s) found:\n- reports/q3-summary.md"
    assert snapshot(root) == before


def test_find_by_a_word_inside(ws, run):
    done = run("files.find", "which file mentions Sintra?", ["none"])
    assert done.result.new_state == "1 file(s) found:\n- travel/lisbon-itinerary.md"


def test_the_kind_ranks_first(ws, run):
    done = run("files.find", "find the budget spreadsheet", ["spreadsheet"])
    lines = done.result.new_state.splitlines()[1:]
    assert lines[0] == "- reports/2024-budget.csv"
    assert "- reports/q3-summary.md" in lines  # mentions the budget too, but is not a spreadsheet


def test_a_named_extension_needs_no_decision(ws, run):
    done = run("files.find", "find my pdfs")
    assert done.engine.calls == []
    assert done.result.new_state == "1 file(s) found:\n- invoices/invoice-1042.pdf"
    done = run("files.find", "find the invoice pdf")
    assert done.result.new_state == "1 file(s) found:\n- invoices/invoice-1042.pdf"


def test_a_kind_alone_lists_that_kind(ws, run):
    done = run("files.find", "show me my images", ["image"])
    assert done.result.new_state == "1 file(s) found:\n- projects/website/logo.svg"


def test_nothing_to_look_for_hands_the_request_back(ws, run):
    done = run("files.find", "find some files", ["none"])
    assert done.result.new_state == "find some files"
    done = run("files.find", "find the tax return", ["none"])
    assert done.result.new_state == "No files match 'tax return'."


def test_find_skips_hidden_files(ws, run):
    (ws.root / "files" / ".secret-report.md").write_text("report")
    done = run("files.find", "find the report", ["none"])
    assert ".secret" not in done.result.action_log


def age_files(root, recent):
    old = time.time() - 40 * 86400
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))
    for n, rel in enumerate(recent):
        stamp = time.time() - 60 * (n + 1)
        os.utime(root / rel, (stamp, stamp))


def test_recent_lists_files_changed_today(ws, run):
    root = ws.root / "files"
    age_files(root, ["travel/lisbon-itinerary.md", "reports/q3-summary.md"])
    done = run("files.recent", "what files did I change today?", ["today"])
    assert done.engine.calls[0].option_ids == ["today", "week", "month", "none"]
    lines = done.result.new_state.splitlines()
    assert lines[0] == "2 recent file(s) changed today:"
    assert lines[1].startswith("- travel/lisbon-itinerary.md (") and lines[2].startswith("- reports/q3-summary.md (")


def test_recent_without_a_window_shows_the_newest(ws, run):
    root = ws.root / "files"
    age_files(root, ["recipes/banana-bread.md", "invoices/invoice-1043.txt", "reports/2024-budget.csv"])
    before = snapshot(root)
    done = run("files.recent", "show the last 2 files I worked on", ["none"])
    assert [line.split(" (")[0] for line in done.result.new_state.splitlines()] == [
        "2 recent file(s):",
        "- recipes/banana-bread.md",
        "- invoices/invoice-1043.txt",
    ]
    assert snapshot(root) == before
    done = run("files.recent", "files changed this month", ["month"])
    assert "3 recent file(s) changed this month" in done.result.new_state


def test_recent_without_the_folder_hands_the_request_back(ws, run, tmp_path):
    run.ws.settings.paths.files_root = str(tmp_path / "missing")
    done = run("files.recent", "recent files", ["none"])
    assert done.result.new_state == "recent files"
