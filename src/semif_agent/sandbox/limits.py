"""What a confined run may use: :class:`SandboxLimits`, and the confinement built from it.

A run sees only an allow-list of the host's environment variables
(:data:`DEFAULT_ENV_ALLOW` unless the limits name others).

What holds, and where (each result's ``confinement`` says which held):

- Files: an allow-list, twice. The run's root is a fresh tmpfs holding only
  the system and Python folders, this package, the few files of ``/etc``
  programs read (:data:`._root.ETC_ALLOWED`, none other users may not read),
  its own skill, its write dirs, its data and its temporary folder
  (:mod:`._root`): nothing else of ``/etc``, ``/root``, ``/home`` or the
  workspace's records is there, not even to ``stat``. Under it, Landlock
  (Linux 5.13+, :mod:`._confine`) allows reading those same paths and writing
  only the write dirs and the temporary folder. A folder the host keeps inside
  a write dir (an agent's ``.semif``) is covered by an empty one of the run's
  own: what it writes there stays in its view. Where mount namespaces are
  refused, Landlock alone holds: reads and writes as above (that folder
  included), but a path outside can still be ``stat``-ed; without Landlock
  too, the run may read and write whatever the host user can.
- User: from root, each run runs as :data:`._root.CALL_UID`, the folders it
  writes idmapped so root's files there are its own (what it writes is root's
  on disk); root's files elsewhere, those it only reads included, are another
  user's (a root-only one is out of its reach). Where idmapped mounts are
  refused (an old kernel, a file system without them) it stays root with no
  capability at all: file modes no longer stop it reading a root-only file
  it can reach, so only the view above and Landlock do. A host user other
  than root runs its runs as itself.
- Processes: each run is the init of a PID namespace of its own
  (:mod:`._isolation`; for a user other than root inside a user namespace):
  when it ends, or is killed, every process it started dies, whatever
  session it moved to. Where namespaces are refused, its ``pids`` cgroup
  names them all; where that is missing too, the supervisor (a subreaper)
  kills the orphans it finds in ``/proc``.
- IPC: the PID namespace comes with an IPC namespace: the System V queues,
  semaphores and shared memory and the POSIX message queues a run makes are
  its own and die with it. Where namespaces are refused, seccomp refuses them.
- Set-uid files: seccomp refuses setting the set-uid and set-gid bits (what a
  run writes in its idmapped write dirs is root's on disk).
- Process count: a ``pids`` cgroup per run (:mod:`._cgroup`) caps its tasks,
  for root too. Where no cgroup can be written, ``RLIMIT_NPROC`` caps them
  for a user other than root; root then has no process limit.
- Network: a network namespace with only loopback, down (none at all), and
  Landlock (ABI 4+) refusing TCP binds and connects. Where namespaces are
  refused only the Landlock layer holds: UDP (and raw sockets, for root)
  stays open. ``network=True`` lifts both.
- Disk: RLIMIT_FSIZE caps each file; the supervisor watches the total
  written to the writable folders, and the files the run deleted but holds
  open (:mod:`._disk`), and kills the run past it.
- Memory: one memory cgroup for the run and all it starts (:mod:`._cgroup`),
  where one can be made; ``RLIMIT_AS`` caps each process everywhere.
- Devices, ``/tmp``, ``/dev/shm``, ``/run``, cgroups: a mount namespace per run
  shows a minimal ``/dev`` and private temporary folders (:mod:`._mounts`);
  capabilities are dropped, and a seccomp filter refuses UNIX sockets,
  ``mknod``, keyrings, ``userfaultfd``, new namespaces, mounts, tracing, BPF and
  module calls (:mod:`._privileges`); each run has a fresh, empty session keyring.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import check_number
from ._root import etc_allowed

DEFAULT_ENV_ALLOW = frozenset({"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM"})
"""Host environment variables a script may see (everything else is dropped)."""

_SYSTEM_READABLE = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/dev",
    "/proc/self",
    "/run/systemd/resolve",
    "/run/resolvconf",
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class SandboxLimits:
    """Resource and confinement limits for skill scripts (``None`` leaves a limit off).

    Attributes:
        memory_mb: Memory of a run and every process it starts together (a memory cgroup, where
            one can be made), and the address-space limit of each process.
        cpu_seconds: CPU-time limit; None means the timeout rounded up, plus one second.
        max_processes: Tasks (processes and threads) a run may have at once: a ``pids`` cgroup
            where one can be made, else ``RLIMIT_NPROC`` (which the kernel does not enforce for root).
        max_file_mb: Largest file a script may write.
        max_disk_mb: Most a run may write in all to its writable folders (files changed
            during the run count whole); past it the run is killed (error type ``disk``).
        max_open_files: Open file descriptors per process.
        max_output_bytes: stdout and stderr kept per run (each); the rest is dropped.
        confine_fs: Confine reads and writes with Landlock where the kernel has it.
        network: Let runs use the network (off: a network namespace with only loopback,
            down, and Landlock refusing TCP binds and connects).
        namespaces: Use PID, IPC and network namespaces where the kernel allows them (off: the
            cgroup or subreaper fallback kills what a run leaves, Landlock alone denies TCP).
        readable_paths: More folders scripts may read (tools' configuration, data sets).
        env_allow: Host environment variables passed through.
        extra_env: Variables set for every script.
        warm_processes: Let a skill's script calls of one setup (skill, workspace, hook, limits) run one
            after another in one confined process kept warm, instead of a fresh process each: every
            fence and limit holds per call and what a call started is killed when it ends, but state
            its code leaves in system modules may be seen by the next (see ``WorkerPool.call``).
    """

    memory_mb: int | None = 1024
    cpu_seconds: int | None = None
    max_processes: int | None = 64
    max_file_mb: int | None = 64
    max_disk_mb: int | None = 256
    max_open_files: int | None = 256
    max_output_bytes: int = 1_000_000
    confine_fs: bool = True
    network: bool = False
    namespaces: bool = True
    readable_paths: tuple[str, ...] = ()
    env_allow: frozenset[str] = DEFAULT_ENV_ALLOW
    extra_env: Mapping[str, str] = field(default_factory=dict)
    warm_processes: bool = True

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_seconds", "max_processes", "max_file_mb", "max_disk_mb", "max_open_files"):
            check_number(name, getattr(self, name), minimum=1, whole=True, optional=True)
        check_number("max_output_bytes", self.max_output_bytes, whole=True)


def confinement_spec(
    limits: SandboxLimits,
    *,
    timeout_sec: float,
    workspace_root: Path,
    skill_dir: Path,
    run_dir: Path | None = None,
    write_roots: Sequence[Path] | None = None,
    covered: Sequence[Path] = (),
) -> dict[str, object]:
    """The JSON-ready instructions :func:`._confine.confine` and the run's supervisor apply.

    ``run_dir`` is the run's private temporary folder (None: the warm worker makes one);
    ``write_roots`` the folders the run may write besides it (None: ``workspace_root``). Nothing else of
    ``workspace_root`` is in the run's sight: not its settings, logs or other records (where the view of
    :mod:`._root` holds, the workspace's folder shows only the write dirs inside it). ``covered``: folders
    inside the write roots the run must not change (the host's own): where a mount namespace holds, it sees
    each as an empty folder of its own, what it writes there never reaching the folder, which it can neither
    remove nor rename.
    """
    writable = [str(workspace_root)] if write_roots is None else [str(path) for path in write_roots]
    cpu = limits.cpu_seconds if limits.cpu_seconds is not None else math.ceil(timeout_sec) + 1
    return {
        "memory_bytes": limits.memory_mb * 1024 * 1024 if limits.memory_mb else None,
        "cpu_seconds": cpu,
        "file_bytes": limits.max_file_mb * 1024 * 1024 if limits.max_file_mb else None,
        "disk_bytes": limits.max_disk_mb * 1024 * 1024 if limits.max_disk_mb else None,
        "open_files": limits.max_open_files,
        "max_processes": limits.max_processes,
        "confine_fs": limits.confine_fs,
        "network": limits.network,
        "namespaces": limits.namespaces,
        "system_readable": system_readable_paths(),
        "readable": [str(skill_dir), *limits.readable_paths],
        "writable": [*writable, *([str(run_dir)] if run_dir is not None else []), "/dev/null"],
        "covered": [str(path) for path in covered],
    }


@functools.lru_cache(maxsize=1)
def system_readable_paths() -> tuple[str, ...]:
    """What every script may read: system and Python folders, the few files of ``/etc`` programs need
    (:func:`._root.etc_allowed`, with those of name resolution), this package."""
    paths = [path for path in _SYSTEM_READABLE if os.path.exists(path)]
    paths += etc_allowed(network=True)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)}
    paths += sorted(prefix for prefix in prefixes if prefix)
    cwd = os.getcwd()
    paths += [entry for entry in sys.path if entry and entry != cwd and os.path.isdir(entry)]
    paths.append(_PACKAGE_PARENT)
    return tuple(dict.fromkeys(paths))


@functools.lru_cache(maxsize=1)
def system_readable_folders() -> tuple[str, ...]:
    """:func:`system_readable_paths` with ``/etc`` as one folder: for a process that sees the allow-listed
    root of :mod:`._root`, whose ``/etc`` holds only those files."""
    return tuple(dict.fromkeys(path if not path.startswith("/etc/") else "/etc" for path in system_readable_paths()))


def etc_secrets() -> tuple[str, ...]:
    """Entries of ``/etc`` a worker covers before it builds its calls' view: none, ``/etc`` is an allow-list."""
    return ()


def package_parent() -> str:
    """The folder holding the ``semif_agent`` package (put on the launcher's and worker's path)."""
    return _PACKAGE_PARENT
