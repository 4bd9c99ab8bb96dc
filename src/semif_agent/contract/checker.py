"""The contract checker: every static violation of a code-skill body, each with its line.

Criteria (numbered as in the contract's acceptance criteria):

1. the body compiles and defines ``predict(ctx, request)`` and ``act(ctx, request, prediction)``;
2. the name matches the manifest pattern and the category is given;
3. it imports only the standard library and semif_agent's kernel, less what
   a body must not use, and hides nothing of what it does (see :mod:`._modules`
   and :mod:`.escapes`: dynamic imports, dunders, ``exec``/``eval``);
4. it decides through ``ctx.engine`` (no invented engines, no hand-made
   ``DecisionResult``, no reaching past its budget) and returns ``Prediction`` /
   ``ActionResult``, and leaves ``ctx`` as it was given;
5. it does not duplicate a leaf of its category (``semif_agent.forge.duplicates``).

Admission (``semif_agent.forge``) adds criterion 5 and the behavioural gate;
before a run, a body changed since it passed is checked here again
(:mod:`.admitted`).
"""

from __future__ import annotations

import ast

from .._python_ast import parse_python
from ..catalog.names import NAME_RE
from .escapes import escape_violations
from .report import CheckReport, Violation

__all__ = ["CheckReport", "Violation", "check_source"]

_SIGNATURES = {"predict": ("ctx", "request"), "act": ("ctx", "request", "prediction")}
_RETURNS = {"predict": "Prediction", "act": "ActionResult"}
_ARTICLE = {"Prediction": "a Prediction", "ActionResult": "an ActionResult"}


def check_source(source: str, *, name: str, category: str) -> CheckReport:
    """Criteria 1 to 4 on ``source`` (the body's text) for the manifest ``name``/``category``."""
    report = CheckReport(name=name, category=category)
    found = report.violations
    if not NAME_RE.fullmatch(name or ""):
        found.append(Violation(2, 1, f"the name {name!r} does not match {NAME_RE.pattern}"))
    if not (category or "").strip():
        found.append(Violation(2, 1, "no category is given"))
    try:
        tree = parse_python(source)
        compile(tree, name or "<skill>", "exec")
    except SyntaxError as exc:
        found.append(Violation(1, exc.lineno or 1, f"the body does not compile: {exc.msg}"))
        return report
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for fn, params in _SIGNATURES.items():
        node = functions.get(fn)
        if node is None:
            found.append(Violation(1, 1, f"the body does not define {fn}{_sig(params)}"))
            continue
        if isinstance(node, ast.AsyncFunctionDef):
            found.append(Violation(1, node.lineno, f"{fn} must be a plain function, not async"))
        given = [a.arg for a in node.args.posonlyargs + node.args.args]
        if len(given) != len(params) or node.args.vararg or node.args.kwonlyargs:
            found.append(Violation(1, node.lineno, f"{fn} must take {_sig(params)}, not ({', '.join(given)})"))
        found.extend(_return_violations(node, _RETURNS[fn]))
    found.extend(escape_violations(tree))
    found.extend(_engine_violations(tree))
    found.sort(key=lambda v: (v.line, str(v.criterion)))
    return report


def _sig(params: tuple[str, ...]) -> str:
    return f"({', '.join(params)})"


def _engine_violations(tree: ast.Module) -> list[Violation]:
    out = []
    builds_request = asks_engine = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and ("engine" in node.name.lower() or "mock" in node.name.lower()):
            out.append(
                Violation(4, node.lineno, f"defines {node.name}: decisions must go through ctx.engine, not a stand-in")
            )
        elif isinstance(node, ast.Call):
            called = _called_name(node.func)
            if called == "DecisionResult":
                out.append(
                    Violation(4, node.lineno, "builds a DecisionResult itself: ask ctx.engine.call(...) instead")
                )
            elif called == "DecisionRequest":
                builds_request = True
            elif called == "call" and _is_ctx_engine(node.func):
                asks_engine = True
        elif isinstance(node, ast.Attribute) and node.attr == "engine" and _is_ctx_engine(node):
            out.append(
                Violation(4, node.lineno, "reaches past ctx.engine to the engine behind it: call ctx.engine.call(...)")
            )
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == "engine":
                    out.append(Violation(4, node.lineno, "replaces ctx.engine: use the engine the skill is given"))
                elif isinstance(target, ast.Attribute) and _root(target) == "ctx":
                    out.append(Violation(4, node.lineno, f"changes {ast.unparse(target)}: the context is read-only"))
    if builds_request and not asks_engine:
        out.append(Violation(4, 1, "builds DecisionRequests but never asks ctx.engine.call(...)"))
    return out


def _return_violations(fn: ast.FunctionDef | ast.AsyncFunctionDef, expected: str) -> list[Violation]:
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and _owner(fn, n)]
    if not returns:
        return [Violation(4, fn.lineno, f"{fn.name} never returns {_ARTICLE[expected]}")]
    out = []
    for node in returns:
        value = node.value
        if value is None or isinstance(value, (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.JoinedStr)):
            shown = ast.unparse(value) if value else "None"
            out.append(Violation(4, node.lineno, f"{fn.name} must return {_ARTICLE[expected]}, not {shown}"))
        elif isinstance(value, ast.Call) and _called_name(value.func) in set(_RETURNS.values()) - {expected}:
            out.append(
                Violation(
                    4, node.lineno, f"{fn.name} must return {_ARTICLE[expected]}, not a {_called_name(value.func)}"
                )
            )
    return out


def _owner(fn: ast.AST, node: ast.Return) -> bool:
    """True when ``node`` belongs to ``fn`` itself, not to a function nested in it."""
    for inner in ast.walk(fn):
        if inner is not fn and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(n is node for n in ast.walk(inner)):
                return False
    return True


def _called_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _root(node: ast.AST) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _is_ctx_engine(func: ast.AST) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "engine"
        and _root(func.value) == "ctx"
    )
