"""Batch work on a Ray cluster: ``semif eval``, ``semif train`` and ``semif run --batch`` with ``--ray``.

Work is cut into batches and spread over a pool of actors, each of which
builds what it needs (the tree, the engine and its embedder, a skill runner)
once and then handles batch after batch. Results come back to the driver,
which alone writes: the report, the router, the decision log. A batch whose
worker dies is sent again (the actor restarts); the driver takes each batch's
result once, so nothing is lost and nothing is written twice.

- :mod:`.cluster`: joining a cluster or starting a local one (Ray is imported there, when asked for);
- :mod:`.pool`: :class:`~.pool.RayPool`, batches in, results out once each, retries, progress;
- :mod:`.jobs`: what evaluation and training send to the pool, and how the answers are put together;
- :mod:`.batch`: batch runs (``semif run --batch``): the request file, the rows written once, the run lock.

Ray comes with the ``ray`` extra: ``pip install 'semif-agent[ray]'``.
"""

from __future__ import annotations
