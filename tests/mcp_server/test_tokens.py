"""Client tokens of `semif mcp --http`: each client named by its token, never by its handshake; revoked at once."""

from __future__ import annotations

import asyncio
import json
import os
import stat

import pytest
from click.testing import CliRunner
from mcp.shared.exceptions import MCPError

from semif_agent.cli import main
from semif_agent.loop.confined import readable_data
from semif_agent.mcp_server._http import TOKEN_ENV, BearerToken, shared_token
from semif_agent.mcp_server.tokens import TOKENS_FILE, ClientToken, TokenStore, TokenStoreError
from semif_agent.records import DecisionLog, DecisionRow, LabelRow
from semif_agent.workspace import Workspace
from semif_agent.workspace.records import records

from ._client import Bearer, ToolFailed, http
from .conftest import starter_workspace
from .test_http import post, serving, serving_here


@pytest.fixture(scope="module")
def starter(tmp_path_factory):
    """A starter workspace (its code skills), and the env to serve it in."""
    return starter_workspace(tmp_path_factory.mktemp("tokens"))


def semif(*args: str) -> tuple[int, str, str]:
    """`semif ARGS...` in this process: its exit code, stdout and stderr."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def finds_by_client(root) -> dict[str, str]:
    """Each find's choice id and the client it was logged under."""
    rows = DecisionLog(root / "data" / "decisions.jsonl").read()
    return {r.run_id: r.extra_field("client") for r in rows if isinstance(r, DecisionRow) and r.kind == "shortlist"}


def test_each_client_is_named_by_its_token_never_by_the_name_it_gives_itself(starter, monkeypatch):
    root, env = starter
    store = TokenStore(root)
    alice, _ = store.add("alice")
    bob, _ = store.add("bob")

    async def session():
        # each claims the other's name in its handshake
        async with http(url, alice, name="bob") as as_alice, http(url, bob, name="alice") as as_bob:
            a = await as_alice.call("find_skills", request="Email Alice that the quarterly report is ready")
            b = await as_bob.call("find_skills", request="Add a todo to renew the car insurance")
            with pytest.raises(ToolFailed, match="is not a find or run of client 'bob'"):
                await as_bob.call("report_outcome", id=a["choice_id"], outcome="failure", skill="none")
            own = await as_alice.call("report_outcome", id=a["choice_id"], outcome="success", skill="email.compose")
            return a["choice_id"], b["choice_id"], own

    with serving_here(root, env, monkeypatch, token=None, clients=store) as (_, url, _):
        a, b, own = asyncio.run(session())
    assert own == {"labelled": a}
    clients = finds_by_client(root)
    assert (clients[a], clients[b]) == ("alice", "bob")
    labels = [r for r in DecisionLog(root / "data" / "decisions.jsonl").read() if isinstance(r, LabelRow)]
    assert [(r.run_id, r.by) for r in labels if r.source == "client"] == [(a, "alice")]  # bob's claim: none


def test_a_tokens_own_rate_limits_its_client_alone(starter, monkeypatch):
    """A client token made with --rate 0.5 may make one call, then is answered "busy:" (nothing logged) while a
    client without a rate goes on."""
    root, env = starter
    store = TokenStore(root)
    slow, _ = store.add("slow", rate=0.5)
    free, _ = store.add("free")

    async def session():
        async with http(url, slow) as as_slow, http(url, free) as as_free:
            first = await as_slow.call("find_skills", request="Add a todo to book the piano tuner")
            with pytest.raises(ToolFailed) as refused:
                await as_slow.call("find_skills", request="Add a todo to call the electrician")
            others = [await as_free.call("find_skills", request=f"Add a todo number {n}") for n in range(5)]
            return first, str(refused.value), others

    with serving_here(root, env, monkeypatch, token=None, clients=store) as (_, url, _):
        first, refused, others = asyncio.run(session())
    assert refused.startswith("busy: client 'slow' is over its rate of 0.5 calls a second; retry in ")
    assert first["choice_id"] in finds_by_client(root) and len(others) == 5
    assert "Add a todo to call the electrician" not in [
        r.state for r in DecisionLog(root / "data" / "decisions.jsonl").read() if isinstance(r, DecisionRow)
    ]


def test_a_revoked_token_is_refused_on_its_next_request_and_the_others_still_work(starter, monkeypatch):
    root, env = starter
    store = TokenStore(root)
    carol, dave = Bearer(store.add("carol")[0]), store.add("dave")[0]
    late = "Add a todo to call the plumber"

    async def session():
        async with http(url, carol) as as_carol, http(url, dave) as as_dave:
            await as_carol.call("find_skills", request="Email Bob that the build is green")
            assert semif("mcp", "token", "revoke", "carol", "-w", str(root))[0] == 0  # while its session is open
            carol.statuses.clear()
            with pytest.raises(MCPError):
                await as_carol.call("find_skills", request=late)
            refused = list(carol.statuses)
            found = await as_dave.call("find_skills", request="Email Bob that the build is green")
            return refused, found

    with serving_here(root, env, monkeypatch, token=None, clients=store) as (_, url, _):
        refused, found = asyncio.run(session())
    assert 401 in refused and 200 not in refused
    assert finds_by_client(root)[found["choice_id"]] == "dave"
    assert late not in (root / "data" / "decisions.jsonl").read_text()  # nothing of it reached the log


def test_a_server_of_a_workspace_with_client_tokens_makes_no_shared_token(starter):
    root, env = starter
    token, _ = TokenStore(root).add("frank")
    env = {key: value for key, value in env.items() if key != TOKEN_ENV}
    with serving(root, env, "--http", "127.0.0.1:0") as (url, shared):
        assert shared is None
        assert (post(url, token), post(url, "anything else")) == (200, 401)


def test_the_store_keeps_only_hashes_readable_by_its_owner(tmp_path):
    (tmp_path / "ws").mkdir()
    store = TokenStore(tmp_path / "ws")
    token, stored = store.add("ci", rate=2)
    data = store.path.read_text()
    assert token not in data and stored.sha256 in data
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert store.lookup(token) == ClientToken("ci", 2.0) and store.lookup(token + "x") is None
    fresh = TokenStore(tmp_path / "ws")  # another process: the same clients, read from the file
    assert [s.to_dict() for s in fresh.tokens()] == [{"name": "ci", "made": stored.made, "rate": 2.0}]
    with pytest.raises(TokenStoreError, match="has a token already"):
        store.add("ci")
    for name in ("", "two words", "tab\there", "x" * 65, "bell\a"):
        with pytest.raises(TokenStoreError, match="printable characters without spaces"):
            store.add(name)
    store.revoke("ci")
    assert store.lookup(token) is None and not store.tokens()


HOSTILE = {
    "not JSON": lambda path, _: path.write_text("{nope"),
    "another shape": lambda path, _: path.write_text('{"version": 1, "clients": {"a": 1}}'),
    "a bad name": lambda path, _: path.write_text(
        json.dumps({"version": 1, "clients": [{"name": "a b", "made": "x", "sha256": "0" * 64}]})
    ),
    "a hash that is no hash": lambda path, _: path.write_text(
        json.dumps({"version": 1, "clients": [{"name": "a", "made": "x", "sha256": "a-token-in-clear"}]})
    ),
    "twice the same name": lambda path, _: path.write_text(
        json.dumps({"version": 1, "clients": [{"name": "a", "made": "x", "sha256": c * 64} for c in "01"]})
    ),
    "too deep": lambda path, _: path.write_text("[" * 100_000),
    "too large": lambda path, _: path.write_text(" " * (2 << 20)),
    "a link to a valid store": lambda path, valid: path.symlink_to(valid),
    "a folder": lambda path, _: path.mkdir(),
    "a FIFO": lambda path, _: os.mkfifo(path),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_malformed_or_hostile_store_is_one_line_and_the_server_accepts_no_client_token(tmp_path, kind):
    (tmp_path / "elsewhere").mkdir()
    valid = TokenStore(tmp_path / "elsewhere")
    token, _ = valid.add("mallory")
    (tmp_path / "ws" / ".semif").mkdir(parents=True)
    store = TokenStore(tmp_path / "ws")
    HOSTILE[kind](store.path, valid.path)
    with pytest.raises(TokenStoreError) as broken:
        store.tokens()
    assert str(store.path) in str(broken.value) and "\n" not in str(broken.value)
    said: list[str] = []
    middleware = BearerToken(answer_ok, None, store, warn=said.append)
    assert asyncio.run(status(middleware, token)) == 401
    assert asyncio.run(status(BearerToken(answer_ok, None, valid), token)) == 200  # the same token, where it is good
    assert said == [str(broken.value)]  # said once, as the server starts, not again on each request
    with pytest.raises(TokenStoreError):
        store.add("another")  # never written over: the user fixes or removes it


def test_the_host_folder_as_a_link_is_never_followed(tmp_path):
    (tmp_path / "ws").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "ws" / ".semif").symlink_to(outside)
    store = TokenStore(tmp_path / "ws")
    with pytest.raises(TokenStoreError, match="never followed"):
        store.add("ci")
    with pytest.raises(TokenStoreError, match="never followed"):
        store.tokens()
    assert list(outside.iterdir()) == []


async def answer_ok(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def status(app, token: str) -> int:
    """The status ``app`` answers a request bearing ``token`` with."""
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "headers": [(b"authorization", f"Bearer {token}".encode())], "state": {}}
    await app(scope, receive, send)
    return sent[0]["status"]


def test_the_store_is_a_record_no_skill_writes_or_reads(starter):
    """Its folder is a record (no write dir may reach it: tests/kernel/test_workspace_settings.py), and no
    ``[paths]`` entry brings it into a code skill's sight."""
    root, _ = starter
    store = TokenStore(root)
    store.add("erin")
    ws = Workspace.load(root)
    assert any(record.path == store.path.parent for record in records(ws))
    assert readable_data(ws, {"tokens": str(store.path), "host": str(store.path.parent)}) == []


def test_the_shared_token_rule(tmp_path, monkeypatch):
    (tmp_path / "ws").mkdir()
    store = TokenStore(tmp_path / "ws")
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    token, line = shared_token(store)
    assert token and line == f"token {token}"  # no client token: a shared one is made, as before
    store.add("ci")
    assert shared_token(store) == (
        None,
        f"no shared token: 1 client token (semif mcp token list; ${TOKEN_ENV} sets a shared one)",
    )
    monkeypatch.setenv(TOKEN_ENV, "given")
    assert shared_token(store) == ("given", "token given (and 1 client token: semif mcp token list)")
    store.path.write_text("{nope")
    monkeypatch.delenv(TOKEN_ENV)
    assert shared_token(store)[0] is None  # a store that cannot be read: no shared token made either


def test_the_cli_adds_lists_and_revokes_with_json_and_one_line_errors(tmp_path, monkeypatch):
    root, env = starter_workspace(tmp_path)
    for name in ("HOME", "SEMIF_HOME"):
        monkeypatch.setenv(name, env[name])
    code, out, _ = semif("mcp", "token", "add", "ci", "--rate", "1.5", "-w", str(root), "--json")
    added = json.loads(out)
    assert code == 0 and added["name"] == "ci" and added["rate"] == 1.5
    assert added["header"] == f"Authorization: Bearer {added['token']}"
    code, out, _ = semif("mcp", "-w", str(root), "token", "add", "laptop")  # the group's -w names it too
    token = out.splitlines()[1]
    assert code == 0 and f"Authorization: Bearer {token}" in out and token not in store_text(root)
    code, out, _ = semif("mcp", "token", "list", "-w", str(root), "--json")
    listed = json.loads(out)["clients"]
    assert [(c["name"], c["rate"]) for c in listed] == [("ci", 1.5), ("laptop", None)]
    assert added["token"] not in out and token not in out and "sha256" not in out
    code, out, _ = semif("mcp", "token", "list", "-w", str(root))
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["ci", "laptop"]
    for args, error in (
        (("add", "ci"), "a client named 'ci' has a token already"),
        (("add", "a b"), "printable characters without spaces"),
        (("revoke", "nobody"), "no client token named 'nobody'"),
    ):
        code, out, err = semif("mcp", "token", *args, "-w", str(root))
        assert code != 0 and error in err and len(err.strip().splitlines()) == 1
        code, out, _ = semif("mcp", "token", *args, "-w", str(root), "--json")
        assert code != 0 and error in json.loads(out)["error"]
    code, out, _ = semif("mcp", "token", "revoke", "ci", "-w", str(root), "--json")
    assert code == 0 and json.loads(out) == {"revoked": "ci"}
    assert [c["name"] for c in json.loads(semif("mcp", "token", "list", "-w", str(root), "--json")[1])["clients"]] == [
        "laptop"
    ]
    (root / ".semif" / TOKENS_FILE).write_text("{nope")
    code, _, err = semif("mcp", "token", "list", "-w", str(root))
    assert code != 0 and str(root / ".semif" / TOKENS_FILE) in err and len(err.strip().splitlines()) == 1


def store_text(root) -> str:
    return (root / ".semif" / TOKENS_FILE).read_text()


def test_a_shared_token_client_naming_itself_after_a_tokens_client_is_not_that_client(starter, monkeypatch):
    root, env = starter
    store = TokenStore(root)
    alice, _ = store.add("alice-shared-test")

    async def session():
        async with http(url, alice) as as_alice, http(url, "secret", name="alice-shared-test") as as_mallory:
            a = await as_alice.call("find_skills", request="Email Carol that the invoices are paid")
            with pytest.raises(ToolFailed, match="is not a find or run of client 'shared:alice-shared-test'"):
                await as_mallory.call("report_outcome", id=a["choice_id"], outcome="failure", skill="none")
            m = await as_mallory.call("find_skills", request="Add a todo to pay the invoices")
            return a["choice_id"], m["choice_id"]

    with serving_here(root, env, monkeypatch, token="secret", clients=store) as (_, url, _):
        a, m = asyncio.run(session())
    clients = finds_by_client(root)
    assert (clients[a], clients[m]) == ("alice-shared-test", "shared:alice-shared-test")


def test_a_client_opening_session_after_session_is_refused_before_a_session_is_made(starter, monkeypatch):
    """Each handshake over HTTP opens a session the server keeps: past 20 a minute, a client's next is answered 429
    (no session made), while another client still opens its own."""
    root, env = starter
    store = TokenStore(root)
    flood, other = store.add("flood")[0], store.add("calm")[0]

    def frozen(server):  # no session comes back meanwhile, however slow the machine
        server.admission.clock = lambda: 100.0

    with serving_here(root, env, monkeypatch, frozen, token=None, clients=store) as (server, url, _):
        statuses = [post(url, flood) for _ in range(25)]
        calm = post(url, other)
        busy = server.admission.busy_answers
    assert statuses[:20] == [200] * 20 and set(statuses[20:]) == {429}
    assert calm == 200 and busy == 5
