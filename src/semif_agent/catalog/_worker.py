"""The warm worker: runs ``entrypoint(argv, ctx)`` calls in forked, confined children.

The host's :class:`~.worker.WorkerPool` spawns this file as
``python -I _worker.py PACKAGE_PARENT``; never import it. Requests arrive as
JSON lines on stdin; replies (a :class:`~.results.ScriptRunResult` plus the
request ``id``) leave as JSON lines on the original stdout, which nothing else
can write to. The worker itself only forks: each call runs in a child that
applies the request's limits and confinement, changes to the workspace, takes
the request's environment, imports the script, calls its entrypoint and
exits. A call past its deadline has its process group killed. Calls run
concurrently; the worker stays warm (Python started, modules imported) between
them, and exits when its stdin closes.
"""

from __future__ import annotations

import asyncio  # noqa: F401 - imported once here so children start warm
import importlib.util
import inspect
import json
import os
import selectors
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_OUT, _ERR, _STATUS = "stdout.txt", "stderr.txt", "status"


@dataclass
class _Call:
    request_id: int
    deadline: float
    timeout: float
    run_dir: str
    max_output: int
    timed_out: bool = False


class _Worker:
    def __init__(self, reply_fd: int, confine: Any, results: Any, context_type: type) -> None:
        self.reply_fd = reply_fd
        self.confine = confine
        self.results = results
        self.context_type = context_type
        self.calls: dict[int, _Call] = {}
        self.pending_input = b""
        self.selector = selectors.DefaultSelector()
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        self.wake_w = wake_w
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, "requests")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")

    def serve(self) -> None:
        while True:
            for key, _mask in self.selector.select(self._next_timeout()):
                if key.data == "requests" and not self._read_requests():
                    self._shutdown()
                    return
                if key.data == "wake":
                    self._drain_wake()
            self._reap()
            self._enforce_deadlines()

    def _next_timeout(self) -> float | None:
        running = [call.deadline for call in self.calls.values() if not call.timed_out]
        if running:
            return max(0.0, min(running) - time.monotonic())
        return 0.05 if self.calls else None

    def _drain_wake(self) -> None:
        try:
            while os.read(self.wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def _read_requests(self) -> bool:
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        lines = (self.pending_input + chunk).split(b"\n")
        self.pending_input = lines.pop()
        for line in lines:
            if line.strip():
                self._start(json.loads(line))
        return True

    def _start(self, request: dict[str, Any]) -> None:
        pid = os.fork()
        if pid == 0:
            self._child(request)
        timeout = float(request["timeout"])
        self.calls[pid] = _Call(int(request["id"]), time.monotonic() + timeout, timeout, request["run_dir"], int(request["max_output"]))

    def _child(self, request: dict[str, Any]) -> None:
        code = 1
        try:
            os.setpgid(0, 0)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (self.reply_fd, self.wake_r, self.wake_w):
                os.close(fd)
            run_dir = request["run_dir"]
            for target, name in ((1, _OUT), (2, _ERR)):
                fd = os.open(os.path.join(run_dir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, target)
                os.close(fd)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            self.confine.confine(request["confine"])
            code = self._call_entrypoint(request)
        except BaseException:  # noqa: BLE001 - the child must always exit through os._exit
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001
                    pass
            os._exit(code)

    def _call_entrypoint(self, request: dict[str, Any]) -> int:
        script, argv = request["script"], list(request["argv"])
        sys.argv = [script, *argv]
        sys.path.insert(0, os.path.dirname(script))
        ctx_fields = request["ctx"]
        ctx = self.context_type(
            workspace_root=Path(ctx_fields["workspace_root"]),
            skill_dir=Path(ctx_fields["skill_dir"]),
            skill_id=ctx_fields["skill_id"],
            skill_name=ctx_fields["skill_name"],
            env=dict(request["env"]),
            hook_type=ctx_fields.get("hook_type", ""),
        )
        try:
            spec = importlib.util.spec_from_file_location("__skill_script__", script)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {os.path.basename(script)}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            entrypoint = getattr(module, "entrypoint", None)
            if not callable(entrypoint):
                raise TypeError(f"{os.path.basename(script)} defines no callable entrypoint(argv, ctx)")
            value = entrypoint(argv, ctx) if _takes_context(entrypoint) else entrypoint(argv)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
            if isinstance(value, str):
                sys.stdout.write(value)
            elif value is not None:
                sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str))
            return 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                return exc.code or 0
            sys.stderr.write(f"{exc.code}\n")
            return 1
        except MemoryError:
            self._report(request, "memory")
            sys.stderr.write("MemoryError: the script ran out of its memory allowance\n")
            return 1
        except BaseException as exc:  # noqa: BLE001 - reported as the call's failure
            self._report(request, "exception")
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
                tb = tb.tb_next
            traceback.print_exception(type(exc), exc, tb)
            return 1

    @staticmethod
    def _report(request: dict[str, Any], error_type: str) -> None:
        try:
            with open(os.path.join(request["run_dir"], _STATUS), "w", encoding="utf-8") as handle:
                handle.write(error_type)
        except OSError:
            pass

    def _reap(self) -> None:
        while self.calls:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            call = self.calls.pop(pid, None)
            if call is not None:
                self._finish(pid, call, status)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for pid, call in self.calls.items():
            if not call.timed_out and now >= call.deadline:
                call.timed_out = True
                _kill_group(pid)

    def _finish(self, pid: int, call: _Call, status: int) -> None:
        _kill_group(pid)
        returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        result = self.results.outcome(
            returncode=returncode,
            timed_out=call.timed_out,
            reported=_read_status(call.run_dir),
            stdout=_read_bounded(os.path.join(call.run_dir, _OUT), call.max_output),
            stderr=_read_bounded(os.path.join(call.run_dir, _ERR), call.max_output),
            timeout_sec=call.timeout,
        )
        line = json.dumps({"id": call.request_id, **result.as_dict()}, ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        while data:
            data = data[os.write(self.reply_fd, data):]

    def _shutdown(self) -> None:
        for pid in list(self.calls):
            _kill_group(pid)


def _takes_context(entrypoint: Any) -> bool:
    try:
        inspect.signature(entrypoint).bind([], None)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_status(run_dir: str) -> str:
    try:
        with open(os.path.join(run_dir, _STATUS), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _read_bounded(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", errors="replace")
    if size > limit:
        text += f"\n[{size - limit} bytes of output dropped]"
    return text


def main() -> None:
    package_parent = sys.argv[1]
    sys.path.insert(0, package_parent)
    from semif_agent.catalog import _confine, results
    from semif_agent.catalog.context import SkillScriptContext

    from semif_agent.catalog.limits import system_readable_paths

    _confine.preopen(list(system_readable_paths()))
    reply_fd = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    _Worker(reply_fd, _confine, results, SkillScriptContext).serve()


if __name__ == "__main__":
    main()
