"""The agent's long-term memory: the public name of :mod:`semif_agent.agent.toolkits.memory` (the same objects, for code written against it)."""

from .toolkits.memory import *  # noqa: F403 - this module re-exports that one under its public name
from .toolkits.memory import __all__  # noqa: F401 - the same public names
