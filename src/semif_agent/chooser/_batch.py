"""Requests of concurrent finds embedded together, in a thread: the event loop stays free, the model runs once a batch.

A server answering many clients at once gets many finds in the same
moment. Each needs its request embedded (the model's run, milliseconds of
CPU) before it can be scored. :class:`EmbedBatcher` takes the texts as they
come; while one batch runs in a worker thread the next ones wait and then go
through the model together, as one batch (the model's cost grows far less
than the number of texts in it). Nothing waits on purpose: a lone find is
embedded at once.

What the batch computes lands in the embedder's own cache, where the find's
scoring then reads it (:class:`~semif_agent.engine.local.Embedder` is
thread-safe). A batch that fails fails the finds that asked for it, each with
the same error; the next batch starts afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

MAX_BATCH = 64  # texts run through the model at once, at most
LONG_TEXT = 1_000  # characters past which a text is embedded after the shorter ones waiting with it


class EmbedBatcher:
    """Embeds the texts :meth:`embedded` is asked for, in batches, in a worker thread (one per event loop)."""

    def __init__(self, embed: Callable[[Sequence[str]], object], *, max_batch: int = MAX_BATCH) -> None:
        self.embed = embed
        self.max_batch = max_batch
        self._waiting: list[tuple[str, asyncio.Future[None]]] = []
        self._draining: asyncio.Task[None] | None = None
        self.batches: list[int] = []  # the size of each batch run so far (the latest 1,000)

    async def embedded(self, text: str) -> None:
        """Return once ``text`` went through the embedder (its vector now in the embedder's cache)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        done.add_done_callback(_seen)  # a failed batch's error is read even when the find that asked was cancelled
        self._waiting.append((text, done))
        if self._draining is None or self._draining.done():
            self._draining = loop.create_task(self._drain())
        await asyncio.shield(done)  # a find cancelled meanwhile leaves the batch to the others

    async def _drain(self) -> None:
        while self._waiting:
            # the short texts first, the long ones (many times the model's work each) in a batch of their own: a client
            # asking with pages of text waits for them, the others do not
            ordered = sorted(self._waiting, key=lambda asked: len(asked[0]) > LONG_TEXT)
            short = sum(len(text) <= LONG_TEXT for text, _ in ordered)
            size = min(self.max_batch, short or self.max_batch)
            batch, self._waiting = ordered[:size], ordered[size:]
            texts = list(dict.fromkeys(text for text, _ in batch))
            try:
                await asyncio.to_thread(self.embed, texts)
            except Exception as exc:  # noqa: BLE001 (each find that asked gets the error, as its own call would)
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)
            self.batches.append(len(texts))
            del self.batches[:-1000]


def _seen(done: asyncio.Future[None]) -> None:
    if not done.cancelled():
        done.exception()
