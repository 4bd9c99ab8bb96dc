"""What the benches on a fresh starter workspace share: the repository on the import path, and their options.

Imported first (``from _starter_bench import ...``): the request sets and
their checks are read from ``tests.starter``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args(doc: str, *, show: str, json: str, requests: str | None = None) -> argparse.Namespace:
    """``--engine``, ``--show`` and ``--json`` for the bench ``doc`` opens; ``show`` and ``json`` say what they print.
    With ``requests`` (its default set, said), ``--requests FILE`` runs another set of the same form."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--engine", default="local", help="the engine that routes, decides and judges (default: local)")
    parser.add_argument("--show", action="store_true", help=show)
    parser.add_argument("--json", action="store_true", help=json)
    if requests is not None:
        parser.add_argument("--requests", type=Path, help=f"the request set to run (default: {requests})")
    return parser.parse_args()
