"""Joining a Ray cluster, or starting a local one; the only place that imports Ray."""

from __future__ import annotations

import logging
import os
from types import ModuleType

from ..errors import UserError

LOCAL = "local"
"""What ``--ray`` alone means: start a cluster on this machine."""


def import_ray() -> ModuleType:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError("--ray needs Ray: pip install 'semif-agent[ray]'") from None
    return ray


def connect(address: str | None = LOCAL, *, num_cpus: int | None = None) -> ModuleType:
    """Connect to the cluster at ``address`` (``"local"`` or ``None``: start one here, ``num_cpus`` CPUs, default all).

    A connection already made in this process is kept. Ray's own logging is
    kept to errors and the dashboard is not started. Returns the ``ray`` module.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    quiet = {
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
        "configure_logging": True,
    }
    try:
        if address in (None, "", LOCAL):
            ray.init(num_cpus=num_cpus or os.cpu_count() or 1, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "a local cluster" if address in (None, "", LOCAL) else f"the cluster at {address}"
        raise UserError(f"cannot reach {where}: {str(exc).strip().splitlines()[0]}") from exc
    return ray


def cluster_cpus(ray: ModuleType) -> int:
    """How many CPUs the cluster has (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
