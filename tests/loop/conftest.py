"""Fixtures for the loop tests: ``attack`` runs a hostile body (see :mod:`._hostile`)."""

from __future__ import annotations

from ._hostile import attack

__all__ = ["attack"]  # the fixture, shared by the test modules of the folder
