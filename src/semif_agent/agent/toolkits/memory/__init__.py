"""Agent memory: conversation history and persistent facts (:class:`MemoryManager`) and their tools."""

from __future__ import annotations

from .manager import Fact, FactNotFoundError, MemoryManager
from .tools import MEMORY_INSTRUCTIONS, memory_skill, memory_tools

__all__ = ["MemoryManager", "Fact", "FactNotFoundError", "memory_tools", "memory_skill", "MEMORY_INSTRUCTIONS"]
