"""The SemIf engine: small "which of these options?" decisions, and who answers them.

This is kernel code: it imports only the standard library (engines that need
more, like ``local``, import their dependencies when they are built).

>>> from semif_agent.engine import DecisionRequest, Option, create_engine
>>> engine = create_engine("lexical")
>>> engine.call(DecisionRequest("send a mail", "Which?", [Option("mail"), Option("none")])).selected
'mail'
"""

from .base import BaseEngine, Engine, ThresholdEngine, decide
from .decisions import NONE_ID, DecisionRequest, DecisionResult, Option, softmax
from .registry import create_engine, default_engine_name, engine_names, local_available, register_engine
from .scripted import ScriptedEngine

__all__ = [
    # decisions
    "DecisionRequest",
    "DecisionResult",
    "Option",
    "NONE_ID",
    "softmax",
    # engines
    "Engine",
    "BaseEngine",
    "ThresholdEngine",
    "decide",
    "ScriptedEngine",
    "create_engine",
    "register_engine",
    "engine_names",
    "default_engine_name",
    "local_available",
]
