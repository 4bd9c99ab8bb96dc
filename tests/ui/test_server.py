"""``semif ui`` as a server: label writes need the page's token and our own origin, loopback unless --public, training."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from .conftest import Served, make_workspace, semif, start_ui, stop


def fetch(url: str, *, data: dict | None = None, headers: dict | None = None) -> tuple[int, dict, str]:
    """(status, headers, body) of a GET, or of a form POST when ``data`` is given; redirects are not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(
        url, data=body, headers=headers or {}, method="POST" if data is not None else "GET"
    )
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def page_token(served: Served) -> str:
    return re.search(r'name="semif-token" content="([^"]+)"', fetch(served.url)[2]).group(1)


def first_run(served: Served) -> str:
    return json.loads((served.workspace / "data" / "decisions.jsonl").read_text().splitlines()[0])["run_id"]


def test_a_label_write_needs_the_page_token_and_our_own_origin(served: Served) -> None:
    log = served.workspace / "data" / "decisions.jsonl"
    before = log.read_bytes()
    target = served.url + f"runs/{first_run(served)}/label"
    token = page_token(served)
    assert fetch(target, data={"skill_choice": "none"})[0] == 403
    assert fetch(target, data={"skill_choice": "none", "token": token[:-1] + "x"})[0] == 403
    foreign = fetch(target, data={"skill_choice": "none", "token": token}, headers={"Origin": "http://evil.example"})
    assert foreign[0] == 403 and "another site" in foreign[2]
    assert log.read_bytes() == before

    status, headers, _ = fetch(
        target,
        data={"skill_choice": "none", "token": token, "by": "tester"},
        headers={"Origin": served.url.rstrip("/")},
    )
    assert status == 303 and headers["location"] == f"/runs/{first_run(served)}#label"
    appended = [json.loads(line) for line in log.read_bytes()[len(before) :].decode().splitlines()]
    assert [(row["kind"], row["skill"], row["by"]) for row in appended] == [("label", None, "tester")]


def test_pages_refuse_another_host_name_and_forbid_inline_script(served: Served) -> None:
    assert fetch(served.url, headers={"Host": "rebound.example"})[0] == 400
    status, headers, _ = fetch(served.url + "quality")
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"


def test_an_unknown_run_is_a_page_that_says_so(served: Served) -> None:
    status, _, body = fetch(served.url + "runs/19990101-nothing")
    assert status == 404 and "no run &#39;19990101-nothing&#39;" in body


@pytest.mark.slow
def test_listening_beyond_loopback_needs_public(served: Served) -> None:
    home = served.workspace.parent / "home"
    refused = semif(home, "ui", "-w", str(served.workspace), "--host", "0.0.0.0", "--port", "0")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        (
            "Error: 0.0.0.0 is not a loopback address: anyone who can reach it could read the log and write labels; "
            "pass --public to serve there anyway"
        )
    ]
    public = start_ui(served.workspace, home, "--host", "0.0.0.0", "--public")
    try:
        assert public.url.startswith("http://0.0.0.0:")
        assert fetch(public.url.replace("0.0.0.0", "127.0.0.1"))[0] == 200
    finally:
        stop(public)
    warned = public.process.stdout.read() if public.process.stdout else ""
    assert "warning: serving on 0.0.0.0" in public.said + warned


@pytest.mark.slow
def test_train_now_runs_the_training_and_reports_it(served: Served) -> None:
    pytest.importorskip("onnxruntime", reason="training needs the local model (the local extra)")
    token = page_token(served)
    assert fetch(served.url + "train", data={})[0] == 403
    status, headers, _ = fetch(served.url + "train", data={"token": token})
    assert status == 303 and headers["location"] == "/train"
    deadline = time.monotonic() + 120
    while True:
        state = json.loads(fetch(served.url + "api/train")[2])
        if state["state"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert state["state"] == "done", state
    assert state["report"]["classes"] == 11 and state["report"]["counts"]["examples"] > 0
    assert (served.workspace / "data" / "router.json").is_file()
    assert "Trained; saved to" in fetch(served.url + "train")[2]


@pytest.mark.slow
def test_a_run_whose_outcome_row_was_torn_shows_its_skill_and_that_the_outcome_is_missing(tmp_path) -> None:
    root = make_workspace(tmp_path / "ws", ("Email Alice that the report is ready",))
    log = root / "data" / "decisions.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # the outcome row, cut by a crash mid-write
    run_id = json.loads(lines[0])["run_id"]
    server = start_ui(root, tmp_path / "home")
    try:
        listed = fetch(server.url)[2]
        page = fetch(server.url + f"runs/{run_id}")[2]
    finally:
        stop(server)
    missing = "outcome missing: the log was cut, or the run is still going"
    assert re.search(rf"<td>email\.compose</td>\s*<td><span class=\"outcome none\">{missing}</span>", listed)
    assert re.search(rf"went to <b>email\.compose</b> ·\s*assessed <span class=\"outcome none\">{missing}</span>", page)


@pytest.mark.slow
def test_a_clients_find_is_listed_as_a_find_not_as_a_run_whose_outcome_is_missing(tmp_path) -> None:
    from semif_agent import Router

    root = make_workspace(tmp_path / "ws", ("Email Alice that the report is ready",))
    found = Router(root, client="tester").find("What is on my calendar tomorrow?")
    server = start_ui(root, tmp_path / "home")
    try:
        listed = fetch(server.url)[2]
        page = fetch(server.url + f"runs/{found.choice_id}")[2]
    finally:
        stop(server)
    assert "outcome missing" not in listed + page
    shown = "a find: the skills a client was offered, not a run"
    assert re.search(
        rf'tomorrow\?</a> <span class="tag">find</span></td>\s*<td>-</td>\s*<td><span class="outcome none">{shown}',
        listed,
    )
    assert f'<p class="summary">{shown}</p>' in page


@pytest.mark.slow
def test_public_keeps_the_host_check_and_answers_only_the_names_it_was_told(served: Served) -> None:
    home = served.workspace.parent / "home-public"
    public = start_ui(served.workspace, home, "--host", "0.0.0.0", "--public", "--allow-host", "semif.lan")
    try:
        url = public.url.replace("0.0.0.0", "127.0.0.1")
        log = served.workspace / "data" / "decisions.jsonl"
        before = log.read_bytes()
        status, _, body = fetch(url, headers={"Host": "attacker.example"})
        assert status == 400 and "semif-token" not in body
        token = page_token(Served(url, served.workspace, public.process))
        target = url + f"runs/{first_run(served)}/label"
        rebound = fetch(
            target,
            data={"skill_choice": "none", "token": token},
            headers={"Host": "attacker.example", "Origin": "http://attacker.example"},
        )
        assert rebound[0] == 400 and log.read_bytes() == before
        status, _, body = fetch(url, headers={"Host": "semif.lan"})
        assert status == 200 and "semif-token" in body
    finally:
        stop(public)
    assert "semif.lan" in public.said + (public.process.stdout.read() if public.process.stdout else "")


@pytest.mark.parametrize("name", ["a*b", "http://evil.example", "evil.example:80"])
def test_a_malformed_allow_host_is_one_line(tmp_path, name) -> None:
    from click.testing import CliRunner

    from semif_agent.cli import main

    root = make_workspace(tmp_path / "ws", requests=())
    result = CliRunner().invoke(main, ["ui", "-w", str(root), "--port", "0", "--allow-host", name])
    assert result.exit_code != 0 and "--allow-host takes a host name" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
