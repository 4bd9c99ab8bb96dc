"""The clean parent of every call's child: the zygote (:func:`start`, and :class:`Zygote`, the worker's end).

The warm worker reads every call's request and every result, so a child forked from it would find
other calls' payloads, results and code in the memory it inherits. At start, after its set-up and
preloads and before it reads any call, the worker forks the zygote instead, and hands it nothing of a
call: only requests to fork a child now (the namespaces to fork it into, how its processes are held,
the part of its view to make ahead) and names of standard modules to import
(:data:`._call.WARM_LATER`). Every call's child, forked ahead of its call or for it, comes from here.

For each child the zygote makes the child's pipes (its control pipe, its channel's two, its stdout's
and stderr's) and forks it with ``CLONE_PARENT``: the child's parent is the worker, which reaps it,
reads its exit status and CPU time as before, and signals a pid that cannot be reused before it is
reaped (on a machine whose ``clone`` call is not known, a middle process forks it and exits, and the
worker, a subreaper, inherits it). The worker's ends of the pipes go back over a socket (``SCM_RIGHTS``) with the child's pid;
the child waits for its call on its control pipe (:func:`._call.await_call`). Where the kernel refuses
the namespaces asked for, the answer says so and the worker asks again without them.

Standard library only; the worker imports it at start.
"""

from __future__ import annotations

import errno
import gc
import marshal
import os
import socket
import time
from typing import Any, NoReturn

from . import _call, _isolation

CLONE_PARENT = 0x00008000
"""The child's parent is its forker's parent (linux/sched.h)."""
_BATCH = 16  # fork requests in flight at once: their answers, with 5 descriptors each, fit the socket's buffer
_ANSWER_BYTES = 4096


class ZygoteGone(Exception):
    """The zygote exited: the worker can fork no more children."""


class Forked:
    """A child the zygote forked, waiting for its call: its pid, the worker's end of its control pipe, the
    worker's ends of its channel's and output's pipes (messages, answers, stdout, stderr), and the numbers
    of the channel's descriptors in the child (what the worker expects it to hold open between calls)."""

    __slots__ = ("pid", "control", "own_fds", "child_fds")

    def __init__(self, pid: int, fds: list[int], child_fds: tuple[int, int]) -> None:
        self.pid, self.control = pid, fds[0]
        self.own_fds: tuple[int, int, int, int] = (fds[1], fds[2], fds[3], fds[4])
        self.child_fds = child_fds


class Zygote:
    """The worker's end of its zygote."""

    def __init__(self, pid: int, connection: socket.socket) -> None:
        self.pid, self.connection = pid, connection

    def fork(self, wanted: list[tuple[int, dict[str, str], dict[str, Any] | None]]) -> list[Forked | OSError]:
        """Fork a child for each ``(namespace flags, how its processes and network are held, view to make
        ahead or None)``; each a :class:`Forked`, or the ``OSError`` the kernel answered.
        Raises :class:`ZygoteGone` when the zygote is gone."""
        found: list[Forked | OSError] = []
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            try:
                for flags, held, view in batch:
                    self.connection.send(marshal.dumps(("fork", flags, held, view)))
                found += [self._answer() for _ in batch]
            except OSError as exc:
                raise ZygoteGone(str(exc)) from None
        return found

    def _answer(self) -> Forked | OSError:
        data, fds, _flags, _address = socket.recv_fds(self.connection, _ANSWER_BYTES, 5)
        if not data:
            raise ZygoteGone("the zygote exited")
        answer = marshal.loads(data)
        if answer[0] == "forked" and len(fds) == 5:
            return Forked(answer[1], fds, (answer[2], answer[3]))
        for fd in fds:
            os.close(fd)
        return OSError(answer[1], os.strerror(answer[1]) if answer[1] else "the zygote could not fork")

    def warm(self, names: list[str]) -> None:
        """Have the zygote import ``names`` (of :data:`._call.WARM_LATER`), so the children it forks find them."""
        try:
            self.connection.send(marshal.dumps(("warm", [name for name in names if name in _call.WARM_LATER])))
        except OSError as exc:
            raise ZygoteGone(str(exc)) from None

    def close(self) -> None:
        """Let the zygote go: it exits when its socket closes."""
        self.connection.close()


def start(*, host_netns: int, keep: set[int]) -> Zygote:
    """Fork the zygote now (before the worker reads any call); ``keep``: the descriptors its children need
    (the folders opened ahead for their Landlock rules), ``host_netns``: the host's network namespace
    open (or -1). Everything else the worker holds is closed in the zygote."""
    own, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            _isolation.die_with_parent()
            own.detach()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1):
                os.dup2(null, fd)
            _call.close_inherited(keep={*keep, theirs.fileno(), *([host_netns] if host_netns >= 0 else [])})
            _serve(theirs, host_netns)
        finally:
            os._exit(1)
    theirs.close()
    return Zygote(pid, own)


def _serve(connection: socket.socket, host_netns: int) -> NoReturn:
    """The zygote's loop: fork a child for each request, import what it is told; exit with the worker."""
    while True:
        try:
            data = connection.recv(_ANSWER_BYTES)
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        request = marshal.loads(data)
        if request[0] == "warm":
            for name in request[1]:
                if name in _call.WARM_LATER:
                    __import__(name)
            gc.freeze()
            continue
        _kind, flags, held, view = request
        answer, fds = _fork(flags, held, view, host_netns)
        try:
            if fds:
                socket.send_fds(connection, [marshal.dumps(answer)], fds)
            else:
                connection.send(marshal.dumps(answer))
        except OSError:
            os._exit(0)
        finally:
            for fd in fds:
                os.close(fd)


def _fork(
    flags: int, held: dict[str, str], view: dict[str, Any] | None, host_netns: int
) -> tuple[tuple[Any, ...], list[int]]:
    """Make a child's pipes and fork it (the worker's child, waiting for its call): the answer for the
    worker, and the descriptors to pass it."""
    control_r, control_w = os.pipe()
    messages_r, messages_w = os.pipe()  # child -> worker: questions, value, reports
    answers_r, answers_w = os.pipe()  # worker -> child: answers, a warm process's next call
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    child_fds = (messages_w, answers_r, out_w, err_w)
    try:
        try:
            pid = _isolation.fork_namespaced(flags | CLONE_PARENT)
        except OSError as exc:
            if exc.errno or flags:  # refused, or namespaces asked of a machine whose clone call is not known
                raise
            pid = _fork_through_middle()
    except OSError as exc:
        for fd in (control_r, control_w, messages_r, answers_w, out_r, err_r, *child_fds):
            os.close(fd)
        return ("refused", exc.errno or 0), []
    if pid == 0:
        _call.await_call(control_r, child_fds, held, host_netns=host_netns, view=view)
    for fd in (control_r, *child_fds):
        os.close(fd)
    return ("forked", pid, messages_w, answers_r), [control_w, messages_r, answers_w, out_r, err_r]


def _fork_through_middle() -> int:
    """Where the machine's ``clone`` call is not known: a middle process forks the child and exits at once,
    so the child, orphaned, becomes the worker's (its nearest subreaper); like :func:`os.fork` otherwise.
    The child goes on once it is the worker's, so that it dies with the worker (:func:`._call.detach`)."""
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:
        me = os.getpid()
        try:
            child = os.fork()
        except OSError:
            os._exit(1)
        if child:
            os.write(write_end, str(child).encode())
            os._exit(0)
        os.close(read_end)
        os.close(write_end)
        while os.getppid() == me:
            time.sleep(0.0001)
        return 0
    os.close(write_end)
    try:
        told = os.read(read_end, 32)
    finally:
        os.close(read_end)
        os.waitpid(middle, 0)
    if not told:
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))
    return int(told)
