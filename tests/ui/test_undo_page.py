"""The web view's Undo button (a POST guarded by the page's token, like a label) and its "to label" page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from .conftest import make_workspace, start_ui, stop
from .test_server import fetch, page_token


def outcomes(root: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    return {row["request"]: row for row in rows if row["kind"] == "outcome"}


@pytest.mark.slow
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

        status, headers, _ = fetch(target, data={"token": token, "by": "tester", "reason": "route"})
        assert status == 303 and headers["location"] == f"/runs/{ran['run_id']}#undo"
        assert not (root / draft).exists()
        rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
        assert [(r["kind"], r["by"], r["reason"], r["removed"]) for r in rows if r["kind"] == "undo"] == [
            ("undo", "tester", "route", [draft])
        ]
        page = fetch(served.url + f"runs/{ran['run_id']}")[2]
        assert "Undone by tester" in page and "Undo these changes" not in page

        again = fetch(target, data={"token": token})
        assert again[0] == 400 and "was undone already" in again[2]

        queue = fetch(served.url + "to-label")[2]
        assert f'href="/runs/{ran["run_id"]}#label"' in queue and "undone" in queue
    finally:
        stop(served)


def words(page: str) -> str:
    """A page's text as a reader sees it: tags taken out, entities read, white space as single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def badges(page: str) -> list[str]:
    """The status badges a page shows, as text."""
    return [html.unescape(text) for text in re.findall(r'<span class="outcome [^"]*"[^>]*>([^<]*)</span>', page)]


@pytest.mark.slow
def test_an_undone_run_shows_as_undone_with_its_reason_and_what_the_undo_did_in_words(tmp_path: Path) -> None:
    requests = ("Email Alice that the quarterly report is ready", "Email Bob that the logo files arrived")
    root = make_workspace(tmp_path / "ws", requests)
    alice, bob = (outcomes(root)[text] for text in requests)
    assert alice["outcome"] == bob["outcome"] == "success"
    served = start_ui(root, tmp_path / "home")
    try:
        page = fetch(served.url + f"runs/{alice['run_id']}")[2]
        assert 'name="reason" value="route"' in page and 'name="reason" value="result"' in page
        token = page_token(served)
        for ran, reason in ((alice, "route"), (bob, "result")):
            target = served.url + f"runs/{ran['run_id']}/undo"
            assert fetch(target, data={"token": token, "by": "tester", "reason": reason})[0] == 303

        runs = fetch(served.url)[2]
        assert sorted(badges(runs)) == ["undone: result unwanted", "undone: wrong route"]  # no green "success"
        alice_page = fetch(served.url + f"runs/{alice['run_id']}")[2]
        assert "undone: wrong route" in badges(alice_page) and "success" not in alice_page.split("assessed")[0]
        assert '<span class="outcome success"' not in alice_page
        said = words(alice_page.split('id="undo"')[1].split("</div>")[0])
        assert "the route was wrong: the request should not have gone to email.compose" in said
        assert f"removed {alice['changes']['created'][0]} (the run created it)" in said
        assert '"removed"' not in alice_page and "&#34;removed&#34;" not in alice_page  # no raw JSON of the row
        bob_page = fetch(served.url + f"runs/{bob['run_id']}")[2]
        assert "undone: result unwanted" in badges(bob_page)
        assert "only the result was unwanted: the route to email.compose was right" in words(bob_page)
    finally:
        stop(served)


def test_a_run_whose_created_file_is_gone_offers_to_undo_the_rest(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", ("Email Alice that the quarterly report is ready",))
    [ran] = outcomes(root).values()
    [draft] = ran["changes"]["created"]
    (root / draft).unlink()  # removed by hand
    served = start_ui(root, tmp_path / "home")
    try:
        page = fetch(served.url + f"runs/{ran['run_id']}")[2]
        assert f"{draft} is gone since the run" in words(page) and 'name="force" value="1"' in page
        target = served.url + f"runs/{ran['run_id']}/undo"
        token = page_token(served)
        refused = fetch(target, data={"token": token, "reason": "result"})
        assert refused[0] == 400 and "--force undoes the rest" in html.unescape(refused[2])
        status = fetch(target, data={"token": token, "reason": "result", "force": "1", "by": "tester"})[0]
        assert status == 303
        rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
        [undo] = [r for r in rows if r["kind"] == "undo"]
        assert (undo["reason"], undo["removed"], undo["skipped"]) == ("result", [], {draft: "is gone since the run"})
        said = words(fetch(served.url + f"runs/{ran['run_id']}")[2])
        assert f"left {draft} as it is (it is gone since the run)" in said
    finally:
        stop(served)
