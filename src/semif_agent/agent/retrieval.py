"""Retrieval of documents for the agent: the public name of :mod:`semif_agent.agent.toolkits.retrieval` (the same objects, for code written against it)."""

from .toolkits.retrieval import *  # noqa: F403 - this module re-exports that one under its public name
from .toolkits.retrieval import __all__  # noqa: F401 - the same public names
