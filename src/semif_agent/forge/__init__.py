"""Skill generation and the contract checker: only bodies that pass the contract are admitted."""

from ..contract import CheckReport, Violation, check_source
from .admission import acheck_skill
from .generator import Generated, GenerationFailed, agenerate_skill, contract_text, extract_code, make_manifest
from .store import admit

__all__ = [
    "CheckReport",
    "Violation",
    "check_source",
    "acheck_skill",
    "agenerate_skill",
    "make_manifest",
    "contract_text",
    "extract_code",
    "GenerationFailed",
    "Generated",
    "admit",
]
