"""Provider options: settings only some providers take, each provider validating its own.

A provider declares the options it takes as a subclass of
:class:`ProviderOptions`, one annotated attribute per option::

    class AnthropicOptions(ProviderOptions):
        context_management: dict[str, Any] | None = None

and names it as its ``options_schema``. A request carries options as a plain
mapping (:attr:`ModelRequest.options <semif_agent.llm.protocol.ModelRequest.options>`,
or extra keywords to ``invoke``/``stream``); the provider that answers
checks them with :func:`check_options`: a name it does not declare is an
:class:`~semif_agent.llm.errors.UnsupportedOptionError` naming those it does,
and values are validated by pydantic against the annotations
(``extra="forbid"``). Pydantic is imported on the first validation, not
when a provider module loads.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import InvalidModelRequestError, UnsupportedOptionError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .protocol import LLMProvider, ModelRequest


class ProviderOptions:
    """The base of a provider's options schema: annotate each option with its type (and a default)."""

    _model: Any = None  # the pydantic model built from the annotations, per subclass, on first use

    @classmethod
    def names(cls) -> frozenset[str]:
        """The options this schema declares."""
        return frozenset(
            name for klass in cls.__mro__ for name in getattr(klass, "__annotations__", {}) if not name.startswith("_")
        )

    @classmethod
    def validate(cls, values: Mapping[str, object], *, where: str = "") -> dict[str, object]:
        """``values`` checked against the schema: the options given, with their validated values."""
        from pydantic import ValidationError

        model = cls.__dict__.get("_model") or cls._build_model()
        try:
            checked = model.model_validate(dict(values))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise InvalidModelRequestError(
                f"invalid provider options{f' for {where}' if where else ''}: {problems}"
            ) from exc
        validated: dict[str, object] = checked.model_dump(include=set(values))
        return validated

    @classmethod
    def _build_model(cls) -> type[BaseModel]:
        from typing import get_type_hints

        from pydantic import ConfigDict, create_model

        namespace = vars(sys.modules[cls.__module__])
        hints = get_type_hints(cls, globalns=namespace)
        fields = {name: (hint, getattr(cls, name, None)) for name, hint in hints.items() if name in cls.names()}
        model: type[BaseModel] = create_model(
            cls.__name__, __config__=ConfigDict(extra="forbid", frozen=True), **fields
        )  # type: ignore[call-overload]  # fields built at run time
        cls._model = model
        return model


def supported_options(provider: object) -> frozenset[str]:
    """The option names ``provider`` takes (any provider object; none when it declares none).

    ``supports_context_management = True`` is the older way of declaring the
    ``context_management`` option and still counts.
    """
    declared = getattr(provider, "supported_options", None)
    names = frozenset(declared) if declared is not None else frozenset()
    if getattr(provider, "supports_context_management", False) is True:
        names |= {"context_management"}
    return names


def check_options(provider: LLMProvider, request: ModelRequest) -> dict[str, object]:
    """``request.options`` as ``provider`` takes them, validated by its ``options_schema`` if it has one.

    Raises :class:`UnsupportedOptionError` for an option the provider does not
    take, :class:`InvalidModelRequestError` for a value its schema refuses.
    """
    if not request.options:
        return {}
    where = f"{provider.provider_name}/{provider.model_id}"
    takes = supported_options(provider)
    unknown = sorted(set(request.options) - takes)
    if unknown:
        listed = ", ".join(repr(name) for name in unknown)
        offered = f"it takes {', '.join(sorted(takes))}" if takes else "it takes no provider options"
        raise UnsupportedOptionError(
            f"{where} does not take the option{'s' if len(unknown) > 1 else ''} {listed} ({offered})"
        )
    schema: type[ProviderOptions] | None = getattr(provider, "options_schema", None)
    if schema is None:
        return dict(request.options)
    return schema.validate(request.options, where=where)
