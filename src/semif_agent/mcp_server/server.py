"""The MCP server over a :class:`~semif_agent.chooser.Router`: five tools, the SKILL.md skills as resources.

Tools (their docstrings are what a client's model reads, so they are short):
``find_skills``, ``load_skill``, ``read_skill_file``, ``run_skill`` and
``report_outcome``. Resources: each SKILL.md skill as ``skill://NAME``, its
files as ``skill://NAME/PATH``; when skills are added, edited or removed on
disk, the tree is read again and every connected client is told the
resource list changed.

Each tool but ``read_skill_file`` answers with structured content (a JSON
object, also given as its text for clients that read only text);
``read_skill_file`` answers with the file's text.

A caller's mistake (an unknown skill, a path outside a skill, an oversize
request, arguments that do not fit a tool's parameters) comes back as an MCP
error result with one clear line; the log keeps everything, and the server goes on serving.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib.metadata import version
from typing import Annotated, Any
from urllib.parse import quote, unquote

import anyio
from anyio.abc import TaskGroup
from mcp.server import NotificationOptions
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    InitializeRequestParams,
    InputRequiredResult,
    Resource,
    ResourceTemplate,
    TextContent,
    ToolAnnotations,
)
from pydantic import AnyUrl, ValidationError

from .._json import JsonObject
from ..chooser import Router
from ..chooser.router import DEFAULT_K
from ..errors import SemifError
from ..tree.manifests import SkillManifest
from ._watch import POLL_SECONDS, watch
from .admission import Admission, ServerBusy
from .tokens import ClientToken, taken_names, token_of

SERVER_NAME = "semif"
SCHEME = "skill://"
INSTRUCTIONS = (
    "Skills for many tasks live here. Before a task, call find_skills with the user's request; "
    "load_skill the best fit and follow it (or run_skill a code skill); report_outcome when you know how it went."
)
READ_ONLY = ToolAnnotations(read_only_hint=True)
Answer = Annotated[CallToolResult, dict[str, Any]]
"""A tool's answer: an object as structured content (its output schema an object), and as compact JSON text."""
MAX_CLIENTS = 256  # clients told when skills change; past this many, the longest idle is forgotten
STILL_SECONDS = 15.0  # how often a long load says it is still at it
BUSY_CODE = -32001  # the JSON-RPC error of a request answered busy (a tool call's is a tool error result)


class SkillServer(MCPServer[dict[str, object]]):
    """``semif mcp``: the workspace's skills through ``router``, watched on disk every ``watch_every`` seconds."""

    def __init__(self, router: Router, *, watch_every: float | None = POLL_SECONDS) -> None:
        self.router = router
        self.bus = InMemorySubscriptionBus()
        self.watch_every = watch_every
        # each connected client's latest request session (the SDK builds one per request, each reaching the
        # client's connection), by the connection's handshake parameters: the oldest dropped past MAX_CLIENTS
        self._sessions: OrderedDict[int, tuple[InitializeRequestParams, ServerSession]] = OrderedDict()
        # what the first find needs is built in a thread as the server starts (see warm): tools wait for it
        self.say: Callable[[str], None] | None = None  # told when it starts and when it is built (e.g. to stderr)
        self._ready: anyio.Event | None = None
        self._warm_lock = threading.Lock()
        self._warms = 0  # loads finished: a "still loading" line is never said after its load said it is ready
        # the runs clients asked for, in a task group the server owns while it runs (see _own_runs)
        self._runs: TaskGroup | None = None
        self.admission = Admission.from_settings(router.workspace.settings.mcp)
        self._listed: tuple[dict[str, SkillManifest], list[Resource]] | None = None  # resources, by the tree listed
        super().__init__(
            SERVER_NAME,
            version=version("semif-agent"),
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            subscriptions=self.bus,
            lifespan=_watching,
            middleware=[self._own_runs, self._admit, self._remember_session],
        )
        low = self._lowlevel_server  # the SDK keeps the capability flags on its low-level server only
        low.create_initialization_options = functools.partial(  # type: ignore[method-assign]  # advertise resources.listChanged in the handshake
            low.create_initialization_options, NotificationOptions(resources_changed=True)
        )
        _add_tools(self)

    def warm(self) -> int:
        """Build what a find needs (the tree, its new skills placed and stored, its index and the act threshold),
        switch to it whole (:meth:`Router.reload`) and return the number of skills: as the server starts, and again
        when the skills change on disk. On a fresh workspace of thousands of skills this takes a while: the server
        runs it in a thread as it starts, so a client's handshake is answered at once and its first tool call waits
        for it instead of building it again."""
        started = time.monotonic()
        with self._warm_lock:
            count = self.router.reload()  # the tree, its index and calibration, the act threshold: all a find needs
            self._warms += 1
        if self.say is not None:
            self.say(f"{count} skills ready ({time.monotonic() - started:.1f} s)")
        return count

    @property
    def loading(self) -> bool:
        """Whether the skills the server started loading are still loading (in a thread)."""
        return self._ready is not None and not self._ready.is_set()

    async def ready(self) -> None:
        """Wait until what :meth:`warm` builds as the server starts is built (at once when it was not started)."""
        if self._ready is not None:
            await self._ready.wait()

    async def _warm_in_background(self) -> None:
        assert self._ready is not None
        if self.say is not None:
            self.say(f"loading the skills of {self.router.workspace.root} (tools answer once they are ready)")
        try:
            async with self._saying_still(
                "loading the skills (a first start embeds each skill once: minutes for thousands)"
            ):
                await anyio.to_thread.run_sync(self.warm, abandon_on_cancel=True)
        except Exception:  # noqa: BLE001 (the first tool call builds it again, and says what failed in its answer)
            pass
        finally:
            self._ready.set()

    @asynccontextmanager
    async def _saying_still(self, doing: str) -> AsyncIterator[None]:
        """While the block runs, say every :data:`STILL_SECONDS` that it is still ``doing``, and for how long."""
        started, warms = time.monotonic(), self._warms

        async def keep_saying() -> None:
            while True:
                await anyio.sleep(STILL_SECONDS)
                if self.say is not None and self._warms == warms:  # the load's thread may be done, not yet joined
                    self.say(f"still {doing}: {time.monotonic() - started:.0f} s so far")

        async with anyio.create_task_group() as saying:
            saying.start_soon(keep_saying)
            try:
                yield
            finally:
                saying.cancel_scope.cancel()

    async def _own_runs(
        self, ctx: ServerRequestContext[dict[str, object], object], call_next: CallNext
    ) -> HandlerResult:
        """A ``run_skill`` call, from the moment it is received, runs in a task the server owns, not the request:
        a client that leaves (its request cancelled, its session ended) loses the answer, never the run, which
        goes on to its end and its outcome row. The server, stopping, waits for the runs it holds."""
        runs = self._runs
        if runs is None or ctx.method != "tools/call" or (ctx.params or {}).get("name") != "run_skill":
            return await call_next(ctx)
        ended: list[HandlerResult | Exception] = []
        done = anyio.Event()

        async def run() -> None:
            try:
                ended.append(await call_next(ctx))
            except Exception as exc:  # noqa: BLE001 (handed to the request, which answers it as it would have)
                ended.append(exc)
            finally:
                done.set()

        runs.start_soon(run)  # no await before it: a request cancelled as it arrives still starts its run
        await done.wait()
        [result] = ended
        if isinstance(result, Exception):
            raise result
        return result

    async def _admit(self, ctx: ServerRequestContext[dict[str, object], object], call_next: CallNext) -> HandlerResult:
        """A request (a handshake, a listing, a tool call...) waits its turn, or is answered ``busy:`` at once
        (:mod:`.admission`). Inside :meth:`_own_runs`: a run's place is held by the run, not by the request a client
        may leave."""
        if ctx.request_id is None or ctx.method == "ping":  # notifications and pings are never held
            return await call_next(ctx)
        run = ctx.method == "tools/call" and (ctx.params or {}).get("name") == "run_skill"
        client = _client(ctx) or self.router.client
        token = _token(ctx)
        rate = token.rate if token is not None else None
        try:
            if ctx.method == "resources/list":  # a listing of every skill: counted, but quick, it takes no place
                self.admission.counted(client, rate=rate)
            elif ctx.method in ("tools/call", "resources/read"):
                async with self.admission.admitted(client, run=run, rate=rate):
                    return await call_next(ctx)
        except ServerBusy as exc:
            if ctx.method == "tools/call":
                return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
            raise MCPError(BUSY_CODE, str(exc)) from None
        return await call_next(ctx)

    async def _remember_session(
        self, ctx: ServerRequestContext[dict[str, object], object], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        params = ctx.session.client_params  # set once the handshake is done, and the same for every request after
        if params is not None:
            self._sessions[id(params)] = (params, ctx.session)
            self._sessions.move_to_end(id(params))
            while len(self._sessions) > MAX_CLIENTS:
                self._sessions.popitem(last=False)
        return result

    async def call_tool(
        self, name: str, arguments: dict[str, object], context: Context[dict[str, object], object] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """The SDK's call, with arguments that do not fit a tool's parameters said in one line (see :func:`argument_error`)."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(f"Error executing tool {name}: {argument_error(exc.__cause__)}") from exc.__cause__
            raise

    async def skills_changed(self) -> None:
        """Read the tree (and the learned router) again, in a thread while the old tree goes on answering, switch to
        it in one step, and tell every client the resource list changed."""
        await self.ready()
        if self.say is not None:
            self.say("skills changed on disk: reading them again (the skills as they were answer meanwhile)")
        async with self._saying_still("reading the changed skills"):
            await anyio.to_thread.run_sync(self.warm)
        await self.bus.publish(ResourcesListChanged())  # clients of the listen-stream protocol
        for _, session in list(self._sessions.values()):  # clients of the handshake protocol
            await session.send_resource_list_changed()  # best effort: a client gone meanwhile is skipped

    # -- resources -------------------------------------------------------------

    async def list_resources(self) -> list[Resource]:
        await self.ready()
        skills = await anyio.to_thread.run_sync(lambda: self.router.skills)
        listed = self._listed
        if listed is None or listed[0] is not skills:  # made once a tree: the list is the same until it changes
            resources = [
                Resource(
                    uri=skill_uri(leaf.name), name=leaf.name, description=leaf.description, mime_type="text/markdown"
                )
                for leaf in skills.values()
                if leaf.is_skill_md
            ]
            listed = self._listed = (skills, resources)
        return list(listed[1])

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return [
            ResourceTemplate(
                uri_template=SCHEME + "{name}/{path}",
                name="skill file",
                description="A file of a SKILL.md skill's folder (load_skill lists them).",
            )
        ]

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[dict[str, object], object] | None = None
    ) -> list[ReadResourceContents]:
        name, path = parse_skill_uri(str(uri))
        await self.ready()
        try:
            text = self.router.read_file(name, path or "SKILL.md")
        except SemifError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        mime = "text/markdown" if (path or "SKILL.md").endswith(".md") else "text/plain"
        return [ReadResourceContents(content=text, mime_type=mime)]


@asynccontextmanager
async def _watching(server: MCPServer[dict[str, object]]) -> AsyncIterator[dict[str, object]]:
    """While the server runs, watch its workspace's skills (when it has a period to watch at)."""
    assert isinstance(server, SkillServer)
    async with anyio.create_task_group() as runs:  # never cancelled: stopping waits for the runs asked for
        server._runs = runs
        try:
            async with anyio.create_task_group() as group:
                server._ready = anyio.Event()
                group.start_soon(server._warm_in_background)
                if server.watch_every:
                    group.start_soon(
                        functools.partial(watch, every=server.watch_every),
                        server.router.workspace,
                        server.skills_changed,
                    )
                try:
                    yield {}
                finally:
                    group.cancel_scope.cancel()
        finally:
            server._runs = None


_EXPECTED = {
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "bool": "true or false",
    "dict": "an object",
    "list": "a list",
}


def argument_error(error: ValidationError) -> str:
    """A tool's arguments that do not fit its parameters, as one line: "k must be an integer, not \"many\"",
    "request is missing" (pydantic's own text spans several lines and names its internal model)."""
    said = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "the arguments"
        kind = str(problem["type"])
        expected = _EXPECTED.get(kind.split("_")[0]) if kind.endswith(("_type", "_parsing")) else None
        if kind == "missing":
            said.append(f"{where} is missing")
        elif kind == "extra_forbidden":
            said.append(f"{where} is not an argument of this tool")
        elif expected is not None:
            said.append(f"{where} must be {expected}, not {_shown(problem.get('input'))}")
        else:
            message = str(problem["msg"])
            said.append(f"{where}: {message[:1].lower()}{message[1:]}")
    return "; ".join(said)


def _shown(value: object) -> str:
    """A caller's value as JSON (what the caller sent), cut short."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def skill_uri(name: str, path: str | None = None) -> str:
    """``skill://NAME`` (or ``skill://NAME/PATH``), the name percent-encoded."""
    return SCHEME + quote(name, safe="") + (f"/{path}" if path else "")


def parse_skill_uri(uri: str) -> tuple[str, str | None]:
    """The skill name and the file path (None: its SKILL.md) of a ``skill://`` URI."""
    if not uri.startswith(SCHEME):
        raise ResourceNotFoundError(f"not a skill resource: {uri} (they start with {SCHEME})")
    name, _, path = uri[len(SCHEME) :].partition("/")
    return unquote(name), unquote(path) or None


def _session(ctx: Context[dict[str, object], object]) -> int | None:
    """The client's connection, as its handshake parameters (one object per connection) tell it apart."""
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError):
        return None
    return id(params) if params is not None else None


AnyContext = Context[dict[str, object], object] | ServerRequestContext[dict[str, object], object]
"""A tool's context, or the context a middleware sees: both reach the request and the client's session."""


def _request(ctx: AnyContext) -> object:
    """The HTTP request of the call (None: over stdio, or outside a request)."""
    try:
        return ctx.request if isinstance(ctx, ServerRequestContext) else ctx.request_context.request
    except (AttributeError, ValueError):
        return None


def _token(ctx: AnyContext) -> ClientToken | None:
    """The client token the request came with (None: none, over stdio, the shared token, or outside a request)."""
    return token_of(_request(ctx))


def _client(ctx: AnyContext) -> str | None:
    """The client's name: its token's when the request came with a client token (``semif mcp token``), never then
    the name it gives itself; else the name from the MCP handshake, when it gave one (``shared:NAME`` when a
    shared-token client names itself after a token's client: it is not that client)."""
    token = _token(ctx)
    if token is not None:
        return token.name
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError):
        params = None
    if params is None and isinstance(ctx, ServerRequestContext) and ctx.method == "initialize":
        params = _handshake(ctx.params)
    name = params.client_info.name if params is not None and params.client_info else None
    return f"shared:{name}" if name is not None and name in taken_names(_request(ctx)) else name


def _handshake(params: object) -> InitializeRequestParams | None:
    """The handshake's parameters as a client sent them, when they are valid (None otherwise)."""
    try:
        return InitializeRequestParams.model_validate(params)
    except ValidationError:
        return None


def _answer(value: JsonObject) -> CallToolResult:
    """``value`` as structured content, and as its compact JSON text for clients that read only text."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)


def _add_tools(server: SkillServer) -> None:
    router = server.router

    @server.tool(annotations=READ_ONLY)
    async def find_skills(request: str, ctx: Context[dict[str, object], object], k: int = DEFAULT_K) -> Answer:
        """The k skills likeliest to fit a request, best first, and a choice_id. Call it before a task.
        best: where a run would go ("none": no skill fits); handed_back and reason: why. If handed_back, do
        not run best."""
        await server.ready()
        with _tool_errors():
            found = await router.afind(request, k, client=_client(ctx), session=_session(ctx))
        return _answer(found.to_dict())

    @server.tool(annotations=READ_ONLY)
    async def load_skill(name: str, ctx: Context[dict[str, object], object], choice_id: str | None = None) -> Answer:
        """Load a skill to follow: a SKILL.md skill's instructions and file list, or a code skill's manifest.
        Pass the find's choice_id: the load is then your pick for that find's request."""
        await server.ready()
        with _tool_errors():
            loaded = await router.aload(name, choice_id=choice_id, client=_client(ctx), session=_session(ctx))
        return _answer(loaded.to_dict())

    @server.tool(annotations=READ_ONLY, structured_output=False)  # the file's text, as it is
    async def read_skill_file(name: str, path: str) -> str:
        """Read a file of a SKILL.md skill's folder, by its path relative to the folder."""
        await server.ready()
        with _tool_errors():
            return router.read_file(name, path)

    @server.tool()
    async def run_skill(
        name: str, request: str, ctx: Context[dict[str, object], object], choice_id: str | None = None
    ) -> Answer:
        """Run a skill on a request, confined and logged: a code skill acts; a SKILL.md skill runs its script
        where allowed, else gives its instructions. Returns the result, changes and run_id. Pass the find's
        choice_id."""
        # A client that leaves mid-run, or while the skills still load: the run asked for still runs, logged (the
        # server runs it in a task of its own, see _own_runs; shielded too, for a server run without its lifespan).
        with _tool_errors(), anyio.CancelScope(shield=True):
            await server.ready()
            outcome = await router.arun(name, request, choice_id=choice_id, client=_client(ctx), session=_session(ctx))
        return _answer(outcome.to_dict())

    @server.tool()
    async def report_outcome(
        id: str,
        outcome: str,
        ctx: Context[dict[str, object], object],
        skill: str | None = None,
        note: str | None = None,
    ) -> Answer:
        """Say how a run or a find went: outcome "success" or "failure"; skill: the one that should have been
        used ("none": no skill fits). id: a run_id or choice_id."""
        await server.ready()
        with _tool_errors():
            labelled = await router.areport(id, outcome, skill=skill, note=note, client=_client(ctx))
        return _answer({"labelled": labelled})


@contextmanager
def _tool_errors() -> Iterator[None]:
    """Turn a caller's mistake (any :class:`SemifError`) into a tool error: one line, the server serving on."""
    try:
        yield
    except SemifError as exc:
        raise ToolError(str(exc)) from None
