"""The channel a confined call speaks on, written by hostile code: each bad line ends that call alone.

The code a call runs holds its channel's write end, so these calls write on it
what they like (``{"write": [text, times]}`` steps of the scripted callee):
forged values and reports, lines too deep, too long, or not text. Each must end
that call as a ``channel`` failure saying what was wrong, leave the worker (and
the calls beside it) unharmed, and change nothing about how the worker watches
the call.
"""

from __future__ import annotations

import asyncio

import pytest

from semif_agent.sandbox import SandboxLimits
from semif_agent.sandbox._messages import MAX_DEPTH, decode_line, nesting_depth_exceeds
from semif_agent.sandbox.channel import MAX_LINE_BYTES


async def echo(message: dict) -> dict:
    return {"echo": message}


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


HOSTILE = {
    "a forged error report": ([['E"disk"\n', 1]], "an error report"),
    "a second error report": ([['E"memory"\nE"exception"\n', 1]], "an error report"),
    "a late confinement report": ([['C{"processes": "pid-namespace"}\n', 1]], "not the call's first line"),
    "a result of the wrong shape": ([['V{"ok": true}\n', 1]], "a result that is not"),
    "a result for another call": ([['V{"call": 987654, "value": 1}\n', 1]], "a result for another call"),
    "a second result": ([['V{"call": $call, "value": 1}\n', 1]], "a second result"),
    "a question 100 deep": ([['A{"q": ' + deep(100) + "}\n", 1]], f"nested deeper than {MAX_DEPTH}"),
    "a line 100,000 deep": ([["A", 1], ["[", 100_000], ["]", 100_000], ["\n", 1]], "nested deeper"),
    "a 50 MB line": ([['A{"q": "', 1], ["x" * 65536, 800], ['"}\n', 1]], f"larger than {MAX_LINE_BYTES} bytes"),
    "garbage bytes": ([["\xff\xfe\x00\x01garbage\n", 1]], "a kind the channel does not know"),
    "a question of garbage": ([["A\xff\xfe{]\n", 1]], "not UTF-8 text"),
    "a question not JSON": ([["A{]\n", 1]], "not JSON"),
    "a lone surrogate": ([['A{"q": "\\udcff"}\n', 1]], "half a character"),
    "an encoded surrogate": ([['A{"q": "\xed\xb3\xbf"}\n', 1]], "not UTF-8 text"),
    "NaN": ([['A{"q": NaN}\n', 1]], "not JSON"),
    "two questions at once": ([["A{}\nA{}\n", 1]], "before the last one was answered"),
    "a warm module the worker does not keep": ([['W["os"]\n', 1]], "warm modules"),
    "a pattern for the worker to compile": ([['P[["x", 0]]\n', 1]], "a kind the channel does not know"),
}


@pytest.mark.parametrize("attack", list(HOSTILE))
async def test_a_malformed_or_forged_line_ends_that_call_alone(call, worker_pool, attack):
    writes, said = HOSTILE[attack]
    steps = [{"write": write} for write in writes] + [{"sleep": 1}, {"return": {"forged": False}}]
    result = await call(steps, on_message=echo)
    assert (result.ok, result.error_type, result.value) == (False, "channel", None), result
    assert "the skill's process sent a malformed message: " in result.stderr and said in result.stderr, result
    workers = worker_pool.pids
    again = await call([{"ask": {"q": 1}}], on_message=echo)
    assert (again.ok, again.value) == (True, {"answers": [{"echo": {"q": 1}}]}), again
    assert worker_pool.pids == workers  # the same warm worker served the next call


async def test_the_message_names_what_was_wrong(call):
    result = await call([{"write": ['V{"call": 987654, "value": 1}\n', 1]}, {"sleep": 1}])
    assert "[killed: the skill's process sent a malformed message: a result for another call]" in result.stderr


async def test_a_hostile_call_does_not_harm_the_calls_beside_it(call):
    async def slow_echo(message: dict) -> dict:
        await asyncio.sleep(0.05)
        return {"echo": message}

    hostile = call([{"write": ["A", 1]}, {"write": ["[", 100_000]}, {"write": ["\n", 1]}, {"sleep": 2}])
    calm = [call([{"ask": {"n": n, "step": s}} for s in range(3)], on_message=slow_echo) for n in range(4)]
    bad, *good = await asyncio.gather(hostile, *calm)
    assert bad.error_type == "channel"
    for n, result in enumerate(good):
        assert result.ok and result.value == {"answers": [{"echo": {"n": n, "step": s}} for s in range(3)]}, result


async def test_a_line_under_the_caps_crosses(call):
    nested = {"q": 1}
    for _ in range(MAX_DEPTH - 2):
        nested = {"q": nested}
    blob = "x" * (MAX_LINE_BYTES - 100)

    async def sized(message: dict) -> dict:
        return {"size": len(message.get("blob", "")), "keys": sorted(message)}

    result = await call([{"ask": {"nested": nested}}, {"ask": {"blob": blob}}], on_message=sized)
    assert result.ok, result
    assert result.value == {"answers": [{"size": 0, "keys": ["nested"]}, {"size": len(blob), "keys": ["blob"]}]}


async def test_a_control_line_does_not_switch_off_the_disk_watch(call, tmp_path):
    limits = SandboxLimits(memory_mb=512, max_disk_mb=2)
    steps = [{"write": ['E"memory"\n', 1]}, {"fill": ["big.bin", 8]}, {"sleep": 3}, {"return": "wrote it"}]
    result = await call(steps, limits=limits)
    assert (result.ok, result.error_type, result.value) == (False, "disk", None), result
    assert "over its 2 MB allowance" in result.stderr


async def test_a_claimed_error_only_names_the_calls_own_failure(call):
    result = await call([{"write": ['E"exception"\n', 1]}, {"return": "fine"}])
    assert (result.ok, result.error_type, result.value) == (True, "none", "fine"), result


@pytest.mark.parametrize(
    ("text", "deeper"),
    [
        (b'{"a": [1, 2, {"b": "[[[[[[[[[[[[[[[[[[[[[[[[[["}]}', False),
        (b'"' + b"[" * 100 + b'"', False),
        (b'["\\"' + b"[" * 100 + b'"]', False),
        (b"[" * 65 + b"]" * 65, True),
        (b"[" * 64 + b"]" * 64, False),
        (b"[" * 100_000, True),
        (b"[{" * 40 + b"}]" * 40, True),
    ],
)
def test_the_depth_check_skips_strings_and_counts_levels(text, deeper):
    assert nesting_depth_exceeds(text, MAX_DEPTH) is deeper


def test_escaped_characters_outside_the_basic_plane_cross_whole():
    assert decode_line(b'A{"q": "\\ud83d\\ude00 \\\\udcff"}', 100) == (b"A", {"q": "\U0001f600 \\udcff"})
    with pytest.raises(ValueError, match="half a character"):
        decode_line(b'A{"q": "\\ude00\\ud83d"}', 100)
