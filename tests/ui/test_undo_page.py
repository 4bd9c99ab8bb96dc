"""The web view's Undo button (a POST guarded by the page's token, like a label) and its "to label" page."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import make_workspace, start_ui, stop
from .test_server import fetch, page_token


def outcomes(root: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    return {row["request"]: row for row in rows if row["kind"] == "outcome"}


def test_the_undo_button_needs_the_token_and_takes_the_run_back(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", ("Email Alice that the quarterly report is ready",))
    [ran] = outcomes(root).values()
    [draft] = ran["changes"]["created"]
    assert (root / draft).is_file()
    served = start_ui(root, tmp_path / "home")
    try:
        page = fetch(served.url + f"runs/{ran['run_id']}")[2]
        assert f'action="/runs/{ran["run_id"]}/undo"' in page and "Undo these changes" in page
        target = served.url + f"runs/{ran['run_id']}/undo"
        assert fetch(target, data={"by": "tester"})[0] == 403
        token = page_token(served)
        foreign = fetch(target, data={"token": token}, headers={"Origin": "http://evil.example"})
        assert foreign[0] == 403
        assert (root / draft).is_file()

        status, headers, _ = fetch(target, data={"token": token, "by": "tester"})
        assert status == 303 and headers["location"] == f"/runs/{ran['run_id']}#undo"
        assert not (root / draft).exists()
        rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
        assert [(r["kind"], r["by"], r["removed"]) for r in rows if r["kind"] == "undo"] == [
            ("undo", "tester", [draft])
        ]
        page = fetch(served.url + f"runs/{ran['run_id']}")[2]
        assert "Undone: its changes were taken back." in page and "Undo these changes" not in page

        again = fetch(target, data={"token": token})
        assert again[0] == 400 and "was undone already" in again[2]

        queue = fetch(served.url + "to-label")[2]
        assert f'href="/runs/{ran["run_id"]}#label"' in queue and "undone" in queue
    finally:
        stop(served)
