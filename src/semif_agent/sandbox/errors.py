"""The exceptions of the sandbox; the whole tree is drawn in :mod:`semif_agent.errors`.

Standard library only: the warm worker's children raise :class:`ChannelError`.
"""

from __future__ import annotations

from ..errors import SemifError, UserError


class CallTargetError(UserError):
    """:meth:`~.pool.WorkerPool.call` was given a target that is not a module-level function of this package."""


class SandboxError(SemifError):
    """The sandbox's machinery failed at run time."""


class WorkerError(SandboxError):
    """The warm worker pool could not start a worker process."""


class ChannelError(SandboxError):
    """Raised inside a confined call by ``channel.ask``: the host's handler failed, or the channel closed."""
