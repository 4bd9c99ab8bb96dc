"""``--strategy NAME``: a routing strategy's name, built in or a plug-in's, checked when the command runs."""

from __future__ import annotations

import click

from ..errors import EngineConfigError
from ..routing.names import STRATEGIES, strategy_names


class StrategyName(click.ParamType):
    """A strategy name (or one of ``extra``, e.g. ``all``).

    Unlike a ``click.Choice``, the plug-ins' names are read only when the
    option is given, so ``--help`` and start-up read no package metadata;
    an unknown name is one line naming the known ones.
    """

    name = "strategy"

    def __init__(self, *extra: str) -> None:
        self.extra = extra

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join((*self.extra, *STRATEGIES, "PLUGIN")) + "]"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value in self.extra or value in STRATEGIES:
            return str(value)
        known = [*self.extra, *strategy_names()]
        if value not in known:
            raise EngineConfigError(f"unknown routing strategy {value!r} (known: {', '.join(known)})")
        return str(value)
