"""The README's Agent example, run as written: it greets through the provider set up, or says in one line what it needs."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.wire_server import WireReply

pytestmark = pytest.mark.slow  # each runs the example in a new interpreter that imports the whole agent

README = Path(__file__).resolve().parents[2] / "README.md"


def example() -> str:
    section = README.read_text(encoding="utf-8").split("\n## The Agent\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run_example(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "example.py"
    script.write_text(example(), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path), **env},
        cwd=tmp_path,
    )


def test_with_a_provider_set_up_it_prints_the_greeting(wire, tmp_path: Path) -> None:
    wire.queue(WireReply.tool_call("greet", {"name": "Alice"}), WireReply(text="Hello, Alice! Nice to meet you."))
    done = run_example(tmp_path, OPENAI_BASE_URL=wire.base_url("openai"), OPENAI_API_KEY="test-key")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "[openai/gpt-4o-mini]\nHello, Alice! Nice to meet you.\n"
    assert "Hello, Alice!" in str(wire.posts()[1].body["messages"])  # the tool's result went back to the model


def test_without_a_key_it_says_which_variable_to_set(tmp_path: Path) -> None:
    done = run_example(tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("cannot start: no API key for anthropic/claude-haiku-4-5-20251001: set ANTHROPIC_API_KEY")
    assert done.stdout == "[anthropic/claude-haiku-4-5-20251001]\n"


def test_with_the_provider_unreachable_it_says_so_and_exits_1(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = run_example(tmp_path, OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="test-key")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("the model could not answer: openai/gpt-4o-mini: cannot reach http://127.0.0.1:")
