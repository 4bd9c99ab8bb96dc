"""One error tree: drawn once, complete, and what every public constructor raises for bad arguments."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest

import semif_agent
from semif_agent import errors
from semif_agent.errors import SemifError

PACKAGE = Path(semif_agent.__file__).parent
NOT_IMPORTED = (
    "semif_agent.sandbox._launcher",
    "semif_agent.sandbox._worker",
    "semif_agent.__main__",
    "semif_agent.starter.template",
)
PUBLIC_NAMESPACES = (
    "semif_agent",
    "semif_agent.agent",
    "semif_agent.agent.toolkits.mcp",
    "semif_agent.agent.toolkits.memory",
    "semif_agent.agent.toolkits.retrieval",
    "semif_agent.catalog",
    "semif_agent.contract",
    "semif_agent.engine",
    "semif_agent.forge",
    "semif_agent.llm",
    "semif_agent.loop",
    "semif_agent.routing",
    "semif_agent.sandbox",
    "semif_agent.starter",
    "semif_agent.tree",
    "semif_agent.workspace",
)


def import_everything() -> None:
    for module in pkgutil.walk_packages(semif_agent.__path__, "semif_agent."):
        if not module.name.startswith(NOT_IMPORTED):
            importlib.import_module(module.name)


def subclasses(root: type) -> set[type]:
    found, stack = set(), [root]
    while stack:
        for cls in stack.pop().__subclasses__():
            if cls.__module__.startswith("semif_agent.") and cls not in found:
                found.add(cls)
                stack.append(cls)
    return found


def parent_in_tree(cls: type) -> str:
    """The base a class hangs from in the tree: its first base that is one of ours (or the warning base)."""
    for base in cls.__bases__:
        if base.__module__.startswith("semif_agent.") or base is UserWarning:
            return base.__name__
    raise AssertionError(f"{cls.__name__} has no base of ours")


def drawn_edges() -> set[tuple[str, str]]:
    """(class, parent) for every class the errors module's docstring draws."""
    edges, stack = set(), []
    for line in (errors.__doc__ or "").splitlines():
        root = re.match(r"^    (\w+)\s", line + " ")
        node = re.match(r"^    ([│ ]*)[├└]── (\w+)", line)
        if root and not node:
            stack = [root.group(1)]
        elif node:
            depth = len(node.group(1)) // 4 + 1
            del stack[depth:]
            edges.add((node.group(2), stack[-1]))
            stack.append(node.group(2))
    return edges


def test_the_errors_module_draws_every_class_under_its_parent():
    import_everything()
    ours = subclasses(SemifError) | {w for w in subclasses(UserWarning)}
    actual = {(cls.__name__, parent_in_tree(cls)) for cls in ours}
    assert drawn_edges() == actual


def test_no_other_docstring_draws_the_tree():
    drawn_in = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if re.search(r"[├└]── (UserError|SemifError|ProviderError)\b", path.read_text(encoding="utf-8"))
    ]
    assert drawn_in == ["errors.py"]


def test_a_pydantic_error_becomes_ours_and_stays_a_validation_error():
    from semif_agent.agent import ArgumentValidationError, Skill

    with pytest.raises(ArgumentValidationError) as caught:
        Skill(name="two words", description="  ")
    error = caught.value
    assert isinstance(error, pydantic.ValidationError) and isinstance(error, ValueError)
    assert isinstance(error, errors.UserError) and isinstance(error.__cause__, pydantic.ValidationError)
    assert [e["loc"] for e in error.errors()] == [("name",), ("description",)]
    assert "\n" not in str(error) and str(error).startswith("Skill: name: skill name 'two words'")


def test_bad_numbers_and_types_name_the_argument():
    with pytest.raises(errors.InvalidArgumentError, match="max_retries must be a whole number, 0 or more, got -1"):
        errors.check_number("max_retries", -1, whole=True)
    with pytest.raises(TypeError, match="delay must be a number, 0 or more, got 'soon'"):
        errors.check_number("delay", "soon")
    with pytest.raises(errors.ArgumentTypeError, match="path must be a str or None, not int"):
        errors.check_type("path", 3, str, optional=True)
    errors.check_number("limit", None, optional=True)
    errors.check_type("path", None, str, optional=True)


# -- every exported constructor ------------------------------------------------


def _bad_calls() -> dict[str, Callable[[Path], Any]]:
    """Exported class -> a call with bad arguments (given a temporary folder)."""
    from semif_agent import agent, catalog, engine, llm, loop, routing, sandbox, tree
    from semif_agent.agent.toolkits import mcp
    from semif_agent.workspace import Workspace

    scripted = engine.ScriptedEngine
    return {
        # the kernel
        "DecisionLog": lambda tmp: semif_agent.DecisionLog(3),
        "DecisionRequest": lambda tmp: engine.DecisionRequest("state", "which?", []),
        "Option": lambda tmp: engine.Option(""),
        "Request": lambda tmp: semif_agent.Request(b"bytes"),
        "ScriptedEngine": lambda tmp: scripted("email"),
        "Workspace": lambda tmp: Workspace.load(tmp / "missing"),
        # the catalog
        "AgentSkillRuntime": lambda tmp: catalog.AgentSkillRuntime(None, catalog.SkillCatalog()),
        "JsonlTraceWriter": lambda tmp: catalog.JsonlTraceWriter(3),
        "MemoryTraceWriter": lambda tmp: catalog.MemoryTraceWriter(maxlen=-1),
        "NullTraceWriter": lambda tmp: catalog.NullTraceWriter(excerpt_chars=0),
        "TraceWriter": lambda tmp: catalog.TraceWriter(excerpt_chars="long"),
        "WorkspaceFS": lambda tmp: catalog.WorkspaceFS(3),
        # the sandbox
        "Channel": lambda tmp: sandbox.Channel(-1, 0),
        "SandboxLimits": lambda tmp: sandbox.SandboxLimits(memory_mb=0),
        "WorkerPool": lambda tmp: sandbox.WorkerPool(size=0),
        # routing and the tree
        "LeafScorer": lambda tmp: routing.LeafScorer("a tree", scripted()),
        "StrategySpec": lambda tmp: routing.StrategySpec("not a factory"),
        "TreeWalker": lambda tmp: tree.TreeWalker(tree.SkillTree(), "an engine"),
        "Router": lambda tmp: semif_agent.Router(tmp / "missing"),
        # the skill loop
        "BudgetedEngine": lambda tmp: loop.BudgetedEngine(scripted(), budget=-1),
        "SkillRunner": lambda tmp: loop.SkillRunner(str(tmp)),
        # model providers
        "FallbackProvider": lambda tmp: llm.FallbackProvider([]),
        "LLMEngine": lambda tmp: llm.LLMEngine(llm.ScriptedProvider(), mode="guess"),
        "LLMJudge": lambda tmp: llm.LLMJudge(llm.ScriptedProvider(), mode="guess"),
        "ModelPrice": lambda tmp: llm.ModelPrice(input=-1.0, output=1.0),
        "ModelRequest": lambda tmp: llm.ModelRequest.build([llm.SystemMessage(content="only a system prompt")]),
        "RetryPolicy": lambda tmp: llm.RetryPolicy(max_retries=-1),
        "RetryingProvider": lambda tmp: llm.RetryingProvider(llm.ScriptedProvider(), policy={"max_retries": 1}),
        "ScriptedProvider": lambda tmp: llm.ScriptedProvider("hello"),
        "ScriptedReply": lambda tmp: llm.ScriptedReply(tool_calls=["search"]),
        "ToolSpec": lambda tmp: llm.ToolSpec(name=""),
        # the agent
        "Agent": lambda tmp: agent.Agent(max_rounds=0),
        "FunctionToolset": lambda tmp: agent.FunctionToolset(["search"]),
        "ToolsetView": lambda tmp: agent.ToolsetView(instructions=3),
        "AgentTool": lambda tmp: agent.AgentTool(name="bad name", description="", input_schema={}, fn=print),
        "ApprovalDecision": lambda tmp: agent.ApprovalDecision(approved="perhaps"),
        "ApprovalRequest": lambda tmp: agent.ApprovalRequest(tool_call_id="c1", name="tool"),
        "ChildTurn": lambda tmp: agent.ChildTurn(tool_call_id="c1", name="sub", diagnostics=3),
        "CompactionFinished": lambda tmp: agent.CompactionFinished(),
        "CompactionStarted": lambda tmp: agent.CompactionStarted(),
        "ContextPipeline": lambda tmp: agent.ContextPipeline(["not a step"]),
        "DiscoverySettings": lambda tmp: agent.DiscoverySettings(prompt_budget=0),
        "Document": lambda tmp: agent.Document(id="d1", text="t", namespace="/a/../b"),
        "EmbeddingRetriever": lambda tmp: agent.EmbeddingRetriever(documents=[{"text": "no id"}]),
        "Fact": lambda tmp: agent.Fact(id="first", content="x"),
        "FileMemoryBackend": lambda tmp: agent.FileMemoryBackend(3),
        "Hit": lambda tmp: agent.Hit(document="d1"),
        "HookResult": lambda tmp: agent.HookResult(decision="maybe"),
        "MCPConnection": lambda tmp: mcp.MCPConnection("http://127.0.0.1:1/mcp"),
        "MCPServerConfig": lambda tmp: agent.MCPServerConfig(url="ftp://host/mcp"),
        "MemoryManager": lambda tmp: agent.MemoryManager(session=""),
        "RetrievalScope": lambda tmp: agent.RetrievalScope(include=("/a/..",)),
        "RoundFinished": lambda tmp: agent.RoundFinished(turn_id="t"),
        "RoundStarted": lambda tmp: agent.RoundStarted(turn_id="t", round="first"),
        "RoundUsage": lambda tmp: agent.RoundUsage(round="first"),
        "SQLiteRetriever": lambda tmp: agent.SQLiteRetriever(3),
        "Skill": lambda tmp: agent.Skill(name="two words", description="Spreadsheets."),
        "SkillRegistry": lambda tmp: agent.SkillRegistry(catalog="shared"),
        "SubagentDefinition": lambda tmp: agent.SubagentDefinition(name="two words", description="Helps."),
        "TextDelta": lambda tmp: agent.TextDelta(turn_id="t"),
        "TierCompactor": lambda tmp: agent.TierCompactor("a model name"),
        "TokenBudget": lambda tmp: agent.TokenBudget(total_tokens=0),
        "TracingAgentCallback": lambda tmp: agent.TracingAgentCallback(agent_name=7),
        "ToolFinished": lambda tmp: agent.ToolFinished(turn_id="t"),
        "ToolStarted": lambda tmp: agent.ToolStarted(turn_id="t"),
        "TurnDiagnostics": lambda tmp: agent.TurnDiagnostics(stopped_by="bored"),
        "TurnError": lambda tmp: agent.TurnError(kind="provider"),
        "TurnFinished": lambda tmp: agent.TurnFinished(turn_id="t", diagnostics="fine"),
        "TurnStarted": lambda tmp: agent.TurnStarted(turn_id=None),
        "UsageLimitReached": lambda tmp: agent.UsageLimitReached(turn_id="t", kind="patience"),
        "UsageLimits": lambda tmp: agent.UsageLimits(total_tokens_limit=0),
        "UsagePool": lambda tmp: agent.UsagePool(limits={"total_tokens_limit": 10}),
    }


# Exported classes no caller builds from its own values, each with where a bad value is caught instead.
NOT_BUILT_BY_CALLERS = {
    # protocols and bases to implement
    "AgentToolset": "a base class (a toolset of the wrong type is refused by Agent(toolsets=...): AgentConfigError)",
    "Engine": "a protocol",
    "BaseEngine": "a base class",
    "ThresholdEngine": "a base class",
    "LLMProvider": "a protocol",
    "BaseProvider": "a base class",
    "Retriever": "a protocol",
    "RoutingStrategy": "a protocol",
    "StrategyInputs": "built by create_strategy and handed to a strategy's factory",
    "AgentCallback": "a base class whose methods are all optional",
    "ModelCall": "built by the turn and handed to callbacks",
    # take no arguments
    "MCPServers": "no arguments",
    "SkillCatalog": "no arguments",
    # the skill contract: handed to bodies, or returned by them and checked by the runner (SkillContractError)
    "ActionContext": "built by the runner",
    "Prediction": "checked when predict returns it",
    "ActionResult": "checked when act returns it",
    # results the library builds and hands back
    "DecisionResult": "an engine's answer, checked against the request (DecisionError)",
    "CallResult": "a result",
    "LoadResult": "a result",
    "RefreshReport": "a result",
    "ScriptRunResult": "a result",
    "RunPaths": "built by Workspace.at_run_start from a workspace already checked",
    "WorkspaceSettings": "built by Workspace.load from semif.toml, or parse_settings from a mapping (WorkspaceError)",
    "SkillDescriptor": "built by the SKILL.md loader (SkillParseError)",
    "SkillDocument": "built by the parser",
    "SkillIssue": "a result",
    "SkillLocation": "a result",
    "ValidationReport": "a result",
    "SkillScriptContext": "built by the runtime for a script",
    "EnvironmentQuery": "built by the runtime for an environment skill's run",
    "EnvironmentRouter": "an interface host applications implement",
    "ErrorType": "an enumeration",
    "Category": "built by load_manifests (ManifestError)",
    "SkillManifest": "built by load_manifests (ManifestError)",
    "SkillTree": "built by load_manifests and the tree builder",
    "Route": "a result",
    "RoutedDecision": "a result",
    "CheckReport": "a result",
    "Violation": "a result",
    "Generated": "a result",
    "Assessment": "a result",
    "Changes": "a result",
    "Observation": "a result",
    "RunResult": "a result",
    "Response": "a model's answer",
    "Usage": "a model's answer",
    "TokenLogprob": "a model's answer",
    "TopLogprob": "a model's answer",
    "TextChunk": "a stream chunk",
    "ToolCallDelta": "a stream chunk",
    "UsageChunk": "a stream chunk",
    "StopChunk": "a stream chunk",
    "ToolCall": "a model's answer",
    "SystemMessage": "checked when a request is built (ModelRequest.build: InvalidModelRequestError)",
    "UserMessage": "checked when a request is built",
    "AssistantMessage": "checked when a request is built",
    "ToolResultMessage": "checked when a request is built",
    "ProviderOptions": "a base class a provider subclasses to declare its options; they are checked when a request is"
    " built (InvalidModelRequestError, UnsupportedOptionError)",
}


def exported_classes() -> dict[str, type]:
    """Every class the public namespaces export (exceptions aside), by name; a clash is told apart by ``@package``."""
    found: dict[str, type] = {}
    for namespace in PUBLIC_NAMESPACES:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            value = getattr(module, name)
            if not inspect.isclass(value) or issubclass(value, BaseException) or value in found.values():
                continue
            key = name if name not in found else f"{name}@{namespace.rsplit('.', 1)[-1]}"
            found[key] = value
    return found


def test_every_exported_class_is_either_checked_here_or_said_why_not():
    exported = set(exported_classes())
    checked, skipped = set(_bad_calls()), set(NOT_BUILT_BY_CALLERS)
    assert checked & skipped == set()
    assert exported - checked - skipped == set(), "a new export: add its bad call, or say why no caller builds it"
    assert (checked | skipped) - exported == set()


@pytest.mark.parametrize("name", sorted(_bad_calls()))
def test_an_exported_constructor_given_bad_arguments_raises_our_error(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    cwd = tmp_path / "cwd"  # a number taken for a path would become a file here (it once left a database named 5)
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    with pytest.raises(SemifError) as caught:
        _bad_calls()[name](tmp_path)
    message = str(caught.value)
    assert message and "\n" not in message
    assert list(cwd.iterdir()) == [], "refused before anything was written"
