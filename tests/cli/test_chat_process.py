"""`semif chat` in a real process: the model it picked on one line, and a non-zero exit when the provider failed."""

from __future__ import annotations

import socket

import pytest

pytestmark = pytest.mark.slow  # real `semif chat` processes, each starting the package anew


def test_an_unreachable_provider_ends_the_session_with_exit_1(semif) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert semif("init", "ws").returncode == 0
    done = semif(
        "chat",
        "-w",
        "ws",
        "--engine",
        "lexical",
        input="hello\n",
        env={"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "test-key"},
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 1, done.stderr
    assert (
        lines[0]
        == "semif: model openai/gpt-4o-mini (OPENAI_API_KEY and OPENAI_BASE_URL are set; --model to choose another)"
    )
    assert any(
        line.endswith(
            f"error: openai/gpt-4o-mini: cannot reach http://127.0.0.1:{port}/v1 "
            "(ConnectError: All connection attempts failed)"
        )
        for line in lines
    ), lines
    assert lines[-1] == "Error: 1 turn failed (see the error lines above)" and "Traceback" not in done.stderr


def test_with_no_provider_set_up_it_says_the_default_and_the_key_it_needs(semif) -> None:
    assert semif("init", "ws").returncode == 0
    done = semif("chat", "-w", "ws", "--engine", "lexical", input="hello\n")
    assert done.returncode == 1
    first, last = done.stderr.strip().splitlines()
    assert first.startswith("semif: model anthropic/claude-haiku-4-5-20251001 (the default: neither ANTHROPIC_API_KEY")
    assert last.startswith("Error: no API key for anthropic/claude-haiku-4-5-20251001: set ANTHROPIC_API_KEY")
