"""Each extra, installed alone (beside the README's ``local``) in a fresh virtual environment, does what it is for."""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import clean_env, run

pytestmark = pytest.mark.extras

REQUEST = "Email Alice that the quarterly report is ready"


def workspace(bin_dir: Path, base: Path) -> Path:
    made = run(bin_dir, "init", str(base / "ws"), home=base / "home")
    assert made.returncode == 0, made.stderr
    return base / "ws"


def fetch(url: str, data: dict | None = None, origin: str | None = None) -> tuple[int, dict, str]:
    """(status, headers, body) of a GET, or of a form POST; redirects are not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers={"Origin": origin} if origin else {})
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_ui_labels_undoes_and_trains_through_its_forms(venv_with, tmp_path: Path) -> None:
    bin_dir = venv_with("ui")
    root, home = workspace(bin_dir, tmp_path), tmp_path / "home"
    ran = run(bin_dir, "run", REQUEST, "-w", str(root), "--json", home=home)
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout)["run_id"]
    server = subprocess.Popen(
        [str(bin_dir / "semif"), "ui", "-w", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=clean_env(home),
    )
    try:
        url = None
        for line in server.stdout:  # type: ignore[union-attr]  # a pipe
            found = re.search(r"serving .* at (http://\S+/)", line)
            if found:
                url = found.group(1)
                break
        assert url, "semif ui did not start"
        origin = url.rstrip("/")
        token = re.search(r'name="semif-token" content="([^"]+)"', fetch(url)[2]).group(1)
        labelled = fetch(f"{url}runs/{run_id}/label", {"token": token, "skill_choice": "none", "by": "t"}, origin)
        assert labelled[0] == 303, labelled  # a 500 here is a form the extra cannot read
        undone = fetch(f"{url}runs/{run_id}/undo", {"token": token, "by": "t", "reason": "result"}, origin)
        assert undone[0] == 303, undone
        rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
        assert {"label", "undo"} <= {row["kind"] for row in rows if row.get("run_id") == run_id}
        assert fetch(f"{url}train", {"token": token}, origin)[0] == 303
        deadline = time.monotonic() + 240
        while (state := json.loads(fetch(f"{url}api/train")[2]))["state"] == "running" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert state["state"] == "done", state
    finally:
        server.terminate()
        server.wait(timeout=30)


MCP_CLIENT = """
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["mcp", "-w", sys.argv[2]])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        found = await session.call_tool("find_skills", {"request": sys.argv[3]})
        ran = await session.call_tool("run_skill", {"name": "email.compose", "request": sys.argv[3]})
        print(json.dumps({"tools": tools, "found": found.structured_content, "ran": ran.structured_content}))

asyncio.run(main())
"""


def test_mcp_answers_a_real_client(venv_with, tmp_path: Path) -> None:
    bin_dir = venv_with("mcp")
    root, home = workspace(bin_dir, tmp_path), tmp_path / "home"
    client = tmp_path / "client.py"
    client.write_text(MCP_CLIENT)
    answered = subprocess.run(
        [str(bin_dir / "python"), str(client), str(bin_dir / "semif"), str(root), REQUEST],
        capture_output=True,
        text=True,
        env=clean_env(home),
        timeout=300,
    )
    assert answered.returncode == 0, answered.stderr[-3000:]
    said = json.loads(answered.stdout)
    assert {"find_skills", "load_skill", "run_skill", "report_outcome"} <= set(said["tools"])
    assert said["found"]["best"] == "email.compose"
    assert said["ran"]["skill"] == "email.compose" and said["ran"]["changes"]["created"]


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, str, bytes]]]]:
    """A local OTLP/HTTP receiver: its base URL, and each request it got (path, content type, body)."""
    received: list[tuple[str, str, bytes]] = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.append((self.path, self.headers.get("Content-Type", ""), body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()
    server.server_close()


def test_otel_exports_the_spans_of_a_run(venv_with, tmp_path: Path, collector) -> None:
    bin_dir = venv_with("otel")
    url, received = collector
    root, home = workspace(bin_dir, tmp_path), tmp_path / "home"
    settings = root / "semif.toml"
    settings.write_text(settings.read_text() + f'\n[telemetry]\notlp_endpoint = "{url}"\n')
    ran = run(bin_dir, "run", REQUEST, "-w", str(root), home=home)
    assert ran.returncode == 0, ran.stderr
    assert "tracing" not in ran.stderr  # no warning that the extra is missing
    traces = [body for path, kind, body in received if path == "/v1/traces" and kind == "application/x-protobuf"]
    assert traces, received
    assert all(name in b"".join(traces) for name in (b"semif.run", b"semif.route", b"semif.assess", b"semif.decision"))


PRICES = """
import json
from semif_agent.llm.pricing import find_price, price_usage
from semif_agent.llm.usage import Usage
usage = Usage(input_tokens=1000, output_tokens=500)
print(json.dumps({
    "ours": find_price("anthropic", "claude-3-haiku-20240307") is not None,
    "cost": price_usage(usage, "anthropic", "claude-3-haiku-20240307").cost_usd,
}))
"""


def test_prices_price_a_model_our_own_table_does_not(venv_with, tmp_path: Path) -> None:
    bin_dir = venv_with("prices", base=())  # pricing needs no engine: the extra alone
    priced = subprocess.run(
        [str(bin_dir / "python"), "-c", PRICES], capture_output=True, text=True, env=clean_env(tmp_path), timeout=120
    )
    assert priced.returncode == 0, priced.stderr[-2000:]
    said = json.loads(priced.stdout)
    assert said["ours"] is False and said["cost"] == pytest.approx(1000 * 0.25e-6 + 500 * 1.25e-6)


def test_ray_runs_a_batch_on_a_local_cluster(venv_with, tmp_path: Path) -> None:
    bin_dir = venv_with("ray")
    root, home = workspace(bin_dir, tmp_path), tmp_path / "home"
    texts = [REQUEST, "Show my email drafts", "Add buy milk to my to-do list"]
    batch = tmp_path / "requests.jsonl"
    batch.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts))
    ran = run(bin_dir, "run", "--batch", str(batch), "-w", str(root), "--json", "--ray", home=home, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    runs = json.loads(ran.stdout)["runs"]
    assert [r["text"] for r in runs] == texts
    assert [r["skill"] for r in runs] == ["email.compose", "email.list_drafts", "todos.add"]
    logged = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    assert sum(row["kind"] == "outcome" for row in logged) == 3
