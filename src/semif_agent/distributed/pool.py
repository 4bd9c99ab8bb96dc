"""A pool of Ray actors that handle batches: each builds its state once, the driver takes every result once.

:meth:`RayPool.map` sends a job: a ``setup`` (called once per actor, on its
first batch of the job: it loads the tree, builds the engine, and so on) and a
``task(state, batch)``, over a list of batches. A few batches are in flight
per actor. Results are handed to ``on_result(index, result)`` in batch order,
each exactly once. When an actor dies (killed, out of memory, its node lost),
Ray restarts it and the batches it held are sent again, once the restarted
actor answers: an actor that is restarting is not a lost batch, however long
its restart takes on a busy machine, up to :data:`RESTART_DEADLINE`. A batch
whose worker dies under it more than :data:`RETRIES` times (a batch that kills
its worker) stops the job with :class:`WorkerFailed`. An error the task raised
on purpose (a :class:`~semif_agent.errors.SemifError`) reaches the driver as it is.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence, Sized
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from ..errors import SemifError

RETRIES = 3
"""How many times a batch is sent again after its worker died under it, before the job gives up."""
RESTART_DEADLINE = 300.0
"""Seconds a dead worker has to answer again (Ray restarts it) before the job gives up on it."""
RESTART_PAUSE = 0.25
"""Seconds between two asks whether a restarting worker answers again."""
IN_FLIGHT = 2
"""Batches queued on each actor at once: the next is ready as soon as one is done."""

State = TypeVar("State")
Batch = TypeVar("Batch", bound=Sized)
Result = TypeVar("Result")
Item = TypeVar("Item")


class WorkerFailed(SemifError):
    """A batch could not be done on the cluster: its worker died too often, or the task failed unexpectedly."""


@dataclass(frozen=True)
class Status:
    """Where a job stands: items (requests, texts) done of ``total``, batches sent again, seconds since it began."""

    stage: str
    done: int
    total: int
    failures: int
    seconds: float
    workers: int

    @property
    def rate(self) -> float:
        """Items per second so far."""
        return self.done / self.seconds if self.seconds > 0 else 0.0


class _Worker:
    """The actor: keeps the state of the current job's ``setup`` and runs its tasks on it."""

    def __init__(self) -> None:
        self._job: str | None = None
        self._state: Any = None  # what the current job's setup built: each job's is of its own type

    def handle(
        self, job: str, setup: Callable[[], State], task: Callable[[State, Batch], Result], batch: Batch
    ) -> Result:
        if self._job != job:
            self._job, self._state = None, None  # the last job's state goes before the next is built
            self._state = setup()
            self._job = job
        return task(self._state, batch)

    def pid(self) -> int:
        return os.getpid()


class RayPool:
    """``workers`` actors (default: one per CPU of the cluster) on the connected cluster ``ray``, one CPU each."""

    def __init__(
        self, ray: ModuleType, workers: int | None = None, *, retries: int = RETRIES, in_flight: int = IN_FLIGHT
    ) -> None:
        from .cluster import cluster_cpus

        self.ray = ray
        self.retries = retries
        self.in_flight = max(1, in_flight)
        count = workers or cluster_cpus(ray)
        actor = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(_Worker)
        self.actors = [actor.remote() for _ in range(count)]

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the actors (their state goes with them)."""
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)
        self.actors = []

    def map(
        self,
        setup: Callable[[], State],
        task: Callable[[State, Batch], Result],
        batches: Sequence[Batch],
        *,
        on_result: Callable[[int, Result], None],
        sizes: Sequence[int] | None = None,
        stage: str = "",
        progress: Callable[[Status], None] | None = None,
    ) -> None:
        """Run ``task`` on every batch; ``on_result(index, result)`` in batch order, once per batch.

        ``sizes`` counts each batch's items for the progress (default: ``len(batch)``).
        ``setup`` and ``task`` must be picklable (module-level functions, or ``functools.partial`` of them).
        """
        from ray.exceptions import RayActorError, RayTaskError

        ray = self.ray
        sizes = list(sizes) if sizes is not None else [len(b) for b in batches]
        job, setup_ref, task_ref = uuid.uuid4().hex, ray.put(setup), ray.put(task)
        queue = deque(range(len(batches)))
        attempts = [0] * len(batches)
        pending: dict[object, tuple[int, int]] = {}  # by Ray object reference: (batch, slot)
        probes: dict[object, int] = {}  # asks whether a restarted actor answers, by reference: slot
        down: dict[int, tuple[float, BaseException]] = {}  # slots restarting: (deadline, what ended the worker)
        load = [0] * len(self.actors)
        arrived: dict[int, Result] = {}
        taken = 0  # batches handed to on_result (always the first `taken`)
        done = failures = 0
        started = time.perf_counter()

        def tell() -> None:
            if progress is not None:
                progress(Status(stage, done, sum(sizes), failures, time.perf_counter() - started, len(self.actors)))

        def submit() -> None:
            while queue:
                free = [slot for slot in range(len(self.actors)) if slot not in down and load[slot] < self.in_flight]
                if not free:
                    return
                slot = min(free, key=lambda s: load[s])
                index = queue.popleft()
                ref = self.actors[slot].handle.remote(job, setup_ref, task_ref, batches[index])
                pending[ref] = (index, slot)
                load[slot] += 1

        def probe(slot: int) -> None:
            """Ask the actor of ``slot`` for its pid: it gets work again once it answers."""
            probes[self.actors[slot].pid.remote()] = slot

        def restarting(slot: int, exc: BaseException) -> None:
            """The actor of ``slot`` died: no work for it until it answers again, within the deadline."""
            if slot not in down:
                down[slot] = (time.monotonic() + RESTART_DEADLINE, exc)
                probe(slot)

        tell()
        submit()
        try:
            while pending or probes:
                ready, _ = ray.wait([*pending, *probes], num_returns=1)
                if ready[0] in probes:
                    slot = probes.pop(ready[0])
                    try:
                        ray.get(ready[0])
                    except RayActorError as exc:  # still restarting (a busy machine can take long): ask again
                        deadline, lost = down[slot]
                        if time.monotonic() > deadline:
                            raise WorkerFailed(
                                f"worker {slot + 1} did not come back within {RESTART_DEADLINE:.0f} s "
                                f"after it died: {_first_line(lost)}"
                            ) from exc
                        time.sleep(RESTART_PAUSE)
                        probe(slot)
                    else:
                        down.pop(slot, None)
                        submit()
                    continue
                index, slot = pending.pop(ready[0])
                load[slot] -= 1
                try:
                    result = ray.get(ready[0])
                except RayActorError as exc:  # the worker died: its batch goes again, once the actor answers
                    failures += 1
                    attempts[index] += 1
                    if attempts[index] > self.retries:
                        raise WorkerFailed(
                            f"batch {index + 1} of {len(batches)} lost its worker {attempts[index]} "
                            f"times: {_first_line(exc)}"
                        ) from exc
                    queue.appendleft(index)
                    restarting(slot, exc)
                except RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, SemifError):
                        raise cause from None
                    raise WorkerFailed(f"a worker failed on batch {index + 1}: {_first_line(cause or exc)}") from exc
                else:
                    if index not in arrived and index >= taken:
                        arrived[index] = result
                        done += sizes[index]
                    while taken in arrived:
                        on_result(taken, arrived.pop(taken))
                        taken += 1
                tell()
                submit()
        finally:  # stopped early (an error, an interrupt): what is still queued is not needed
            for ref in pending:
                try:
                    ray.cancel(ref, force=False)
                except Exception:  # noqa: BLE001 - best effort; the actors are killed with the pool anyway
                    pass


def batches_of(items: Sequence[Item], size: int) -> list[list[Item]]:
    """``items`` cut into consecutive lists of ``size`` (the last may be shorter)."""
    size = max(1, size)
    return [list(items[start : start + size]) for start in range(0, len(items), size)]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")
