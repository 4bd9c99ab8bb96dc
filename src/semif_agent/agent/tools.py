"""Tools an agent can call: :class:`AgentTool`, and :func:`tool` to make one from a function.

::

    @tool
    def add(a: int, b: int) -> str:
        \"\"\"Add two numbers.

        Args:
            a: The first number.
            b: The second number.
        \"\"\"
        return str(a + b)

    @tool(name="lookup", read_only=True, timeout=5)
    async def find(query: str, limit: int = 5) -> str: ...

The input schema comes from the type hints (pydantic models nest, with
``$defs``), parameter descriptions from the docstring (Google, NumPy or
Sphinx style), the description from its first part. Inputs are validated
with pydantic before the call: the function gets coerced values (a nested
model arrives as its instance), and a bad input goes back to the model as
an error result instead of reaching the function.

A tool function may be sync (run in a worker thread, so it never blocks
the loop) or async, and returns text; other values are written as JSON
(pydantic models, dicts, lists) or ``str()``.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .._json import JsonObject
from ..llm.messages import ToolSpec
from ._schema import basic_check, format_validation_error, model_schema, parse_docstring, signature_model
from ._validated import ValidatedModel
from .errors import ToolDefinitionError
from .usage import estimate_json_tokens, estimate_tokens

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class AgentTool(ValidatedModel):
    """A tool the agent may call (frozen).

    ``input_model``, when set, validates inputs with pydantic; otherwise a
    basic check of ``input_schema`` (required keys, top-level types) runs.
    ``timeout`` overrides the agent's ``tool_timeout`` for this tool.
    ``read_only`` tools have no side effects: consecutive read-only calls
    run concurrently, every other call runs alone. ``requires_approval``
    sends each call to the approval callback. ``max_result_tokens``
    overrides the agent's result cap. ``defer_loading`` and
    ``input_examples`` are carried for tool search and providers that show
    examples.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    description: str
    input_schema: JsonObject
    fn: Callable[..., str | Awaitable[str]]
    input_model: type[BaseModel] | None = None
    timeout: float | None = Field(default=None, gt=0)
    defer_loading: bool = False
    input_examples: tuple[JsonObject, ...] = ()
    requires_approval: bool = False
    read_only: bool = False
    max_result_tokens: int | None = Field(default=None, gt=0)

    _spec: ToolSpec | None = PrivateAttr(default=None)
    _schema_tokens: int | None = PrivateAttr(default=None)
    _is_async: bool = PrivateAttr(default=False)
    _positional: tuple[str, ...] = PrivateAttr(default=())
    _pass_model: bool = PrivateAttr(default=False)
    _field_names: tuple[str, ...] = PrivateAttr(default=())  # the input model's, in order

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not TOOL_NAME.match(name):
            raise ValueError(f"tool name {name!r} must be 1-64 letters, digits, '_' or '-'")
        return name

    def model_post_init(self, __context: Any) -> None:
        self._is_async = _is_async(self.fn)
        self._pass_model = self.input_model is not None and _takes_model(self.fn, self.input_model)
        self._field_names = tuple(self.input_model.model_fields) if self.input_model is not None else ()

    @property
    def _private(self) -> dict[str, Any]:
        """The private attributes, read directly: every call reads some, and pydantic's
        attribute fallback through which ``self._name`` reaches them costs microseconds a read."""
        private = self.__pydantic_private__
        assert private is not None  # set by pydantic's constructor: the class declares private attributes
        return private

    def to_tool_schema(self) -> ToolSpec:
        """The provider-neutral spec (name, description, input schema) models are shown."""
        spec: ToolSpec | None = self._private["_spec"]
        if spec is None:
            spec = self._spec = ToolSpec(name=self.name, description=self.description, input_schema=self.input_schema)
        return spec

    @property
    def schema_tokens(self) -> int:
        """About how many prompt tokens showing this tool costs (name, description, schema)."""
        tokens: int | None = self._private["_schema_tokens"]
        if tokens is None:
            tokens = self._schema_tokens = (
                estimate_tokens(self.name) + estimate_tokens(self.description) + estimate_json_tokens(self.input_schema)
            )
        return tokens

    def validate_input(self, tool_input: JsonObject) -> tuple[bool, str]:
        """``(True, "")`` when ``tool_input`` is valid, else ``(False, what is wrong)``."""
        _, error = self.parse_input(tool_input)
        return (not error, error)

    def parse_input(self, tool_input: JsonObject) -> tuple[BaseModel | JsonObject | None, str]:
        """``(validated value, "")`` or ``(None, error)``: a model instance with ``input_model``, else the dict."""
        if self.input_model is not None:
            try:
                return self.input_model.model_validate(tool_input), ""
            except ValidationError as exc:
                return None, format_validation_error(exc)
        error = basic_check(self.input_schema, tool_input)
        return (None, error) if error else (tool_input, "")

    @property
    def is_async(self) -> bool:
        """True when calling ``fn`` returns an awaitable (it runs on the loop, not in a thread)."""
        return bool(self._private["_is_async"])

    def call(self, value: BaseModel | JsonObject) -> Any:
        """Call ``fn`` with a value from :meth:`parse_input` (the result may be awaitable)."""
        private = self._private
        if isinstance(value, BaseModel):
            if private["_pass_model"]:
                return self.fn(value)
            names = private["_field_names"] if type(value) is self.input_model else type(value).model_fields
            kwargs = {name: getattr(value, name) for name in names}
        else:
            kwargs = dict(value)
        args = [kwargs.pop(name) for name in private["_positional"] if name in kwargs]
        return self.fn(*args, **kwargs)


def result_text(value: object) -> str:
    """A tool's return value as the text the model sees."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _is_async(fn: Callable[..., Any]) -> bool:
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    target = inspect.unwrap(target)
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(getattr(target, "__call__", None))  # noqa: B004 - an object's async __call__


def _takes_model(fn: Callable[..., Any], model: type[BaseModel]) -> bool:
    """True when ``fn`` takes one parameter annotated with ``model`` (it then gets the instance)."""
    try:
        params = [
            p for p in inspect.signature(fn).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return False
    if len(params) != 1:
        return False
    try:
        annotation = typing.get_type_hints(fn).get(params[0].name, params[0].annotation)
    except Exception:  # noqa: BLE001 - unresolvable hints: compare by name
        annotation = params[0].annotation
    if isinstance(annotation, str):
        return annotation == model.__name__
    return isinstance(annotation, type) and issubclass(annotation, BaseModel) and issubclass(model, annotation)


def _make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    input_model: type[BaseModel] | None,
    **options: Any,
) -> AgentTool:
    if not callable(fn):
        raise ToolDefinitionError(f"@tool needs a function, got {type(fn).__name__}")
    fn_name = getattr(fn, "__name__", "")
    tool_name = name or (fn_name if isinstance(fn_name, str) else "")
    if not TOOL_NAME.match(tool_name):
        raise ToolDefinitionError(f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-' (pass name=...)")
    summary, param_docs = parse_docstring(inspect.getdoc(fn))
    positional: tuple[str, ...] = ()
    if input_model is None:
        try:
            input_model, positional = signature_model(fn, tool_name, param_docs)
        except Exception as exc:  # a type pydantic cannot describe
            raise ToolDefinitionError(f"cannot build an input schema for tool {tool_name!r}: {exc}") from exc
    try:
        schema = model_schema(input_model)
    except Exception as exc:
        raise ToolDefinitionError(f"cannot build an input schema for tool {tool_name!r}: {exc}") from exc
    built = AgentTool(
        name=tool_name,
        description=description or summary or tool_name.replace("_", " "),
        input_schema=schema,
        fn=fn,
        input_model=input_model,
        **options,
    )
    built._positional = positional
    return built


@overload
def tool(fn: Callable[..., Any], /) -> AgentTool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_model: type[BaseModel] | None = None,
    read_only: bool = False,
    requires_approval: bool = False,
    timeout: float | None = None,
    max_result_tokens: int | None = None,
    defer_loading: bool = False,
    input_examples: tuple[JsonObject, ...] = (),
) -> Callable[[Callable[..., Any]], AgentTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_model: type[BaseModel] | None = None,
    **options: Any,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Make an :class:`AgentTool` from a function, bare (``@tool``) or with options (``@tool(name=...)``).

    Options beyond the seed's ``name``, ``description`` and ``input_model``
    are :class:`AgentTool` fields (``read_only``, ``requires_approval``,
    ``timeout``, ``max_result_tokens``, ``defer_loading``, ``input_examples``).
    With ``input_model``, the schema is that model's and the function gets
    the validated instance when it takes one parameter of that type, else
    its fields as keyword arguments.
    """
    unknown = set(options) - set(AgentTool.model_fields) - {"name", "description", "input_model"}
    if unknown or {"fn", "input_schema"} & set(options):
        raise ToolDefinitionError(
            f"@tool does not take {', '.join(sorted(unknown or {'fn', 'input_schema'} & set(options)))}"
        )

    def decorate(function: Callable[..., Any]) -> AgentTool:
        return _make_tool(function, name=name, description=description, input_model=input_model, **options)

    return decorate(fn) if fn is not None else decorate
