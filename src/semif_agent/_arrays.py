"""Type names for the numpy arrays the engines, the tree and the router pass around. Import them under
``TYPE_CHECKING`` only: numpy is loaded when an engine first needs it, not when a command starts."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

Vectors: TypeAlias = NDArray[np.float32]
"""Embeddings, a row per text (or one vector): what an embedder returns."""

Scores: TypeAlias = NDArray[np.float64]
"""A score per leaf (or a row of them per request): cosines, BM25 scores, their blend."""

Indexes: TypeAlias = NDArray[np.intp]
"""Positions into another array: the leaf of each row, where each leaf's rows start."""
