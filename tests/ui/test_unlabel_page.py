"""The run page's "Take label back" (a POST guarded by the page's token, like a label): the run is unlabelled again."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import make_workspace, start_ui, stop
from .test_server import fetch, page_token


def rows(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]


def test_take_label_back_needs_the_token_and_unlabels_the_run(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", ("Convert the budget spreadsheet to a PDF",))
    [run_id] = {row["run_id"] for row in rows(root) if row["kind"] == "outcome"}
    served = start_ui(root, tmp_path / "home")
    try:
        page = fetch(served.url + f"runs/{run_id}")[2]
        assert "Take label back" not in page, "nothing to take back before a label"
        token = page_token(served)
        assert fetch(served.url + f"runs/{run_id}/label", data={"token": token, "skill_choice": "none"})[0] == 303
        page = fetch(served.url + f"runs/{run_id}")[2]
        assert f'action="/runs/{run_id}/unlabel"' in page and "Take label back" in page

        target = served.url + f"runs/{run_id}/unlabel"
        assert fetch(target, data={"by": "tester"})[0] == 403
        assert fetch(target, data={"token": token}, headers={"Origin": "http://evil.example"})[0] == 403
        assert [row["kind"] for row in rows(root)].count("unlabel") == 0

        status, headers, _ = fetch(target, data={"token": token, "by": "tester"})
        assert status == 303 and headers["location"] == f"/runs/{run_id}#label"
        assert [(row["kind"], row["by"]) for row in rows(root) if row["kind"] == "unlabel"] == [("unlabel", "tester")]
        page = fetch(served.url + f"runs/{run_id}")[2]
        assert "not labelled yet" in page and "Take label back" not in page
        assert "took the labels back" in page

        again = fetch(target, data={"token": token})
        assert again[0] == 400 and "has no label to take back" in again[2]
    finally:
        stop(served)
