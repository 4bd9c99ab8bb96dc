"""The one place untrusted code runs: warm workers, confined calls, caps, the channel.

- :class:`WorkerPool`: warm worker processes; ``await pool.call(function,
  payload, ...)`` runs ``function(payload, channel)`` (a module-level function
  of this package) in a forked, confined child and returns a
  :class:`CallResult`; :class:`Channel` is the child's side of its messages.
- :func:`run_program`: the call target that runs a whole program (a Python
  script as ``__main__``, a shell script, an executable) in that child;
  :func:`run_subprocess`: a program run in a fresh confined process
  (:class:`ScriptRunResult`).
- :class:`SandboxLimits` and :func:`confinement_spec`: what a run may use,
  and the instructions the confinement applies.
- Errors: :class:`SandboxError` (:class:`WorkerError`, :class:`ChannelError`),
  :class:`CallTargetError`.

Code-skill bodies (:mod:`semif_agent.loop`) and SKILL.md scripts and hooks
(:mod:`semif_agent.catalog`) run through it. Names load on first use, so the
warm worker and the script launcher can import this package's small modules
without pulling in the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_namespace

_EXPORTS = {
    "WorkerPool": ".pool",
    "default_worker_pool": ".pool",
    "preload_everywhere": "._targets",
    "CallResult": ".results",
    "ScriptRunResult": ".results",
    "ErrorType": ".results",
    "Channel": ".channel",
    "run_subprocess": ".process",
    "run_program": ".program",
    "SandboxLimits": ".limits",
    "confinement_spec": ".limits",
    "DEFAULT_ENV_ALLOW": ".limits",
    "SandboxError": ".errors",
    "WorkerError": ".errors",
    "ChannelError": ".errors",
    "CallTargetError": ".errors",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from ._targets import preload_everywhere as preload_everywhere
    from .channel import Channel as Channel
    from .errors import CallTargetError as CallTargetError
    from .errors import ChannelError as ChannelError
    from .errors import SandboxError as SandboxError
    from .errors import WorkerError as WorkerError
    from .limits import DEFAULT_ENV_ALLOW as DEFAULT_ENV_ALLOW
    from .limits import SandboxLimits as SandboxLimits
    from .limits import confinement_spec as confinement_spec
    from .pool import WorkerPool as WorkerPool
    from .pool import default_worker_pool as default_worker_pool
    from .process import run_subprocess as run_subprocess
    from .program import run_program as run_program
    from .results import CallResult as CallResult
    from .results import ErrorType as ErrorType
    from .results import ScriptRunResult as ScriptRunResult
else:  # at run time each name is imported on first use
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
