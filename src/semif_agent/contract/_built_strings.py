"""Strings a body builds and hands to something that reads them as code: SQL (``execute``) and format strings.

A literal is easy to scan; a string built at run time (concatenation,
f-string, ``join``, ``%``, a name bound elsewhere) could spell ``ATTACH`` or
``{0.__globals__}`` in pieces. So the checker follows how the string is built,
as far as it can be followed without running anything: literals, names bound
only by plain assignments in the same function (or the module), f-strings,
``+``, ``%``, ``str.join`` of such, conditional expressions. What it follows it
scans whole, every way it can come out; what it cannot follow (a parameter, a
call's result, a loop variable) it refuses, saying why. Whatever it misses, the
sandbox still holds.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from .report import Violation

SQL_CALLS = frozenset({"execute", "executemany", "executescript"})
FORMAT_CALLS = frozenset({"format", "format_map"})
_MAX_WAYS = 16  # more ways a string can come out than this: not followed
_MAX_DEPTH = 12  # names through names deeper than this: not followed
_SQL_COMMENT = re.compile(r"/\*.*?(\*/|$)|--[^\n]*", re.S)
SQL_FILES = re.compile(r"\b(attach|vacuum|load_extension)\b", re.I)
"""What SQL a body runs may not say, anywhere (case-insensitive, comments removed): another database file, or a
native extension."""

_Ways = list[str] | None  # every way a string can come out; None when it cannot be followed


class BuiltStrings:
    """Follows how the strings handed to ``execute`` and ``.format`` are built, in one body's syntax tree."""

    def __init__(self, tree: ast.Module, parents: dict[ast.AST, ast.AST]) -> None:
        self.tree, self.parents = tree, parents
        self.bindings: dict[ast.AST, dict[str, list[ast.AST | None]]] = {}

    def violations(self, format_field: re.Pattern[str]) -> Iterator[Violation]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and node.attr in SQL_CALLS:
                yield from self._sql(node)
            elif isinstance(node, ast.Attribute) and node.attr in FORMAT_CALLS:
                yield from self._format(node, format_field)

    def _sql(self, node: ast.Attribute) -> Iterator[Violation]:
        call = self.parents.get(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            yield Violation(3, node.lineno, f"uses .{node.attr} as a value: call it with its SQL")
            return
        if not call.args or isinstance(call.args[0], ast.Constant) and not _is_sql_file(call.args[0].value):
            return
        ways = self.ways(call.args[0])
        if ways is None:
            yield Violation(
                3,
                node.lineno,
                f"runs SQL ({node.attr}) built from values the checker cannot follow: build it from literals "
                "and pass values as parameters (?)",
            )
        elif any(_is_sql_file(way) for way in ways):
            yield Violation(
                3, node.lineno, "runs SQL that attaches or writes another database file, or loads an extension"
            )

    def _format(self, node: ast.Attribute, format_field: re.Pattern[str]) -> Iterator[Violation]:
        call = self.parents.get(node)
        receiver: ast.AST | None = node.value
        if isinstance(node.value, ast.Name) and node.value.id == "str":  # str.format(template, ...)
            called = isinstance(call, ast.Call) and call.func is node and call.args
            receiver = call.args[0] if called and isinstance(call, ast.Call) else None
        if isinstance(receiver, ast.Constant):
            return  # a literal: scanned where it stands
        ways = self.ways(receiver) if receiver is not None else None
        if ways is None:
            yield Violation(
                3,
                node.lineno,
                f"calls .{node.attr} on a format string built at run time: format strings must be literals",
            )
        elif any(format_field.search(way) for way in ways):
            yield Violation(3, node.lineno, "has a format string that reads private, dunder or frame attributes")

    # following a string

    def ways(self, node: ast.AST, depth: int = 0) -> _Ways:
        """Every way the string ``node`` can come out, or None when it cannot be followed."""
        if depth > _MAX_DEPTH:
            return None
        ways = self._ways(node, depth + 1)
        return ways if ways is None or len(ways) <= _MAX_WAYS else None

    def _ways(self, node: ast.AST, depth: int) -> _Ways:
        if isinstance(node, ast.Constant):
            return [str(node.value)] if isinstance(node.value, (str, int, float)) else None
        if isinstance(node, ast.JoinedStr):
            return self._joined([self._part(value, depth) for value in node.values])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._joined([self.ways(node.left, depth), self.ways(node.right, depth)])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return self._percent(node, depth)
        if isinstance(node, ast.IfExp):
            return _either(self.ways(node.body, depth), self.ways(node.orelse, depth))
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return None

    def _part(self, value: ast.AST, depth: int) -> _Ways:
        return self.ways(value.value, depth) if isinstance(value, ast.FormattedValue) else self.ways(value, depth)

    @staticmethod
    def _joined(parts: list[_Ways]) -> _Ways:
        ways = [""]
        for part in parts:
            if part is None:
                return None
            ways = [way + piece for way in ways for piece in part]
            if len(ways) > _MAX_WAYS:
                return None
        return ways

    def _percent(self, node: ast.BinOp, depth: int) -> _Ways:
        values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        parts = [self.ways(value, depth) for value in values]
        templates = self.ways(node.left, depth)
        if templates is None or any(part is None for part in parts):
            return None
        filled = self._joined([templates, *[[" ".join(p)] for p in parts if p is not None]])
        try:  # the template filled in, and its pieces side by side (what a value can complete)
            formatted = [t % tuple(p[0] for p in parts if p is not None) for t in templates]
        except (TypeError, ValueError):
            return None
        return _either(formatted, filled)

    def _call(self, node: ast.Call, depth: int) -> _Ways:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("len", "int") and not node.keywords:
            return ["0"]
        if not (isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1):
            return None
        separators = self.ways(func.value, depth)
        items = node.args[0]
        if isinstance(items, (ast.GeneratorExp, ast.ListComp)):
            elements = self.ways(items.elt, depth)
        elif isinstance(items, (ast.List, ast.Tuple)):
            elements = _either(*(self.ways(elt, depth) for elt in items.elts)) if items.elts else [""]
        else:
            return None
        if separators is None or elements is None:
            return None
        return [sep.join([a, b]) for sep in separators for a in elements for b in elements] + elements

    def _name(self, node: ast.Name, depth: int) -> _Ways:
        """What the name can hold: the union over its plain assignments in the scope that binds it."""
        scope: ast.AST | None = self.parents.get(node)
        while scope is not None:
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
                bound = self._bindings(scope).get(node.id)
                if bound is not None:
                    if any(value is None for value in bound):
                        return None
                    return _either(*(self.ways(value, depth) for value in bound if value is not None))
            scope = self.parents.get(scope)
        return None

    def _bindings(self, scope: ast.AST) -> dict[str, list[ast.AST | None]]:
        """Each name bound in ``scope`` (not in scopes nested in it) -> the values assigned (None: any other way)."""
        if scope in self.bindings:
            return self.bindings[scope]
        found: dict[str, list[ast.AST | None]] = {}
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = scope.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                found.setdefault(arg.arg, []).append(None)
            for extra in (arguments.vararg, arguments.kwarg):
                if extra is not None:
                    found.setdefault(extra.arg, []).append(None)
        for child in _own_nodes(scope):
            if isinstance(child, ast.Assign) and len(child.targets) == 1 and isinstance(child.targets[0], ast.Name):
                found.setdefault(child.targets[0].id, []).append(child.value)
            elif isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                if not self._plain_target(child):
                    found.setdefault(child.id, []).append(None)
            elif isinstance(child, (ast.Global, ast.Nonlocal)):
                for name in child.names:
                    found.setdefault(name, []).append(None)
        self.bindings[scope] = found
        return found

    def _plain_target(self, name: ast.Name) -> bool:
        parent = self.parents.get(name)
        return isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is name


def _is_sql_file(sql: object) -> bool:
    """Whether ``sql`` says what :data:`SQL_FILES` refuses, once its comments are taken out."""
    return isinstance(sql, str) and SQL_FILES.search(_SQL_COMMENT.sub(" ", sql)) is not None


def _either(*ways: _Ways) -> _Ways:
    """The union of several sets of ways (None when any cannot be followed)."""
    union: list[str] = []
    for way in ways:
        if way is None:
            return None
        union.extend(w for w in way if w not in union)
    return union or None


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` that are not inside a function, lambda, class or comprehension nested in it."""
    nested = (
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Lambda,
        ast.ClassDef,
        ast.GeneratorExp,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
    )
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, nested):
            stack.extend(ast.iter_child_nodes(node))
