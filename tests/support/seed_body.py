"""The email.compose body the tests build workspaces with."""

from __future__ import annotations

from pathlib import Path


def seed_body(fixtures: Path) -> str:
    """The skill contract's worked example, verbatim (``seeds/skill_contract_worked_example.py``), after the imports
    and the contacts helper it needs (``seed_email_compose_imports.py``)."""
    parts = ("seed_email_compose_imports.py", "seeds/skill_contract_worked_example.py")
    return "\n\n".join((fixtures / name).read_text(encoding="utf-8").rstrip() + "\n" for name in parts)
