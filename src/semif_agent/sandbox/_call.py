"""One confined call in the warm worker: :class:`Call` (the worker's record of it) and its child's steps.

A call's child is forked by the zygote (:mod:`._zygote`), never by the worker, and waits for its
call (:func:`await_call`): it dies with the worker, leaves the worker's process group (when no PID
namespace holds it), makes what it can of its view ahead, then reads its call. :func:`run_child` is
what it does with it, in order: take the host's network back (a call allowed it) or keep none, join the
call's ``pids`` cgroup, point stdout and stderr at the worker's pipes, close
what else it inherited, take the call's folder and environment, confine itself
(:mod:`._confine`), say what held, then import the target and call it
(:func:`run_target`). Standard library only, apart from the sandbox's own
modules; the worker imports it at start.
"""

from __future__ import annotations

import ctypes
import importlib
import marshal
import os
import sys
import time
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._beneath import open_root, remove_contents
from . import _cgroup, _confine, _isolation, _mounts, _resident
from ._messages import Heard
from .channel import Channel

if TYPE_CHECKING:  # typeshed has no stub for the C module; 'signal' has its functions and constants, typed
    import signal as _signal
else:
    import _signal  # the C module: the signal module's enum wrappers would cost every call

WARM_LATER = frozenset({"asyncio", "pathlib", "inspect"})
"""Heavy standard modules the zygote (:mod:`._zygote`) imports once a call has needed them, so the
children it forks later find them warm: names from this list only, never a call's code or data."""
_HERE = os.path.dirname(os.path.abspath(__file__))
_FD_CEILING = 1 << 20  # above any descriptor: closerange stops at the process's own limit


class Call:
    """A call in flight, as the worker keeps it: its pipes, limits, what it said (:class:`~._messages.Heard`) and wrote."""

    __slots__ = (
        "call_id",
        "deadline",
        "timeout",
        "run_dir",
        "max_output",
        "max_message",
        "messages",
        "replies",
        "outputs",
        "kept",
        "dropped",
        "notes",
        "writable",
        "watched",
        "disk_cap",
        "cpu_seconds",
        "started_ns",
        "next_check",
        "listening",
        "messages_done",
        "held",
        "cgroup",
        "received",
        "unsent",
        "heard",
        "timed_out",
        "reported",
        "reuse_key",
        "warm",
        "child_fds",
        "allowance",
        "served",
    )

    def __init__(
        self,
        call_id: int,
        timeout: float,
        run_dir: str,
        request: dict[str, Any],
        fds: tuple[int, int, int, int],
        held: dict[str, str],
        cgroup: str | None,
        disk: ModuleType,
        *,
        reuse_key: str | None = None,
        confined: bool = False,
        child_fds: tuple[int, ...] = (),
        allowance: tuple[float, float] = (float("inf"), float("inf")),
        served: int = 1,
    ) -> None:
        """``reuse_key``: the setup of a call whose process may stay for the next (:mod:`._resident`);
        ``confined``: that process ran an earlier call (it said what held then); ``child_fds``: the
        channel's descriptors in the child; ``allowance``: what its process may have used when it is judged
        for the next call (:func:`._warm_check.allowance`); ``served``: the calls it ran, this one included."""
        spec = request["confine"]
        now = time.monotonic()
        self.call_id, self.timeout, self.deadline, self.run_dir = call_id, timeout, now + timeout, run_dir
        self.max_output, self.max_message = int(request["max_output"]), int(request["max_message"])
        self.messages, self.replies, out, err = fds
        self.outputs = {out: 1, err: 2}
        self.kept = {1: bytearray(), 2: bytearray()}
        self.dropped = {1: 0, 2: 0}
        self.notes: list[str] = []
        self.disk_cap = spec.get("disk_bytes")
        self.writable: list[str] = spec["writable"]
        self.watched: list[str] | None = None  # found at the first look
        cpu = spec.get("cpu_seconds")
        self.cpu_seconds = float(cpu) if cpu is not None else None
        self.started_ns, self.next_check = disk.run_start_ns(), now + disk.FIRST_CHECK_SEC
        self.listening = False  # its stdout and stderr are read when it ends, or from its first check on
        self.messages_done = False
        self.held, self.cgroup = held, cgroup
        self.received, self.unsent = bytearray(), b""
        self.heard = Heard(call_id, self.max_message, may_end=reuse_key is not None, confined=confined)
        self.reuse_key = reuse_key  # what the child says is data, never the worker's watch
        self.warm = confined  # run by a process kept warm from an earlier call
        self.child_fds, self.allowance, self.served = child_fds, allowance, served
        self.timed_out = False
        self.reported = ""  # the worker's own verdict (disk, channel), from nothing the child wrote

    def done_line(self, status: int, cpu_used: float) -> dict[str, object]:
        """The ``done`` line of this call, which ended with wait ``status`` after ``cpu_used`` seconds of CPU."""
        returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        reported = self.reported or self.heard.claimed  # the worker's verdict first, then what the child said
        if not reported and returncode < 0 and self.cpu_seconds is not None and cpu_used >= self.cpu_seconds - 0.05:
            reported = "cpu"
        line: dict[str, object] = {
            "id": self.call_id,
            "kind": "done",
            "returncode": returncode,
            "timed_out": self.timed_out,
            "reported": reported,
            "timeout": self.timeout,
            "confinement": self.held,
            "stdout": self.text(1),
            "stderr": self.text(2),
        }
        if self.heard.has_value and not (self.reported or self.timed_out):  # a call the worker stopped has none
            line["value"] = self.heard.value
        return line

    def text(self, stream: int) -> str:
        """What the call wrote to ``stream`` (1, 2), with a note of what was dropped (and the worker's notes)."""
        text = self.kept[stream].decode("utf-8", errors="replace")
        if self.dropped[stream]:
            text += f"\n[{self.dropped[stream]} bytes of output dropped]"
        if stream == 2 and self.notes:
            text = text.rstrip() + "".join(f"\n[{note}]" for note in self.notes)
        return text


def refusal(request: dict[str, Any], exc: OSError) -> dict[str, object]:
    """The ``done`` line of a call the worker could not start (no pipe, folder or process left)."""
    return {
        "id": request["id"],
        "kind": "done",
        "returncode": -1,
        "timed_out": False,
        "reported": "worker",
        "timeout": request["timeout"],
        "confinement": {},
        "stdout": "",
        "stderr": f"the worker could not start the call ({exc.strerror})",
    }


def run_child(
    request: dict[str, Any],
    fds: tuple[int, int, int, int],
    held: dict[str, str],
    *,
    cgroup_members: int | None,
    host_netns: int,
    environment: PreparedEnvironment | None = None,
) -> None:
    """Set up the child of a call, detached already (:func:`detach`), and run it; never returns
    (``os._exit`` with its status).

    ``fds``: the channel's two ends (to the worker, from it), then stdout's and stderr's pipes;
    ``cgroup_members``: the member list of the call's ``pids`` cgroup, open (None: no cgroup);
    ``environment``: the call's environment as :func:`prepare_environment` made it ready.
    """
    code = 1
    try:
        spec = request["confine"]
        if held["network"] != "namespace" and host_netns >= 0 and not _isolation.join_network(host_netns):
            held["network"] = "namespace"  # could not go back: the call has no network
        if cgroup_members is not None and _cgroup.join_open(cgroup_members):
            spec["process_limit_held"] = True
            held["process_limit"] = "cgroup"
        memory_members = spec.pop("memory_members", None)
        held["memory"] = "cgroup" if memory_members is not None and _cgroup.join_open(memory_members) else "rlimit"
        for fd, target in ((fds[2], 1), (fds[3], 2)):
            os.dup2(fd, target)
        close_inherited(keep={fds[0], fds[1], *(fd for fd, _dir in _confine._preopened.values()), *_mounts.kept_open()})
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        later = request["cwd"] if _mounts.kept_open() else None  # its view is made: its folder is there after
        if later is None:
            os.chdir(request["cwd"])
        take_environment(request["env"], environment)
        channel = Channel(fds[0], fds[1], call_id=int(request["id"]))
        held.update(_confine.confine(spec, cwd=later, own_ipc=held.get("ipc") == "namespace"))
        channel.report("C", held)
        stays = request.get("reuse") is not None and held["processes"] == "pid-namespace"
        before = _resident.Baseline(request) if stays else None  # what to put back after each call
        code = run_target(request, channel)
        if before is not None:
            _resident.serve(before, channel, code, run_target)  # the next calls of its setup; never returns
    except BaseException:  # noqa: BLE001 - the child must always exit through os._exit
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - the child exits through os._exit whatever happens
                pass
        os._exit(code)


def detach(held: dict[str, str]) -> None:
    """A call's child's first steps, before it needs its call: die with the worker, the worker's signal
    handling gone, and (where no PID namespace holds its processes) a process group of its own, as a subreaper."""
    _isolation.die_with_parent()
    _signal.set_wakeup_fd(-1)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    if held["processes"] != "pid-namespace":
        os.setpgid(0, 0)
        _isolation.become_subreaper()


def await_call(
    control: int,
    fds: tuple[int, int, int, int],
    held: dict[str, str],
    *,
    host_netns: int,
    view: dict[str, Any] | None,
) -> None:
    """What a call's child does from its fork by the zygote (:mod:`._zygote`): detach, close what it
    inherited, make the part of its mount view that does not depend on the call (``view``: the arguments
    of :func:`._mounts.prepare_ahead`; None: all of it is made with the call), then wait on ``control``
    for one call (the request in :mod:`marshal`'s encoding, then end of file) and run it
    (:func:`run_child`); never returns. Nothing there (the worker let it go): exits with status 0.

    The request carries ``cgroups``: the paths of the call's ``pids`` and memory cgroups (or None), which
    this child joins.
    """
    try:
        detach(held)
        close_inherited(keep={control, *fds, host_netns, *(fd for fd, _dir in _confine._preopened.values())})
        if view is not None:
            _mounts.prepare_ahead(**view)
        received = bytearray()
        while chunk := os.read(control, 1 << 20):
            received += chunk
        os.close(control)
        request = marshal.loads(received) if received else None
    except BaseException:  # noqa: BLE001 - the child must always exit through os._exit
        os._exit(1)
    if not isinstance(request, dict):
        os._exit(0)
    processes, memory = (_cgroup.open_members(path) if path else None for path in request.pop("cgroups"))
    if memory is not None:
        request["confine"]["memory_members"] = memory
    environment = prepare_environment(request["env"])
    run_child(request, fds, held, cgroup_members=processes, host_netns=host_netns, environment=environment)


def run_target(request: dict[str, Any], channel: Channel) -> int:
    """Import the call's target, call it with the payload and the channel; the exit status."""
    missing = [name for name in WARM_LATER if name not in sys.modules]
    target_file = None
    try:
        module_name, function_name = request["target"].split(":")
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        if module_name.rpartition(".")[2].startswith("_"):  # a private target module is machinery too
            target_file = getattr(module, "__file__", None)
        function = getattr(module, function_name)
        value = function(request["payload"], channel)
        if value is not None:
            channel.send_value(value)
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stderr.write(f"{exc.code}\n")
        return 1
    except MemoryError:
        channel.report("E", "memory")
        sys.stderr.write("MemoryError: the call ran out of its memory allowance\n")
        return 1
    except BaseException as exc:  # noqa: BLE001 - reported as the call's failure
        import traceback

        channel.report("E", "exception")
        tb = exc.__traceback__
        while tb is not None and _is_machinery(tb.tb_frame.f_code.co_filename, target_file):
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        return 1
    finally:
        warm = [name for name in missing if name in sys.modules]
        if warm:
            channel.report("W", warm)


def _is_machinery(filename: str, target_file: str | None) -> bool:
    """A frame of the call's machinery (the sandbox's private modules, a private target's module), not the code run."""
    if target_file is not None and filename == target_file:
        return True
    return os.path.dirname(filename) == _HERE and os.path.basename(filename).startswith("_")


def _c_environ() -> ctypes.c_void_p | None:
    """The C library's ``environ`` pointer, which a process's new programs inherit; None where not found."""
    try:
        return ctypes.c_void_p.in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError):
        return None


_C_ENVIRON = _c_environ()
_kept: list[object] = []  # what the C environment of this process points into, once a prepared one is taken

PreparedEnvironment = tuple[dict[bytes, bytes], "ctypes.Array[ctypes.c_char_p]"]


def prepare_environment(env: dict[str, str]) -> PreparedEnvironment | None:
    """``env`` made ready by the worker before it forks a call's child: encoded as ``os.environ`` keeps it,
    and as a C ``environ`` array; the child then takes it with two assignments (:func:`take_environment`).

    None where the C ``environ`` is not found, or ``env`` holds what the C environment refuses (a name
    empty or with ``=``, a NUL): the child then sets it variable by variable, which raises as usual.
    """
    if _C_ENVIRON is None or not isinstance(getattr(os.environ, "_data", None), dict):
        return None  # no C environ found, or an os.environ not laid out as CPython's: set it variable by variable
    encoded: dict[bytes, bytes] = {}
    for key, value in env.items():
        if not (isinstance(key, str) and isinstance(value, str)) or not key or "=" in key:
            return None
        encoded[os.fsencode(key)] = os.fsencode(value)
    entries = [key + b"=" + value for key, value in encoded.items()]
    if any(b"\0" in entry for entry in entries):
        return None
    return encoded, (ctypes.c_char_p * (len(entries) + 1))(*entries, None)


def take_environment(env: dict[str, str], prepared: PreparedEnvironment | None = None) -> None:
    """Make this process's environment exactly ``env``: ``os.environ`` and the C one its subprocesses inherit.

    With ``prepared`` (:func:`prepare_environment` of ``env``) it is two assignments; each variable set
    otherwise costs a C call and, in a forked child, pages copied on write. Later changes to
    ``os.environ`` reach the C environment as usual (the C library copies the array on the first).
    """
    if prepared is not None and _C_ENVIRON is not None:
        encoded, array = prepared
        _kept.append(prepared)  # the C array points into these bytes: they live as long as the process
        _C_ENVIRON.value = ctypes.addressof(array)
        os.environ._data = encoded  # type: ignore[attr-defined] # os.environ's own mapping, as its __setitem__ fills it
        return
    environ = os.environ
    for key in [key for key in environ if key not in env]:
        del environ[key]
    for key, value in env.items():
        if environ.get(key) != value:
            environ[key] = value


def close_inherited(keep: set[int]) -> None:
    """Close every descriptor a forked child inherited but ``keep`` and the standard three."""
    start = 3
    for fd in sorted(keep):
        if fd > start:
            os.closerange(start, fd)
        start = max(start, fd + 1)
    os.closerange(start, _FD_CEILING)


def empty_folder(path: str) -> bool:
    """Remove what a call left in its private folder; True when it is empty.

    From the folder's descriptor, never following a link and without recursion
    (:func:`~semif_agent._beneath.remove_contents`): a link is removed, not
    what it points to, and a folder swapped for a link meanwhile is not
    entered. A tree past the caps is left, and the folder reported not empty.
    """
    try:
        fd = open_root(path)
    except OSError:
        return False
    try:
        return remove_contents(fd)
    finally:
        os.close(fd)
