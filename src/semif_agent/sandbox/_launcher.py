"""Run one skill script in a confined process. The host spawns this file; never import it.

Usage: ``python -I _launcher.py PACKAGE_PARENT SPEC SCRIPT [ARG...]``

``SPEC`` is the confinement (see :mod:`._confine`) as hex-encoded
:mod:`marshal` data, which needs no import to read. The launcher forks the
script's process into new PID, IPC and network namespaces where the kernel allows
it (:mod:`._isolation`), and into the spec's ``pids`` cgroup (:mod:`._cgroup`);
that process applies the confinement to itself, then runs ``SCRIPT``: a ``.py``
file as ``__main__`` in the same interpreter (as ``python SCRIPT`` would), a
``.sh`` file with ``/bin/sh``, any other executable directly.

The launcher stays outside, as the run's supervisor: it kills the run at its
``timeout`` or when it has written more than ``disk_bytes`` (:mod:`._disk`),
kills whatever the script left behind when it ends (by the namespace, or else
the cgroup, or else as a subreaper), and exits as the script did. What went
wrong beyond an exit status (``error_type=...``), and what confinement held
(``kind=how``), is written as lines to the spec's ``status_file``. It imports as little as it can: every millisecond
here is paid by every script run.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

TYPE_CHECKING = False  # typing's own costs an import per script start
if TYPE_CHECKING:
    import signal as _signal  # typeshed has no stub for the C module; 'signal' has its functions and constants
    from types import ModuleType
else:
    import _signal  # the C module: 'signal' would pull in enum, a few ms per script start


def _report(spec: dict, error_type: str) -> None:
    """The script's process says what went wrong (one word); the supervisor reads it at the end."""
    path = spec.get("status_file")
    if path:
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(error_type)
        except OSError:
            pass


def _run_python(script: str, spec: dict) -> None:
    import runpy

    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except MemoryError:
        _report(spec, "memory")
        sys.stderr.write("MemoryError: the script ran out of its memory allowance\n")
        sys.stderr.flush()
        os._exit(1)
    except BaseException as exc:  # noqa: BLE001 - print it as python would, then fail
        import traceback

        tb = exc.__traceback__
        own_files = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) in own_files:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        sys.exit(1)


def _run_script(modules: tuple, spec: dict, script: str, args: list[str], held: dict, report_fd: int) -> None:
    """The script's process: join the cgroup, confine itself, tell the supervisor what held, run."""
    confine, isolation, cgroups = modules
    isolation.die_with_parent()
    cgroup = spec.get("cgroup")
    if cgroup and cgroups.join(cgroup):
        spec["process_limit_held"] = True
        held["process_limit"] = "cgroup"
    memory = spec.get("memory_cgroup")
    held["memory"] = "cgroup" if memory and cgroups.join(memory) else "rlimit"
    held.update(confine.confine(spec, own_ipc=held.get("ipc") == "namespace"))
    os.write(report_fd, marshal.dumps(held))
    os.close(report_fd)
    if script.endswith(".py"):
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(script))
        _run_python(script, spec)
        return
    if script.endswith(".sh"):
        os.execv("/bin/sh", ["sh", script, *args])
    if os.access(script, os.X_OK):
        os.execv(script, [script, *args])
    sys.stderr.write(f"cannot run {os.path.basename(script)}: not a .py or .sh file, and not executable\n")
    sys.exit(126)


def _fork(isolation: ModuleType, spec: dict) -> tuple[int, dict]:
    """Fork the script's process: into new namespaces when allowed, else under this subreaper."""
    if spec.get("namespaces", True):
        own_user = isolation.enter_user_namespace()
        if own_user or os.geteuid() == 0:
            network = not spec.get("network")
            flags = isolation.CLONE_NEWPID | isolation.CLONE_NEWIPC | (isolation.CLONE_NEWNET if network else 0)
            try:
                pid = isolation.fork_namespaced(flags)
                held = {"processes": "pid-namespace", "ipc": "namespace"}
                return pid, {**held, "network": "namespace" if network else "allowed"}
            except OSError:
                pass
    isolation.become_subreaper()
    processes = "cgroup" if spec.get("cgroup") else "subreaper"
    return os.fork(), {"processes": processes, "network": "allowed" if spec.get("network") else "open"}


def _supervise(modules: tuple, spec: dict, pid: int) -> tuple[int, str, float]:
    """Wait for the script's process within the timeout and the disk allowance; (status, what went wrong, CPU)."""
    _confine, isolation, cgroups, disk, groups = modules
    deadline = time.monotonic() + float(spec.get("timeout") or 1e9)
    cap: int = spec.get("disk_bytes") or 0
    watched = disk.watched_folders(list(spec.get("writable", []))) if cap else []
    started_ns, next_check = disk.run_start_ns(), time.monotonic() + disk.FIRST_CHECK_SEC
    reason = ""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, reason, usage.ru_utime + usage.ru_stime
        now = time.monotonic()
        if not reason and now >= deadline:
            reason = "timeout"
            groups.kill_group(pid)
        elif not reason and watched and now >= next_check:
            written = disk.changed_bytes(watched, started_ns)
            processes = cgroups.members(spec["cgroup"]) if spec.get("cgroup") else [pid, *isolation.descendants(pid)]
            written += disk.open_unlinked_bytes(processes, disk.folder_devices(watched))
            next_check = disk.next_check(time.monotonic() - now)
            if spec.get("memory_cgroup") and cgroups.oom_kills(spec["memory_cgroup"]):
                reason = "memory"
                _say("the script and what it started ran out of their memory allowance")
                groups.kill_group(pid)
            elif written > cap:
                reason = "disk"
                _say(f"wrote {written // 1048576} MB, over its {cap // 1048576} MB allowance")
                groups.kill_group(pid)
        moments = [deadline, next_check] if watched and not reason else [deadline]
        _wait_child(max(0.001, min(min(moments) - time.monotonic(), 0.25 if reason else 1.0)))


def _say(why: str) -> None:
    """Tell the script's stderr why the supervisor killed it."""
    sys.stderr.write(f"\n[killed: {why}]\n")
    sys.stderr.flush()


def _wait_child(seconds: float) -> None:
    """Sleep until a child exits (SIGCHLD) or ``seconds`` pass."""
    try:
        _signal.sigtimedwait([_signal.SIGCHLD], seconds)
    except (AttributeError, OSError):
        time.sleep(min(seconds, 0.01))


def _finish(spec: dict, reason: str, held: dict) -> None:
    path = spec.get("status_file")
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as handle:
            reported = handle.read().strip()
    except OSError:
        reported = ""
    lines = [f"error_type={reason or reported}", *(f"{key}={value}" for key, value in held.items())]
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    except OSError:
        pass


def main() -> None:
    package_parent, spec_hex, script, *args = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.dirname(here)]  # this folder's modules, and the package's _beneath (_disk's)
    if TYPE_CHECKING:  # the same files, as the package's modules
        from . import _cgroup, _confine, _disk, _isolation, _process_group
    else:  # this folder's modules, without importing the package
        import _cgroup
        import _confine
        import _disk
        import _isolation
        import _process_group

    del sys.path[:2]
    spec = marshal.loads(bytes.fromhex(spec_hex))
    modules = (_confine, _isolation, _cgroup, _disk, _process_group)
    report_r, report_w = os.pipe()
    _signal.pthread_sigmask(_signal.SIG_BLOCK, [_signal.SIGCHLD])
    pid, held = _fork(_isolation, spec)
    if pid == 0:
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [_signal.SIGCHLD])
        os.close(report_r)
        sys.path.append(package_parent)
        _run_script((_confine, _isolation, _cgroup), spec, script, args, held, report_w)
        return
    os.close(report_w)
    status, reason, cpu_used = _supervise(modules, spec, pid)
    if held["processes"] != "pid-namespace":  # what the script left behind
        _process_group.kill_group(pid)
        if spec.get("cgroup"):
            _cgroup.kill_members(spec["cgroup"])
        _isolation.kill_descendants(os.getpid())
    held.update(_child_report(report_r))
    if not reason and spec.get("memory_cgroup") and _cgroup.oom_kills(spec["memory_cgroup"]):
        reason = "memory"
        _say("the script and what it started ran out of their memory allowance")
    cpu = spec.get("cpu_seconds")
    signalled = os.WIFSIGNALED(status)
    if not reason and signalled and cpu is not None and cpu_used >= float(cpu) - 0.05:
        reason = "cpu"
    _finish(spec, reason, held)
    sys.stdout.flush()
    sys.stderr.flush()
    if signalled:
        number = os.WTERMSIG(status)
        if number != _signal.SIGKILL:
            _signal.signal(number, _signal.SIG_DFL)
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [number])
        _confine.apply_limits({})  # no core file
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _child_report(fd: int) -> dict:
    """What confinement the script's process said held (written before the script ran)."""
    data = b""
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 65536)
    except OSError:
        pass
    try:
        value = marshal.loads(data) if data else {}
    except (ValueError, EOFError, TypeError):
        value = {}
    return {str(key): str(item) for key, item in value.items()} if isinstance(value, dict) else {}


if __name__ == "__main__":
    main()
