"""The code-skill contract, checked: what a body may be before it is admitted, and before each run.

- :func:`check_source`: the static criteria 1 to 4 of ``forge/CONTRACT.md``,
  every violation with its line (:mod:`.checker`); criterion 3 is the
  allow-list of modules and the ways around it (:mod:`.escapes`).
- :mod:`.admitted`: the sha256 of every body that passed, kept beside
  ``categories.json``; :func:`load_checked_body` checks a body whose bytes
  changed since (or were never recorded) before it runs.

Skill generation and the behavioural gate, which use it, are in
:mod:`semif_agent.forge`.
"""

from .admitted import load_checked_body, record_body, recorded, verify_body
from .checker import check_source
from .escapes import ALLOWED_MODULES, allowed_module
from .report import CheckReport, Violation

__all__ = [
    "ALLOWED_MODULES",
    "CheckReport",
    "Violation",
    "allowed_module",
    "check_source",
    "load_checked_body",
    "record_body",
    "recorded",
    "verify_body",
]
