"""The agent: one async tool-use loop with typed events, usage limits, hooks, approval and structured output.

::

    from semif_agent.agent import Agent, UsageLimits, tool

    @tool(read_only=True)
    def weather(city: str) -> str:
        \"\"\"Today's weather in a city.\"\"\"
        return "sunny"

    agent = Agent("openai/gpt-4o-mini").with_tools([weather]).with_usage_limits(UsageLimits(tool_calls_limit=5))
    for event in agent.stream("Is it sunny in Lisbon?"):
        ...

See :class:`Agent` for the methods, :mod:`~semif_agent.agent.events` for the
stream, :mod:`~semif_agent.agent.usage` for limits and diagnostics,
:mod:`~semif_agent.agent.hooks` for hooks and approval,
:mod:`~semif_agent.agent.tracing` for OpenTelemetry spans of the turns,
:mod:`~semif_agent.agent.output` for structured output,
:mod:`~semif_agent.agent.agent_skills` for skills with progressive disclosure at
any scale (a workspace's included), :mod:`~semif_agent.agent.subagents`,
:mod:`~semif_agent.agent.compaction`, :mod:`~semif_agent.agent.deferred`
for deferred tools, :mod:`~semif_agent.agent.scope` for retrieval scopes,
:mod:`~semif_agent.agent.budget` for the context window,
:mod:`~semif_agent.agent.toolsets` for toolsets (skills, deferred tools, subagents, MCP servers and
your own, each one class the agent asks every round), and the toolkits:
:mod:`~semif_agent.agent.toolkits.memory` for memory,
:mod:`~semif_agent.agent.toolkits.retrieval` for retrieval and
:mod:`~semif_agent.agent.toolkits.mcp` for MCP servers.
"""

from __future__ import annotations

from ._run_context import current_scope, current_usage_pool
from .agent import Agent
from .agent_skills.discovery import DiscoverySettings
from .agent_skills.registry import SkillRegistry
from .agent_skills.skill import Skill
from .budget import TokenBudget
from .compaction import TierCompactor
from .errors import (
    AgentConfigError,
    AgentError,
    ArgumentValidationError,
    OutputMissingError,
    SkillActivationError,
    SkillNameCollisionError,
    SkillNotRegisteredError,
    SubagentNestingError,
    ToolDefinitionError,
    ToolNameCollisionError,
)
from .events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    RoundFinished,
    RoundStarted,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
    UsageLimitReached,
    event_from_dict,
    event_to_dict,
)
from .hooks import AgentCallback, ApprovalDecision, ApprovalRequest, HookResult, ModelCall
from .pipeline import ContextPipeline, retriever_step
from .scope import RetrievalScope
from .subagents import SubagentDefinition
from .toolkits.mcp import MCPError, MCPServerConfig, MCPToolError
from .toolkits.memory import (
    Fact,
    FactNotFoundError,
    FileMemoryBackend,
    MemoryManager,
    MemoryToolError,
    memory_skill,
    memory_tools,
    memory_toolset,
)
from .toolkits.retrieval import (
    Document,
    EmbeddingRetriever,
    Hit,
    Retriever,
    SQLiteRetriever,
    UnknownVaultError,
    rag_skill,
    rag_tools,
    rag_toolset,
)
from .tools import AgentTool, tool
from .toolsets import AgentToolset, FunctionToolset, ToolsetView
from .tracing import TracingAgentCallback
from .usage import (
    ChildTurn,
    RoundUsage,
    TurnDiagnostics,
    TurnError,
    UsageLimits,
    UsagePool,
    estimate_tokens,
)

__all__ = [
    # the agent and its tools
    "Agent",
    "AgentTool",
    "tool",
    # skills and subagents
    "Skill",
    "SkillRegistry",
    "DiscoverySettings",
    "SubagentDefinition",
    # toolsets: what the agent shows besides its own tools
    "AgentToolset",
    "FunctionToolset",
    "ToolsetView",
    "memory_toolset",
    "rag_toolset",
    # events
    "AgentEvent",
    "TurnStarted",
    "RoundStarted",
    "TextDelta",
    "ToolStarted",
    "ToolFinished",
    "CompactionStarted",
    "CompactionFinished",
    "RoundFinished",
    "UsageLimitReached",
    "TurnFinished",
    "event_to_dict",
    "event_from_dict",
    # usage
    "UsageLimits",
    "RoundUsage",
    "TurnDiagnostics",
    "TurnError",
    "ChildTurn",
    "UsagePool",
    "current_usage_pool",
    "estimate_tokens",
    # memory
    "MemoryManager",
    "Fact",
    "memory_tools",
    "memory_skill",
    "FileMemoryBackend",
    # retrieval, scope and the context budget
    "Retriever",
    "Document",
    "Hit",
    "SQLiteRetriever",
    "EmbeddingRetriever",
    "rag_tools",
    "rag_skill",
    "RetrievalScope",
    "current_scope",
    "TokenBudget",
    "ContextPipeline",
    "retriever_step",
    # compaction
    "TierCompactor",
    # MCP
    "MCPServerConfig",
    # hooks and approval
    "HookResult",
    "ApprovalRequest",
    "ApprovalDecision",
    "AgentCallback",
    "ModelCall",
    "TracingAgentCallback",
    # errors
    "AgentError",
    "AgentConfigError",
    "ArgumentValidationError",
    "ToolNameCollisionError",
    "ToolDefinitionError",
    "OutputMissingError",
    "FactNotFoundError",
    "MemoryToolError",
    "UnknownVaultError",
    "MCPError",
    "MCPToolError",
    "SkillNameCollisionError",
    "SkillNotRegisteredError",
    "SkillActivationError",
    "SubagentNestingError",
]
