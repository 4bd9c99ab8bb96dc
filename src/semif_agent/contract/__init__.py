"""The code-skill contract, checked: what a body may be before it is admitted, and before each run.

- :func:`check_source`: the static criteria 1 to 4 of ``forge/CONTRACT.md``,
  every violation with its line (:mod:`.checker`); criterion 3 is the
  import rule (:mod:`._modules`: the standard library and semif_agent's
  kernel, less what a body must not use, each refusal with its reason) and
  the ways around it (:mod:`.escapes`).
- :mod:`.admitted`: the sha256 of every body that passed, kept beside
  ``categories.json``; :func:`load_checked_body` checks a body whose bytes
  changed since (or were never recorded) before it runs.

Skill generation and the behavioural gate, which use it, are in
:mod:`semif_agent.forge`.
"""

from ._modules import KERNEL_MODULES, NETWORK_MODULES, allowed_module, module_refusal
from .admitted import load_checked_body, record_body, recorded, verify_body
from .checker import check_source
from .report import CheckReport, Violation

__all__ = [
    "KERNEL_MODULES",
    "NETWORK_MODULES",
    "CheckReport",
    "Violation",
    "allowed_module",
    "check_source",
    "load_checked_body",
    "module_refusal",
    "record_body",
    "recorded",
    "verify_body",
]
