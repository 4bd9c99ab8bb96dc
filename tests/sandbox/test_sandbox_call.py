"""WorkerPool.call: a confined function of the package, its value, its failures, its message channel.

The callee is :mod:`semif_agent.sandbox.scripted_call`, the testing target that
does what its payload lists (ask the host, print, sleep, exit, raise, crash).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import types
from collections.abc import Iterator

import pytest

import semif_agent
from semif_agent.sandbox import CallTargetError, SandboxLimits, WorkerPool, scripted_call
from semif_agent.sandbox.limits import confinement_spec


async def echo(message: dict) -> dict:
    return {"echo": message}


async def test_a_call_returns_its_value_and_output(call, capfd):
    result = await call([{"print": "to stdout"}, {"stderr": "to stderr"}, {"return": {"n": [1, 2]}}])
    assert (result.ok, result.exit_code, result.error_type, result.value) == (True, 0, "none", {"n": [1, 2]})
    assert (result.stdout, result.stderr) == ("to stdout\n", "to stderr\n")
    assert result.confinement["processes"] in {"pid-namespace", "cgroup", "subreaper"}
    assert result.as_dict()["value"] == {"n": [1, 2]}
    assert "to stdout" not in capfd.readouterr().out


async def test_a_pattern_a_call_compiled_is_not_in_the_next_calls_process(call):
    """A call's code (its compiled patterns too) stays in its own process: later calls start from a zygote
    that holds nothing of a call."""
    pattern = r"warm (?P<word>\w+) pattern \d+$"
    results = [await call([{"regex": pattern}]) for _ in range(5)]
    assert all(result.ok for result in results), results
    assert [result.value for result in results] == [{"answers": [False]}] * 5


async def test_questions_get_the_handlers_answers_in_order(call):
    seen = []

    async def handler(message):
        seen.append(message)
        await asyncio.sleep(0)
        return {"twice": message["n"] * 2}

    result = await call([{"ask": {"n": n}} for n in range(5)], on_message=handler)
    assert result.ok, result
    assert result.value == {"answers": [{"twice": n * 2} for n in range(5)]}
    assert seen == [{"n": n} for n in range(5)]


async def test_many_calls_talk_at_once_each_to_its_own(call):
    async def handler(message):
        await asyncio.sleep(0.01 * (message["call"] % 3))
        return {"call": message["call"], "step": message["step"]}

    results = await asyncio.gather(
        *(call([{"ask": {"call": c, "step": s}} for s in range(4)], on_message=handler) for c in range(20))
    )
    for c, result in enumerate(results):
        assert result.ok, result
        assert result.value == {"answers": [{"call": c, "step": s} for s in range(4)]}


async def test_a_handler_that_raises_gives_the_child_an_error(call):
    async def handler(message):
        if message.get("bad"):
            raise ValueError("no such record")
        return {"fine": True}

    result = await call([{"ask": {"bad": True}}, {"ask": {}}], on_message=handler)
    assert result.ok, result
    assert result.value == {"answers": [{"error": "ValueError: no such record"}, {"fine": True}]}
    unanswerable = await call([{"ask": {"q": 1}}])
    assert unanswerable.value == {"answers": [{"error": "LookupError: this call takes no messages"}]}


async def test_a_child_that_dies_while_asking_ends_the_call(call):
    started, finished = [], []

    async def slow(message):
        started.append(message)
        await asyncio.sleep(5)
        finished.append(message)
        return {}

    begun = time.monotonic()
    result = await call([{"die_after": 0.3}, {"ask": {"q": 1}}], on_message=slow)
    assert time.monotonic() - begun < 4
    assert (result.ok, result.exit_code, result.error_type, result.value) == (False, 9, "exit", None)
    assert started == [{"q": 1}]
    await asyncio.sleep(0.05)
    assert finished == []  # its handler was cancelled: nobody waits for the answer
    assert (await call([{"ask": {"again": 1}}], on_message=echo)).value == {"answers": [{"echo": {"again": 1}}]}


async def test_a_call_timed_out_while_asking_drops_its_late_answer(call):
    gate = asyncio.Event()

    async def stuck(message):
        await gate.wait()
        return {"late": True}

    result = await call([{"ask": {"q": 1}}], on_message=stuck, timeout_sec=1)
    assert result.error_type == "timeout", result
    gate.set()
    assert (await call([{"ask": {"q": 2}}], on_message=echo)).ok


@pytest.mark.parametrize(
    ("step", "exit_code", "error_type"),
    [
        ({"exit": 3}, 3, "exit"),
        ({"os_exit": 4}, 4, "exit"),
        ({"raise": "broken"}, 1, "exception"),
        ({"crash": True}, -11, "signal"),
    ],
)
async def test_every_way_a_callee_fails_is_reported(call, step, exit_code, error_type):
    result = await call([{"print": "before"}, step, {"print": "after"}])
    assert (result.ok, result.exit_code, result.error_type, result.value) == (False, exit_code, error_type, None)
    assert result.stdout == "before\n"
    if error_type == "exception":
        assert "RuntimeError: broken" in result.stderr and "sandbox/_call.py" not in result.stderr


async def test_a_huge_message_and_answer_cross_whole_under_a_raised_cap(call):
    big = "x" * (8 * 1024 * 1024)

    async def sized(message):
        return {"size": len(message["blob"]), "blob": message["blob"][:10] + big}

    result = await call([{"ask": {"blob": big}}], on_message=sized, max_message_bytes=32 * 1024 * 1024)
    assert result.ok, result
    answer = result.value["answers"][0]
    assert answer["size"] == len(big) and len(answer["blob"]) == len(big) + 10


async def test_a_message_over_the_limit_kills_the_call(call):
    result = await call([{"ask": {"blob": "x" * 200_000}}], on_message=echo, max_message_bytes=100_000)
    assert (result.ok, result.error_type) == (False, "channel"), result
    assert "larger than 100000 bytes" in result.stderr


@pytest.fixture
def host_only_target() -> Iterator[types.FunctionType]:
    """A function of a module of the package that exists in the host only (the worker's child cannot import it)."""
    module = types.ModuleType("semif_agent.no_such_module")
    exec("def f(payload, channel):\n    return 1\n", module.__dict__)
    sys.modules[module.__name__] = module
    yield module.f
    del sys.modules[module.__name__]


async def test_a_target_that_cannot_be_imported_is_an_exception(tmp_path, worker_pool, host_only_target):
    spec = confinement_spec(SandboxLimits(memory_mb=512), timeout_sec=10, workspace_root=tmp_path, skill_dir=tmp_path)
    missing = await worker_pool.call(host_only_target, {}, cwd=tmp_path, env={}, confine_spec=spec, timeout_sec=10)
    assert (missing.error_type, missing.value) == ("exception", None) and "ModuleNotFoundError" in missing.stderr


def _nested():
    def inner(payload, channel):
        return None

    return inner


def local_target(payload, channel):
    return None


@pytest.mark.parametrize(
    "target",
    [
        os.system,
        exec,
        semif_agent,
        scripted_call,
        "semif_agent.sandbox.scripted_call:run_steps",
        lambda payload, channel: None,
        _nested(),
        WorkerPool.close,
        local_target,
        None,
    ],
)
async def test_targets_outside_the_package_are_refused(worker_pool, tmp_path, target):
    with pytest.raises(CallTargetError, match="a module-level function of semif_agent"):
        await worker_pool.call(target, {}, cwd=tmp_path, env={}, confine_spec={}, timeout_sec=5)
