"""A scripted target for :meth:`~.pool.WorkerPool.call`: :func:`run_steps` (a testing utility).

Code that drives confined calls (a handler for their messages, a runner of
bodies) can be tested against a real worker with a callee that does, step by
step, what the payload says, including failing in every way a callee can::

    await pool.call(run_steps,
                    {"steps": [{"ask": {"q": 1}}, {"print": "done"}]}, ...)

Steps, in order (each a one-key dict):

- ``{"ask": message}``: ``channel.ask(message)``; the answer, or
  ``{"error": text}`` when the host's handler failed, joins ``answers``;
- ``{"print": text}`` / ``{"stderr": text}``: write a line to stdout / stderr;
- ``{"sleep": seconds}``;
- ``{"die_after": seconds}``: a timer that ends the process (``os._exit(9)``)
  whatever it is doing then, a question to the host included;
- ``{"exit": code}`` (``sys.exit``), ``{"os_exit": code}`` (``os._exit``),
  ``{"raise": text}`` (``RuntimeError``), ``{"crash": true}`` (a segmentation fault);
- ``{"return": value}``: return ``value`` now;
- ``{"write": [text, times]}``: write ``text`` repeated ``times`` on the channel, raw, as code in the
  call could: a forged or malformed line (``$call`` in ``text`` becomes the call's id; each character
  up to U+00FF is the byte it numbers, so lines need not be text);
- ``{"fill": [path, megabytes]}``: write a file of that many megabytes;
- ``{"regex": pattern}``: whether ``re``'s cache held ``pattern`` already (joins ``answers``), then compile it.

Without a ``return`` step it returns ``{"answers": [...]}``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from .errors import ChannelError

if TYPE_CHECKING:
    from .channel import Channel


def run_steps(payload: dict[str, Any], channel: Channel) -> object:
    """Do the payload's ``steps`` one after another (see the module's documentation)."""
    answers: list[object] = []
    for step in payload.get("steps", []):
        ((action, argument),) = step.items()
        if action == "ask":
            try:
                answers.append(channel.ask(argument))
            except ChannelError as exc:
                answers.append({"error": str(exc)})
        elif action == "print":
            print(argument, flush=True)
        elif action == "stderr":
            print(argument, file=sys.stderr, flush=True)
        elif action == "sleep":
            time.sleep(float(argument))
        elif action == "die_after":
            timer = threading.Timer(float(argument), os._exit, args=(9,))
            timer.daemon = True
            timer.start()
        elif action == "exit":
            sys.exit(argument)
        elif action == "os_exit":
            os._exit(int(argument))
        elif action == "raise":
            raise RuntimeError(argument)
        elif action == "crash":
            import ctypes

            ctypes.string_at(0)
        elif action == "return":
            return argument
        elif action == "write":
            text, times = argument
            text = text.replace("$call", str(channel._call_id))
            channel._write(text.encode("latin-1") * int(times))
        elif action == "fill":
            path, megabytes = argument
            with open(path, "wb") as out:
                for _ in range(int(megabytes)):
                    out.write(b"x" * (1 << 20))
        elif action == "regex":
            import re

            answers.append((str, argument, 0) in getattr(re, "_cache", {}))  # private: the state under test
            re.compile(argument)
        else:
            raise ValueError(f"unknown step {action!r}")
    return {"answers": answers}
