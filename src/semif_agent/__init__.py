"""semif-agent: hold thousands of skills, pick the right one fast, run it safely, judge it, learn.

The kernel (``semif_agent.skills``, ``semif_agent.engine``) imports only the
standard library; everything else is imported on first use. The Agent API's
names are all here (``from semif_agent import Agent, AgentTool, tool, Skill,
SkillRegistry, ...``), as they are in :mod:`semif_agent.agent`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_namespace

__version__ = "0.1.0"

# public name -> module that defines it (imported lazily on first access)
_EXPORTS = {
    # the skill contract
    "Request": "semif_agent.skills",
    "ActionContext": "semif_agent.skills",
    "Prediction": "semif_agent.skills",
    "ActionResult": "semif_agent.skills",
    # decisions and engines
    "DecisionRequest": "semif_agent.engine",
    "DecisionResult": "semif_agent.engine",
    "Option": "semif_agent.engine",
    "Engine": "semif_agent.engine",
    "ScriptedEngine": "semif_agent.engine",
    "create_engine": "semif_agent.engine",
    "register_engine": "semif_agent.engine",
    "DecisionLog": "semif_agent.records",
    # errors
    "SemifError": "semif_agent.errors",
    "UserError": "semif_agent.errors",
    # workspaces, and the chooser over their skills
    "Workspace": "semif_agent.workspace",
    "Router": "semif_agent.chooser",
    # the agent and its tools
    "Agent": "semif_agent.agent",
    "AgentTool": "semif_agent.agent",
    "tool": "semif_agent.agent",
    # skills and subagents
    "Skill": "semif_agent.agent",
    "SkillRegistry": "semif_agent.agent",
    "SubagentDefinition": "semif_agent.agent",
    # memory and retrieval
    "memory_skill": "semif_agent.agent",
    "memory_tools": "semif_agent.agent",
    "MemoryManager": "semif_agent.agent",
    "FileMemoryBackend": "semif_agent.agent",
    "rag_skill": "semif_agent.agent",
    "rag_tools": "semif_agent.agent",
    "retriever_step": "semif_agent.agent",
    "RetrievalScope": "semif_agent.agent",
    "TokenBudget": "semif_agent.agent",
    "TierCompactor": "semif_agent.agent",
    # events
    "AgentEvent": "semif_agent.agent",
    "TurnStarted": "semif_agent.agent",
    "RoundStarted": "semif_agent.agent",
    "TextDelta": "semif_agent.agent",
    "ToolStarted": "semif_agent.agent",
    "ToolFinished": "semif_agent.agent",
    "CompactionStarted": "semif_agent.agent",
    "CompactionFinished": "semif_agent.agent",
    "RoundFinished": "semif_agent.agent",
    "UsageLimitReached": "semif_agent.agent",
    "TurnFinished": "semif_agent.agent",
    # usage
    "UsageLimits": "semif_agent.agent",
    "RoundUsage": "semif_agent.agent",
    "TurnDiagnostics": "semif_agent.agent",
    "ChildTurn": "semif_agent.agent",
    # hooks, approval and callbacks
    "HookResult": "semif_agent.agent",
    "ApprovalRequest": "semif_agent.agent",
    "ApprovalDecision": "semif_agent.agent",
    "AgentCallback": "semif_agent.agent",
    # MCP
    "MCPServerConfig": "semif_agent.agent",
    # the rest of the Agent API: toolsets, retrieval, tracing, usage pools, events as dicts, errors
    "AgentConfigError": "semif_agent.agent",
    "AgentError": "semif_agent.agent",
    "AgentToolset": "semif_agent.agent",
    "ArgumentValidationError": "semif_agent.agent",
    "ContextPipeline": "semif_agent.agent",
    "DiscoverySettings": "semif_agent.agent",
    "Document": "semif_agent.agent",
    "EmbeddingRetriever": "semif_agent.agent",
    "Fact": "semif_agent.agent",
    "FactNotFoundError": "semif_agent.agent",
    "FunctionToolset": "semif_agent.agent",
    "Hit": "semif_agent.agent",
    "MCPError": "semif_agent.agent",
    "MCPToolError": "semif_agent.agent",
    "MemoryToolError": "semif_agent.agent",
    "ModelCall": "semif_agent.agent",
    "OutputMissingError": "semif_agent.agent",
    "Retriever": "semif_agent.agent",
    "SQLiteRetriever": "semif_agent.agent",
    "SkillActivationError": "semif_agent.agent",
    "SkillNameCollisionError": "semif_agent.agent",
    "SkillNotRegisteredError": "semif_agent.agent",
    "SubagentNestingError": "semif_agent.agent",
    "ToolDefinitionError": "semif_agent.agent",
    "ToolNameCollisionError": "semif_agent.agent",
    "ToolsetView": "semif_agent.agent",
    "TracingAgentCallback": "semif_agent.agent",
    "TurnError": "semif_agent.agent",
    "UnknownVaultError": "semif_agent.agent",
    "UsagePool": "semif_agent.agent",
    "current_scope": "semif_agent.agent",
    "current_usage_pool": "semif_agent.agent",
    "estimate_tokens": "semif_agent.agent",
    "event_from_dict": "semif_agent.agent",
    "event_to_dict": "semif_agent.agent",
    "memory_toolset": "semif_agent.agent",
    "rag_toolset": "semif_agent.agent",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from semif_agent.agent import Agent as Agent
    from semif_agent.agent import AgentCallback as AgentCallback
    from semif_agent.agent import AgentConfigError as AgentConfigError
    from semif_agent.agent import AgentError as AgentError
    from semif_agent.agent import AgentEvent as AgentEvent
    from semif_agent.agent import AgentTool as AgentTool
    from semif_agent.agent import AgentToolset as AgentToolset
    from semif_agent.agent import ApprovalDecision as ApprovalDecision
    from semif_agent.agent import ApprovalRequest as ApprovalRequest
    from semif_agent.agent import ArgumentValidationError as ArgumentValidationError
    from semif_agent.agent import ChildTurn as ChildTurn
    from semif_agent.agent import CompactionFinished as CompactionFinished
    from semif_agent.agent import CompactionStarted as CompactionStarted
    from semif_agent.agent import ContextPipeline as ContextPipeline
    from semif_agent.agent import DiscoverySettings as DiscoverySettings
    from semif_agent.agent import Document as Document
    from semif_agent.agent import EmbeddingRetriever as EmbeddingRetriever
    from semif_agent.agent import Fact as Fact
    from semif_agent.agent import FactNotFoundError as FactNotFoundError
    from semif_agent.agent import FileMemoryBackend as FileMemoryBackend
    from semif_agent.agent import FunctionToolset as FunctionToolset
    from semif_agent.agent import Hit as Hit
    from semif_agent.agent import HookResult as HookResult
    from semif_agent.agent import MCPError as MCPError
    from semif_agent.agent import MCPServerConfig as MCPServerConfig
    from semif_agent.agent import MCPToolError as MCPToolError
    from semif_agent.agent import MemoryManager as MemoryManager
    from semif_agent.agent import MemoryToolError as MemoryToolError
    from semif_agent.agent import ModelCall as ModelCall
    from semif_agent.agent import OutputMissingError as OutputMissingError
    from semif_agent.agent import RetrievalScope as RetrievalScope
    from semif_agent.agent import Retriever as Retriever
    from semif_agent.agent import RoundFinished as RoundFinished
    from semif_agent.agent import RoundStarted as RoundStarted
    from semif_agent.agent import RoundUsage as RoundUsage
    from semif_agent.agent import Skill as Skill
    from semif_agent.agent import SkillActivationError as SkillActivationError
    from semif_agent.agent import SkillNameCollisionError as SkillNameCollisionError
    from semif_agent.agent import SkillNotRegisteredError as SkillNotRegisteredError
    from semif_agent.agent import SkillRegistry as SkillRegistry
    from semif_agent.agent import SQLiteRetriever as SQLiteRetriever
    from semif_agent.agent import SubagentDefinition as SubagentDefinition
    from semif_agent.agent import SubagentNestingError as SubagentNestingError
    from semif_agent.agent import TextDelta as TextDelta
    from semif_agent.agent import TierCompactor as TierCompactor
    from semif_agent.agent import TokenBudget as TokenBudget
    from semif_agent.agent import ToolDefinitionError as ToolDefinitionError
    from semif_agent.agent import ToolFinished as ToolFinished
    from semif_agent.agent import ToolNameCollisionError as ToolNameCollisionError
    from semif_agent.agent import ToolsetView as ToolsetView
    from semif_agent.agent import ToolStarted as ToolStarted
    from semif_agent.agent import TracingAgentCallback as TracingAgentCallback
    from semif_agent.agent import TurnDiagnostics as TurnDiagnostics
    from semif_agent.agent import TurnError as TurnError
    from semif_agent.agent import TurnFinished as TurnFinished
    from semif_agent.agent import TurnStarted as TurnStarted
    from semif_agent.agent import UnknownVaultError as UnknownVaultError
    from semif_agent.agent import UsageLimitReached as UsageLimitReached
    from semif_agent.agent import UsageLimits as UsageLimits
    from semif_agent.agent import UsagePool as UsagePool
    from semif_agent.agent import current_scope as current_scope
    from semif_agent.agent import current_usage_pool as current_usage_pool
    from semif_agent.agent import estimate_tokens as estimate_tokens
    from semif_agent.agent import event_from_dict as event_from_dict
    from semif_agent.agent import event_to_dict as event_to_dict
    from semif_agent.agent import memory_skill as memory_skill
    from semif_agent.agent import memory_tools as memory_tools
    from semif_agent.agent import memory_toolset as memory_toolset
    from semif_agent.agent import rag_skill as rag_skill
    from semif_agent.agent import rag_tools as rag_tools
    from semif_agent.agent import rag_toolset as rag_toolset
    from semif_agent.agent import retriever_step as retriever_step
    from semif_agent.agent import tool as tool
    from semif_agent.chooser import Router as Router
    from semif_agent.engine import DecisionRequest as DecisionRequest
    from semif_agent.engine import DecisionResult as DecisionResult
    from semif_agent.engine import Engine as Engine
    from semif_agent.engine import Option as Option
    from semif_agent.engine import ScriptedEngine as ScriptedEngine
    from semif_agent.engine import create_engine as create_engine
    from semif_agent.engine import register_engine as register_engine
    from semif_agent.errors import SemifError as SemifError
    from semif_agent.errors import UserError as UserError
    from semif_agent.records import DecisionLog as DecisionLog
    from semif_agent.skills import ActionContext as ActionContext
    from semif_agent.skills import ActionResult as ActionResult
    from semif_agent.skills import Prediction as Prediction
    from semif_agent.skills import Request as Request
    from semif_agent.workspace import Workspace as Workspace
else:  # at run time each name is imported on first use, so `import semif_agent` stays cheap
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
