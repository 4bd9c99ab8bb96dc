"""JSON Schemas for tools: from a function's signature and docstring, or checked by hand.

:func:`signature_model` builds a pydantic model from a function's
parameters (type hints, defaults) and its docstring's parameter
descriptions (Google, NumPy and Sphinx styles); its JSON Schema keeps
``$defs`` for nested models. :func:`basic_check` is the light check used
for tools given only a raw schema.
"""

from __future__ import annotations

import inspect
import re
import typing
import warnings
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

_SECTIONS = {
    "args": "params",
    "arguments": "params",
    "parameters": "params",
    "params": "params",
    "keyword args": "params",
    "keyword arguments": "params",
    "other parameters": "params",
    "returns": "other",
    "return": "other",
    "yields": "other",
    "raises": "other",
    "examples": "other",
    "example": "other",
    "notes": "other",
    "note": "other",
    "see also": "other",
    "attributes": "other",
    "references": "other",
    "warnings": "other",
}
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::\s*(.*))?$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*?\s)?\*{0,2}(\w+)\s*:\s*(.*)$")
_SPHINX_OTHER = re.compile(r"^:(?:type|rtype|returns?|raises?)\b")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a Google, NumPy or Sphinx docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    numpy = False
    current: str | None = None
    entry_indent = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        underline = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip() or "x") is not None
        header = stripped.rstrip(":").lower()
        if stripped and indent == 0 and header in _SECTIONS and (underline or stripped.endswith(":")):
            section, numpy, current = _SECTIONS[header], underline, None
            i += 2 if underline else 1
            continue
        sphinx = _SPHINX_PARAM.match(stripped)
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
        elif _SPHINX_OTHER.match(stripped):
            section, current = "other", None
        elif section is None:
            summary.append(line)
        elif section == "sphinx" and current and stripped and indent > 0:
            params[current] = f"{params[current]} {stripped}".strip()
        elif section == "params" and stripped:
            current, entry_indent = _param_line(line, stripped, indent, numpy, params, current, entry_indent)
        i += 1
    return "\n".join(summary).strip(), {k: v for k, v in params.items() if v}


def _param_line(
    line: str, stripped: str, indent: int, numpy: bool, params: dict[str, str], current: str | None, entry_indent: int
) -> tuple[str | None, int]:
    if numpy:
        if indent == 0:
            match = _NUMPY_ENTRY.match(stripped)
            if match:
                params[match.group(1)] = ""
                return match.group(1), 0
            return None, 0
        if current:
            params[current] = f"{params[current]} {stripped}".strip()
        return current, entry_indent
    if current is None or indent <= entry_indent:
        match = _GOOGLE_ENTRY.match(stripped)
        if match:
            params[match.group(1)] = match.group(2).strip()
            return match.group(1), indent
        return current, entry_indent
    params[current] = f"{params[current]} {stripped}".strip()
    return current, entry_indent


class SignatureModel(BaseModel):
    """Base of the input models built from signatures: extra keys are refused."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), arbitrary_types_allowed=True)


def signature_model(
    fn: Callable[..., Any], name: str, param_docs: dict[str, str]
) -> tuple[type[BaseModel], tuple[str, ...]]:
    """A pydantic model of ``fn``'s parameters, and the names of its positional-only ones."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: fall back per parameter
        hints = {}
    fields: dict[str, Any] = {}
    positional: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(param.name)
        annotation = hints.get(param.name, param.annotation)
        if annotation is param.empty or isinstance(annotation, str):
            annotation = Any
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, Field(default, description=param_docs.get(param.name)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a parameter named like a BaseModel attribute is still fine
        model = create_model(name, __base__=SignatureModel, **fields)
    return model, tuple(positional)


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema without titles (``$defs`` and ``$ref`` kept), always an object schema."""
    schema = strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


def strip_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without ``title`` keywords (a property *named* title is kept)."""
    out = {k: v for k, v in schema.items() if k != "title"}
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: _strip_subschema(sub) for name, sub in out[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_strip_subschema(sub) for sub in out[key]]
    for key in _SUBSCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = strip_titles(out[key])
    return out


def _strip_subschema(schema: object) -> object:
    """:func:`strip_titles` of a subschema; anything that is not an object schema (``true``, ``false``) as it is."""
    return strip_titles(schema) if isinstance(schema, dict) else schema


def format_validation_error(exc: ValidationError) -> str:
    """One line per problem: ``where: what`` (no pydantic URLs)."""
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error.get("loc", ())) or "input"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(problems)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def basic_check(schema: dict[str, Any], value: dict[str, Any]) -> str:
    """A light JSON Schema check (required keys, top-level types and enums); ``""`` when it passes."""
    if not isinstance(value, dict):
        return "input: must be a JSON object"
    properties = schema.get("properties") or {}
    missing = [name for name in schema.get("required") or () if name not in value]
    if missing:
        return "; ".join(f"{name}: field required" for name in missing)
    if schema.get("additionalProperties") is False:
        extra = sorted(set(value) - set(properties))
        if extra:
            return "; ".join(f"{name}: extra field not permitted" for name in extra)
    for key, item in value.items():
        spec = properties.get(key)
        if not isinstance(spec, dict):
            continue
        expected = spec.get("type")
        names = [expected] if isinstance(expected, str) else list(expected or ())
        if names and not any(_is_type(item, name) for name in names):
            return f"{key}: expected {' or '.join(names)}, got {type(item).__name__}"
        if "enum" in spec and item not in spec["enum"]:
            return f"{key}: must be one of {', '.join(map(repr, spec['enum']))}"
    return ""


def _is_type(value: object, name: str) -> bool:
    kinds = _JSON_TYPES.get(name)
    if kinds is None:
        return True
    if isinstance(value, bool) and name in ("number", "integer"):
        return False
    return isinstance(value, kinds)
