"""The web application: runs, one run, the tree, quality, training, the runs to label; writes guarded by a token.

Pages are rendered on the server from Jinja2 templates with autoescaping on,
so nothing from a request, a skill or the log becomes markup. Every page
carries the server's random token; a POST without it, or from another
origin, is refused. Responses forbid framing and inline scripts.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.datastructures import FormData, MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._text import percent
from ..errors import SemifError, UserError
from ..loop.undo import DEFAULT_REASON, reason_said, undo_logged_run, undo_state
from ..records import DecisionLog, label_row, login_name
from ..records.rows import LABEL_OUTCOMES, UNDO_SHOWN
from ..records.to_label import to_label
from ..workspace import Workspace
from . import charts
from .hosts import LOOPBACK_HOSTS
from .index import PAGE_SIZE, CallIndex, LogIndex, RunFilter
from .quality import quality
from .run_view import resolve, run_view
from .training import TrainingJob
from .tree_view import TreeCache

LIVE_POLL_SECONDS = 0.5
LIVE_HEARTBEAT_SECONDS = 15.0
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make the browser send Origin: null on our own forms
}


@dataclass
class UiState:
    """What the server holds: the workspace, its indexed logs, its tree, the training job and the token."""

    workspace: Workspace
    index: LogIndex
    calls: CallIndex
    tree: TreeCache
    training: TrainingJob
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    by: str = ""

    def refresh(self) -> None:
        self.index.refresh()
        self.calls.refresh()


def create_app(
    workspace: Workspace, *, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS, index: LogIndex | None = None
) -> Starlette:
    """The application for ``workspace``, answering only requests whose Host is one of ``allowed_hosts``.

    A request naming any other host (a page of another site that rebound its
    name to this address) gets a 400 before any page, and so any token, is served.
    """
    index = index or LogIndex(workspace.log_path)
    state = UiState(
        workspace,
        index,
        CallIndex(workspace.model_calls_path),
        TreeCache(workspace),
        TrainingJob(workspace, lambda: [record for _, record in index.records()]),
        by=login_name(),
    )
    state.refresh()
    templates = Environment(
        loader=PackageLoader("semif_agent.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    templates.filters.update(
        percent=percent,
        when=_when,
        accuracy_point=lambda period: (period[0], period[2] / period[1] if period[1] else 0.0),
        confusion_item=lambda pair: (f"{pair[0]} \u2192 {pair[1]}", pair[2]),
    )
    templates.globals.update(
        charts=charts, token=state.token, outcomes=LABEL_OUTCOMES, reason_said=reason_said, undo_shown=UNDO_SHOWN
    )
    pages = _Pages(state, templates)
    routes = [
        Route("/", pages.runs),
        Route("/runs/{run_id}", pages.run),
        Route("/runs/{run_id}/label", pages.label, methods=["POST"]),
        Route("/runs/{run_id}/unlabel", pages.unlabel, methods=["POST"]),
        Route("/runs/{run_id}/undo", pages.undo, methods=["POST"]),
        Route("/to-label", pages.to_label),
        Route("/tree", pages.tree),
        Route("/quality", pages.quality),
        Route("/train", pages.train_page),
        Route("/train", pages.train_start, methods=["POST"]),
        Route("/api/train", pages.train_status),
        Route("/events", pages.events),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", StaticFiles(packages=[("semif_agent.ui", "static")]), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={404: pages.not_found})
    app.state.ui = state
    return app


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response (no framing, no inline script or style, no sniffing)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _Pages:
    def __init__(self, state: UiState, templates: Environment) -> None:
        self.state = state
        self.templates = templates

    def render(self, name: str, code: int = 200, **values: object) -> HTMLResponse:
        html = self.templates.get_template(name).render(workspace=self.state.workspace.root, **values)
        return HTMLResponse(html, status_code=code)

    async def runs(self, request: Request) -> Response:
        self.state.refresh()
        query = request.query_params
        wanted = RunFilter(**{name: query.get(name, "").strip() for name in RunFilter.__dataclass_fields__})
        page = _positive(query.get("page"), 1)
        rows, total = self.state.index.page(wanted, page)
        pages = max(1, -(-total // PAGE_SIZE))
        values: dict[str, Any] = {
            "rows": rows,
            "total": total,
            "page": page,
            "pages": pages,
            "wanted": wanted,
            "choices": self.state.index.choices(),
            "version": self.state.index.version,
            "query": {k: v for k, v in query.items() if k not in ("page", "partial") and v},
        }
        if query.get("partial"):
            return self.render("_runs_table.html", **values)
        return self.render("runs.html", active="runs", **values)

    async def run(self, request: Request, *, error: str | None = None, code: int = 200) -> Response:
        self.state.refresh()
        try:
            run_id = resolve(self.state.index, request.path_params["run_id"])
        except UserError as exc:
            return self.render("error.html", code=404, message=str(exc))
        if run_id != request.path_params["run_id"]:
            return RedirectResponse(f"/runs/{run_id}", status_code=303)
        view = run_view(self.state.index, self.state.calls, self.state.workspace.root, run_id)
        return self.render(
            "run.html",
            code=code,
            active="runs",
            view=view,
            error=error,
            skills=sorted(self.state.tree.get().skills),
            by=self.state.by,
            undo=undo_state(self.state.workspace, run_id, undone=view.record.undone),
        )

    async def label(self, request: Request) -> Response:
        form = await request.form()
        refused = self._refused(request, form)
        if refused is not None:
            return refused
        choice = str(form.get("skill_choice", "")).strip()
        skill = str(form.get("skill", "")).strip() or None if choice == "skill" else None
        outcome = str(form.get("outcome", "")).strip() or None
        try:
            if choice == "skill" and skill is None:
                raise UserError("name the skill the request should have gone to")
            if skill is not None:
                self.state.tree.check_skill(skill)
            self.state.refresh()
            run_id = resolve(self.state.index, request.path_params["run_id"])
            row = label_row(
                run_id,
                by=str(form.get("by") or self.state.by),
                skill=skill,
                no_skill=choice == "none",
                outcome=outcome,
                note=str(form.get("note") or "") or None,
            )
            await asyncio.to_thread(self._log().append, row)
        except SemifError as exc:
            return await self.run(request, error=str(exc), code=400)
        return RedirectResponse(f"/runs/{row.run_id}#label", status_code=303)

    async def unlabel(self, request: Request) -> Response:
        """Take back the people's labels of the run (``semif label --undo``); refused without the page's token."""
        form = await request.form()
        refused = self._refused(request, form)
        if refused is not None:
            return refused
        try:
            self.state.refresh()
            run_id = resolve(self.state.index, request.path_params["run_id"])
            await asyncio.to_thread(self._log().take_back_labels, run_id, by=str(form.get("by") or self.state.by))
        except SemifError as exc:
            return await self.run(request, error=str(exc), code=400)
        return RedirectResponse(f"/runs/{run_id}#label", status_code=303)

    async def undo(self, request: Request) -> Response:
        """Take the run's changes back (``semif undo``), with the reason its button gives (``route`` or ``result``,
        else result) and ``force=1`` where files block it; refused without the page's token, like a label."""
        form = await request.form()
        refused = self._refused(request, form)
        if refused is not None:
            return refused
        try:
            self.state.refresh()
            run_id = resolve(self.state.index, request.path_params["run_id"])
            log = self._log()
            by = str(form.get("by") or self.state.by)
            reason = str(form.get("reason") or DEFAULT_REASON)
            force = str(form.get("force") or "") == "1"
            await asyncio.to_thread(
                undo_logged_run, self.state.workspace, log, run_id, by=by, reason=reason, force=force
            )
        except SemifError as exc:
            return await self.run(request, error=str(exc), code=400)
        return RedirectResponse(f"/runs/{run_id}#undo", status_code=303)

    async def to_label(self, request: Request) -> Response:
        self.state.refresh()
        runs = self.state.index.records()
        margins = {run.run_id: run.margin for run, _ in runs if run.margin is not None}
        queue = to_label([record for _, record in runs], margins)
        return self.render("to_label.html", active="to-label", queue=queue[:PAGE_SIZE], total=len(queue))

    def _log(self) -> DecisionLog:
        """The workspace's decision log, written as its ``[log]`` settings say (``fsync``)."""
        workspace = self.state.workspace
        return DecisionLog.for_workspace(workspace)

    def _refused(self, request: Request, form: FormData) -> Response | None:
        """A 403 for a write without this server's token, or sent from another site; None when it may go ahead."""
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            return PlainTextResponse("refused: this request came from another site", status_code=403)
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return PlainTextResponse("refused: this request came from another site", status_code=403)
        token = str(form.get("token") or request.headers.get("x-semif-token") or "")
        if not secrets.compare_digest(token.encode(), self.state.token.encode()):
            return PlainTextResponse("refused: the page's token is missing or stale; reload the page", status_code=403)
        return None

    async def tree(self, request: Request) -> Response:
        self.state.refresh()
        query = request.query_params.get("q", "").strip()
        chosen = request.query_params.get("skill", "").strip()
        view = self.state.tree.view(query, chosen, self.state.index)
        return self.render("tree.html", active="tree", view=view, q=query)

    async def quality(self, request: Request) -> Response:
        self.state.refresh()
        engine = request.query_params.get("engine", "").strip()
        figures = quality(self.state.index.records(), engine=engine)
        return self.render(
            "quality.html", active="quality", q=figures, engine=engine, engines=self.state.index.choices()["engines"]
        )

    async def train_page(self, request: Request) -> Response:
        return self.render("train.html", active="train", status=self.state.training.status)

    async def train_start(self, request: Request) -> Response:
        form = await request.form()
        refused = self._refused(request, form)
        if refused is not None:
            return refused
        self.state.refresh()
        self.state.training.start()
        return RedirectResponse("/train", status_code=303)

    async def train_status(self, request: Request) -> Response:
        return JSONResponse(self.state.training.status.to_dict())

    async def events(self, request: Request) -> Response:
        """Server-sent events: the log's version, each time rows were appended (and a comment now and then)."""

        async def stream() -> AsyncIterator[str]:
            seen, quiet = -1, 0.0
            while not await request.is_disconnected():
                self.state.refresh()  # on the event loop, like every page: the index changes on one thread only
                version = self.state.index.version
                if version != seen:
                    seen, quiet = version, 0.0
                    yield f"event: log\ndata: {version}\n\n"
                elif quiet >= LIVE_HEARTBEAT_SECONDS:
                    quiet = 0.0
                    yield ": still here\n\n"
                await asyncio.sleep(LIVE_POLL_SECONDS)
                quiet += LIVE_POLL_SECONDS

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def not_found(self, request: Request, exc: Exception) -> Response:
        return self.render("error.html", code=404, message=f"nothing at {request.url.path}")


def _positive(value: str | None, default: int) -> int:
    try:
        return max(1, int(value or default))
    except ValueError:
        return default


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if isinstance(ts, (int, float)) else ""
