"""The settings a run uses, resolved once: what the caller passes over the workspace's, validated in one place.

Each value comes from the first of: the argument (the command line), ``semif.toml``
(``[engine]``, ``[routing]``, ``[skills]``, ``[log]``), the routing ``semif eval --tune``
stored for the engine in use, the default. :class:`RunSettings` holds the names and
numbers; its ``build_*`` methods make the engine, the judge, the tree, the routing
strategy and the log from them, the same way for every caller.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..engine.base import Engine, embedding_function
from ..errors import InvalidArgumentError
from ..workspace import Workspace
from ..workspace.settings import (
    Flag,
    Must,
    Number,
    Positive,
    RoutingSettings,
    Seconds,
    Share,
    SkillsSettings,
    Text,
    what_it_must_be,
)

if TYPE_CHECKING:
    from ..records import DecisionLog
    from ..routing.learned import LearnedHead
    from ..routing.strategies import RoutingStrategy
    from ..tree.tree import SkillTree

_ROUTING_VALUES = ("threshold", "temperature")


@dataclass(frozen=True)
class RunSettings:
    """What a run routes, decides, judges and logs with; make it with :meth:`resolve`."""

    workspace: Workspace | None  # None: a bare tree (``semif eval --tree``), with no workspace settings
    engine: str  # a registered name, with its argument when it takes one (``scripted:FILE``)
    engine_table: Mapping[str, object] = field(repr=False, compare=False)  # ``[engine]``, the model, ``[provider]``
    strategy: str | None  # None: the engine's default (see :func:`default_strategy`)
    threshold: float | None
    temperature: float | None
    judge: str | None  # an engine name; None: the engine, or the LLM judge for an LLM engine
    log: bool  # whether runs append rows (the log's place and fsync are the workspace's)
    allow_scripts: bool
    timeout: float
    warm_processes: bool = True  # runs of one body may share a confined process, put back between runs
    act_threshold: float | None = None  # a writing skill acts when the route is this sure (None: measured/default)
    given: frozenset[str] = frozenset()  # which routing values the caller gave: the engine takes them as they are
    model_note: str | None = None  # the model chosen for the caller, in words, to say once
    # the local engine's encoder: "tuned" (the workspace's data/encoder), else the installed one
    encoder: str | None = None

    @classmethod
    def resolve(
        cls,
        workspace: Workspace | None,
        *,
        engine: str | Engine | None = None,
        model: str | None = None,
        judge: str | None = None,
        strategy: str | None = None,
        threshold: float | None = None,
        temperature: float | None = None,
        log: bool | None = None,
        allow_scripts: bool | None = None,
        timeout: float | None = None,
        act_threshold: float | None = None,
    ) -> RunSettings:
        """The settings of ``workspace`` with the values given instead; a bad value is one :class:`UserError` line.

        ``engine`` is a name, or an engine built already (its name picks the routing tuned for it).
        ``model`` implies the ``llm`` engine; an ``llm`` engine no setting gives a model gets the model of
        the provider the environment (or semif.toml) sets up, said in :attr:`model_note`.
        """
        built = None if engine is None or isinstance(engine, str) else engine
        engine_name = built.name if built is not None else engine if isinstance(engine, str) else None
        _check_given(
            engine=engine_name,
            model=model,
            judge=judge,
            strategy=strategy,
            threshold=threshold,
            temperature=temperature,
            timeout=timeout,
            act_threshold=act_threshold,
            log=log,
            allow_scripts=allow_scripts,
        )
        settings = workspace.settings if workspace is not None else None
        table = workspace.engine_settings if workspace is not None else {}
        if model:
            engine_name = engine_name or "llm"
        name = engine_name or (settings.engine.name if settings is not None else None) or _default_engine_name()
        if built is None:
            from_file = workspace is not None and not engine_name and name == workspace.settings.engine.name
            _check_engine_name(name, f"{workspace.settings_file}: [engine] name" if workspace and from_file else None)
        if judge is not None:
            _check_engine_name(judge)
        model_note = None
        if model or name == "llm":
            table, model_note = model_settings(table, model)
        routing = _routing_settings(workspace, name.split(":")[0])
        strategy = strategy or routing.strategy
        _check_strategy(strategy, workspace)
        skills = settings.skills if settings is not None else SkillsSettings()
        logs = settings is not None and settings.log.enabled
        return cls(
            workspace=workspace,
            engine=name,
            engine_table=table,
            strategy=strategy,
            threshold=threshold if threshold is not None else routing.threshold,
            temperature=temperature if temperature is not None else routing.temperature,
            judge=judge,
            log=logs if log is None else log,
            allow_scripts=skills.allow_scripts if allow_scripts is None else allow_scripts,
            timeout=float(timeout if timeout is not None else skills.timeout),
            warm_processes=skills.warm_processes,
            act_threshold=act_threshold if act_threshold is not None else routing.act_threshold,
            given=_given(threshold, temperature),
            model_note=model_note,
            encoder=routing.encoder,
        )

    def routed(self, strategy: str, threshold: float | None, temperature: float | None) -> RunSettings:
        """These settings routing with ``strategy`` at ``threshold`` and ``temperature``, as if given (None: the default)."""
        _check_strategy(strategy, None)
        _check_given(threshold=threshold, temperature=temperature)
        given = _given(threshold, temperature)
        return dataclasses.replace(self, strategy=strategy, threshold=threshold, temperature=temperature, given=given)

    def measured(self, strategy: str) -> RunSettings:
        """These settings routing with ``strategy``: the routing values not given apply only to the workspace's own."""
        own = strategy == self.strategy
        values = [getattr(self, k) if own or k in self.given else None for k in _ROUTING_VALUES]
        return self.routed(strategy, *values)

    @property
    def model_configured(self) -> bool:
        """Whether a model decides or is set up to (``--model``, ``[engine] model``, ``[provider] model``)."""
        from ..llm.settings import provider_table

        return bool(self.engine_table.get("model") or provider_table(self.engine_table).get("model"))

    def engine_options(self) -> dict[str, object]:
        """What :func:`create_engine` gets: the engine table, with the routing values the engine applies itself.

        Values given are the engine's; the workspace's fill in what ``[engine]`` leaves unset where the
        strategy cuts by the engine's own scores (the chain's threshold, the chain's and shortlist's temperature).
        """
        options = dict(self.engine_table)
        if self.encoder == "tuned" and self.workspace is not None and self.engine.split(":")[0] == "local":
            from ..routing.encoder.store import encoder_folder

            options["encoder"] = str(encoder_folder(self.workspace))
        for key in _ROUTING_VALUES:
            value = getattr(self, key)
            if value is None:
                continue
            if key in self.given:
                options[key] = value
            elif self.strategy == "chain" or (key == "temperature" and self.strategy == "shortlist"):
                options.setdefault(key, value)
        return options

    def build_engine(self) -> Engine:
        """The engine that answers routing and the skills' decisions."""
        from ..engine.registry import create_engine

        return create_engine(self.engine, self.engine_options())

    def build_judge(self, engine: Engine) -> Engine:
        """The engine that assesses runs: :attr:`judge`, else the LLM judge for an LLM ``engine``, else ``engine``.

        The judge routes nothing: it gets the engine table without the routing values.
        """
        if self.judge is not None:
            from ..engine.registry import create_engine

            return create_engine(self.judge, self.engine_table)
        if engine.name != "llm":
            return engine
        from ..llm.judge import create_judge

        return create_judge(self.engine_table)

    def build_tree(self, engine: Engine | None = None, **options: Any) -> SkillTree:
        """The workspace's tree, embedded with ``engine`` when it embeds (``options``: :meth:`SkillTree.for_workspace`'s)."""
        from ..tree.tree import SkillTree

        workspace = self.needs_workspace("a tree")
        return SkillTree.for_workspace(workspace, embed=embedding_function(engine), **options)

    def build_log(self) -> DecisionLog:
        """The decision log rows are appended to (one that writes nothing when logging is off)."""
        from ..records import DecisionLog

        return DecisionLog.for_workspace(self.needs_workspace("a log"), enabled=self.log)

    def build_strategy(self, tree: SkillTree, engine: Engine, *, router: LearnedHead | None = None) -> RoutingStrategy:
        """The routing strategy over ``tree``; ``learned`` takes ``router``, else the workspace's trained one.

        Without a trained router that fits the tree, ``learned`` routes the untrained way, said once as a warning.
        """
        from ..routing.create import create_strategy, strategy_spec

        name = self.strategy or default_strategy(engine)
        if router is None and "router" in strategy_spec(name).needs:
            router = self._stored_router(tree, engine)
            if router is None:
                name = default_strategy(engine)
        return create_strategy(
            name, tree, engine, threshold=self.threshold, temperature=self.temperature, router=router
        )

    def _stored_router(self, tree: SkillTree, engine: Engine) -> LearnedHead | None:
        from ..routing.learned import RouterMismatch, stored_router

        try:
            router = stored_router(self.needs_workspace("a learned router"))
            if router is None:
                raise RouterMismatch("the workspace has no learned router (semif train makes one)")
            check_router(router, tree, engine)
        except RouterMismatch as exc:
            warnings.warn(f"{exc}; routing the untrained way meanwhile", RuntimeWarning, stacklevel=4)
            return None
        return router

    def needs_workspace(self, what: str) -> Workspace:
        """The workspace, for ``what``; a one-line error when these settings have none."""
        if self.workspace is None:
            raise InvalidArgumentError(f"{what} needs a workspace; these settings have none")
        return self.workspace


def check_router(router: LearnedHead, tree: SkillTree, engine: Engine) -> None:
    """Raise :class:`~..routing.learned.RouterMismatch` when ``router`` cannot route ``tree`` with ``engine``'s
    embeddings (the local engine's, as these settings build it, when ``engine`` is another: it scores the leaves)."""
    from ..engine.registry import create_engine

    router.check(tree, engine if engine.name == "local" else create_engine("local"))


def default_strategy(engine: Engine) -> str:
    """``examples`` for engines that can score many options at once (local, lexical), else the chain."""
    from ..routing.scoring import can_score

    return "examples" if can_score(engine) else "chain"


def model_settings(table: Mapping[str, object], model: str | None = None) -> tuple[dict[str, object], str | None]:
    """``table`` deciding with ``model``; when neither it nor ``table`` names one, the default model and, in words, why."""
    from ..llm.settings import default_model, provider_table

    table = dict(table)
    if model:
        table["model"] = model
    if table.get("model") or provider_table(table).get("model"):
        return table, None
    choice = default_model(table)
    table["model"] = choice.model
    return table, choice.describe()


def _default_engine_name() -> str:
    from ..engine.registry import default_engine_name

    return default_engine_name()


def _routing_settings(workspace: Workspace | None, engine: str) -> RoutingSettings:
    if workspace is None:
        return RoutingSettings()
    from ..routing.tune import routing_settings

    return routing_settings(workspace, engine)


def _check_engine_name(name: str, where: str | None = None) -> None:
    """Refuse an engine no one registered; ``where`` names the setting it came from (``semif.toml: [engine] name``)."""
    from ..engine.registry import engine_names

    base = name.split(":")[0]
    if base not in engine_names():
        said = f"{where}: " if where else ""
        raise InvalidArgumentError(f"{said}unknown engine {base!r} (known: {', '.join(engine_names())})")


def _check_strategy(name: str | None, workspace: Workspace | None) -> None:
    from ..routing.names import STRATEGIES, strategy_names

    if name is not None and name not in STRATEGIES and name not in (known := strategy_names()):
        where = f"{workspace.settings_file}: [routing] strategy" if workspace is not None else "strategy"
        raise InvalidArgumentError(f"{where} must be one of {', '.join(known)}, not {name!r}")


class _Given(BaseModel):
    """What a caller may give a run instead of the workspace's settings, typed as ``semif.toml`` types them.

    Only ``temperature`` is stricter than ``[routing]``'s (a positive number), and the names say what they name.
    """

    model_config = ConfigDict(strict=True)

    engine: Annotated[Text, Must("an engine name")] | None = None
    model: Annotated[Text, Must("a model (PROVIDER/MODEL)")] | None = None
    judge: Annotated[Text, Must("an engine name")] | None = None
    strategy: Annotated[str, Must("a strategy name")] | None = None
    threshold: Number | None = None
    temperature: Positive | None = None
    timeout: Seconds | None = None
    act_threshold: Share | None = None
    log: Flag | None = None
    allow_scripts: Flag | None = None


def _given(threshold: float | None, temperature: float | None) -> frozenset[str]:
    """The names of the routing values given (not None)."""
    return frozenset(k for k, v in zip(_ROUTING_VALUES, (threshold, temperature), strict=True) if v is not None)


def _check_given(**values: object) -> None:
    """Refuse, in one line naming it, a value given of the wrong kind (None: not given)."""
    try:
        _Given.model_validate(values)
    except ValidationError as exc:
        key = str(exc.errors()[0]["loc"][0])
        raise InvalidArgumentError(f"{key} must be {what_it_must_be(_Given, key)}, not {values[key]!r}") from None
