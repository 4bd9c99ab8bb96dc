"""Agent memory, in one place.

- :mod:`.manager`: :class:`MemoryManager`, the conversation history and persistent facts in one SQLite file;
- :mod:`.tools`: the fact tools a model uses on it (:func:`memory_tools`, :func:`memory_skill`);
- :mod:`.files`: the client-side ``memory`` tool, the model's own files under ``/memories``
  (:class:`FileMemoryBackend`, :func:`memory_tool`, and :func:`memory_toolset` with its protocol).
"""

from __future__ import annotations

from .files import MEMORY_PROTOCOL, FileMemoryBackend, MemoryToolError, memory_tool, memory_toolset
from .manager import Fact, FactNotFoundError, MemoryManager
from .tools import MEMORY_INSTRUCTIONS, memory_skill, memory_tools

__all__ = [
    "MemoryManager",
    "Fact",
    "FactNotFoundError",
    "memory_tools",
    "memory_skill",
    "MEMORY_INSTRUCTIONS",
    "FileMemoryBackend",
    "MemoryToolError",
    "memory_tool",
    "memory_toolset",
    "MEMORY_PROTOCOL",
]
