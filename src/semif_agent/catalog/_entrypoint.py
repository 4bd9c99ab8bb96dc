"""The call target that runs a skill script's ``entrypoint(argv, ctx)`` in a warm worker's child.

:class:`~.execution.ScriptExecutor` sends :func:`run` through
:meth:`~semif_agent.sandbox.pool.WorkerPool.call` with the script, its arguments, its
environment and the fields of its :class:`~.context.SkillScriptContext`. The script is imported
as ``__skill_script__`` and its ``entrypoint`` called (awaited when it is a
coroutine function); a returned string is written to stdout as it is,
anything else but None as JSON, as the script's output. The workers import
this module at start (:func:`~semif_agent.sandbox.preload_everywhere`), so calls find it warm.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from types import FunctionType, ModuleType
from typing import Any

from ..sandbox._code_cache import code_for
from .context import SkillScriptContext

_PLAIN = frozenset({str, bytes, dict, list, tuple, int, float, type(None)})
"""What an entrypoint returns most: never awaitable, told without :func:`inspect.isawaitable`, whose
abstract-class check costs a forked child a hundred pages copied on write."""
_CO_VARARGS = 0x04  # inspect.CO_VARARGS: inspect (with ast, dis, enum, tokenize) is imported only where needed,
# it would add a fifth to the worker's memory, which every call's fork copies the page tables of


def run(payload: dict[str, Any], channel: object) -> None:
    """Import ``payload["script"]`` and call its ``entrypoint`` with ``payload["argv"]`` and the context."""
    script, argv = payload["script"], list(payload["argv"])
    sys.argv = [script, *argv]
    sys.path.insert(0, os.path.dirname(script))
    fields = payload["ctx"]
    ctx = SkillScriptContext(
        workspace_root=fields["workspace_root"],
        skill_dir=fields["skill_dir"],
        skill_id=fields["skill_id"],
        skill_name=fields["skill_name"],
        env=dict(payload["env"]) if "env" in payload else dict(os.environ),
        hook_type=fields.get("hook_type", ""),
    )
    module = _import_script(script)
    entrypoint = getattr(module, "entrypoint", None)
    if not callable(entrypoint):
        raise TypeError(f"{os.path.basename(script)} defines no callable entrypoint(argv, ctx)")
    value = entrypoint(argv, ctx) if _takes_context(entrypoint) else entrypoint(argv)
    if type(value) not in _PLAIN and _awaitable(value):
        import asyncio

        value = asyncio.run(_awaited(value))
    if isinstance(value, str):
        sys.stdout.write(value)
    elif value is not None:
        sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str))


def _import_script(script: str) -> ModuleType:
    """Run ``script`` as module ``__skill_script__`` (what ``importlib`` does, with fewer steps), compiled once
    per version of the file in this process (:func:`~semif_agent.sandbox._code_cache.code_for`)."""
    code = code_for(script)
    module = ModuleType("__skill_script__")
    module.__file__ = script
    sys.modules[module.__name__] = module
    exec(code, module.__dict__)  # the skill's own code
    return module


def _takes_context(entrypoint: Callable[..., object]) -> bool:
    """Whether ``entrypoint`` accepts ``(argv, ctx)`` (else it gets ``(argv)``)."""
    if isinstance(entrypoint, FunctionType):  # read from the code: inspect.signature costs every call
        code = entrypoint.__code__
        positional, keywords = code.co_argcount, code.co_kwonlyargcount
        required = positional - len(entrypoint.__defaults__ or ())
        keyword_names = code.co_varnames[positional : positional + keywords]
        if any(name not in (entrypoint.__kwdefaults__ or {}) for name in keyword_names) or required > 2:
            return False
        return positional >= 2 or bool(code.co_flags & _CO_VARARGS)
    import inspect

    try:
        inspect.signature(entrypoint).bind([], None)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _awaitable(value: object) -> bool:
    import inspect

    return inspect.isawaitable(value)


async def _awaited(awaitable: Awaitable[object]) -> object:
    return await awaitable
