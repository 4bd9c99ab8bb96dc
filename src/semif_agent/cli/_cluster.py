"""``--ray [ADDRESS]``: the option, the worker pool it opens, and the status line of the work on the cluster."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import click

from .._text import plural

if TYPE_CHECKING:
    from ..distributed.pool import RayPool, Status

LOCAL = "local"  # what --ray alone means (semif_agent.distributed.cluster.LOCAL, without importing it)


def ray_option(fn: Callable) -> Callable:
    """``--ray [ADDRESS]``: with an address, work on that Ray cluster; alone, on a local one started for the command."""
    return click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value=LOCAL,
        default=None,
        metavar="[ADDRESS]",
        help="Spread the work over a Ray cluster: the one at ADDRESS (e.g. auto, or ray://HEAD:10001), or with --ray "
        "alone a local one on this machine's cores. Needs semif-agent[ray]. Give it last, or with an address, "
        "so it does not take the next argument for one.",
    )(fn)


@contextlib.contextmanager
def cluster_pool(address: str | None) -> Iterator[RayPool | None]:
    """A pool of workers on the cluster ``address`` names (None: no cluster, yields None)."""
    if address is None:
        yield None
        return
    from ..distributed.cluster import connect
    from ..distributed.pool import RayPool

    ray = connect(address)
    with RayPool(ray) as pool:
        yield pool


class StatusLine:
    """A progress callback for cluster work: requests done, rate, workers, batches sent again, on standard error.

    On a terminal the line is redrawn at most ten times a second; :meth:`close`
    prints the last state as a line of its own (also when not on a terminal).
    """

    def __init__(self, noun: str = "request") -> None:
        self.noun = noun
        self.last: Status | None = None
        self._drawn = 0.0
        self._live = sys.stderr.isatty()

    def __call__(self, status: Status) -> None:
        self.last = status
        now = time.monotonic()
        if self._live and (now - self._drawn > 0.1 or status.done == status.total):
            self._drawn = now
            click.echo(f"\r{self._text(status)}\033[K", nl=False, err=True)

    def _text(self, status: Status) -> str:
        line = (
            f"{status.stage}: {status.done}/{plural(status.total, self.noun)} on {plural(status.workers, 'worker')}, "
            f"{status.rate:.0f}/s, {status.seconds:.1f} s"
        )
        if status.failures:
            line += f", {plural(status.failures, 'batch', 'batches')} sent again after a worker died"
        return line

    def close(self) -> None:
        if self.last is not None:
            click.echo(
                ("\r" if self._live else "") + self._text(self.last) + ("\033[K" if self._live else ""), err=True
            )
            self.last = None

    def __enter__(self) -> StatusLine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
