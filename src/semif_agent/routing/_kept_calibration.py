"""A tree's calibration kept between processes, so a new process does not fit it again.

Fitting a calibration scores every example of the tree left out (a fold per
example position, each with its own index): on a workspace of 4,600 real
skills that cost each new ``semif run`` eight seconds of CPU. What it gives is
a handful of numbers (:class:`.calibration.Calibration`), fixed by what it was
fitted on: the skills (names, descriptions, examples, the SKILL.md evidence
indexed with them), the categories, the requests no skill serves, the scorer's
settings and the model. They are kept in the embedding cache's store under a
digest of all of that, so any change to them fits it anew, and a value read
back that is not a calibration is ignored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import TYPE_CHECKING

from .calibration import Calibration

if TYPE_CHECKING:
    from ..engine.embed_cache import EmbeddingStore

VERSION = 1
"""Bumped when the fit changes, so calibrations kept by an older fit are not read."""


def calibration_key(*parts: object) -> str:
    """The store key of a calibration fitted on ``parts`` (each turned to text by ``repr``, which is exact for the
    frozen manifests, tuples, strings and numbers it is given)."""
    digest = hashlib.sha256(repr((VERSION, *parts)).encode("utf-8", "surrogatepass")).hexdigest()
    return f"calibration/{digest[:40]}"


def read_kept(store: EmbeddingStore | None, key: str) -> Calibration | None:
    """The calibration kept under ``key`` in ``store``, or None (none kept, or not one)."""
    if store is None:
        return None
    blob = store.get_many([key]).get(key)
    if blob is None:
        return None
    try:
        fields = json.loads(bytes(blob).decode("utf-8"))
        calibration = Calibration(**fields)
    except (ValueError, TypeError, UnicodeDecodeError):
        return None
    numbers = [v for v in dataclasses.astuple(calibration) if v is not None]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in numbers) or calibration.temperature <= 0:
        return None
    return calibration


def keep(store: EmbeddingStore | None, key: str, calibration: Calibration) -> None:
    """Keep ``calibration`` under ``key`` (a store that cannot be written keeps nothing, as for embeddings)."""
    if store is not None:
        store.put_many([(key, json.dumps(dataclasses.asdict(calibration)).encode("utf-8"))])
