"""Criterion 3: what a body may import, and the ways around that rule it may not take.

A body imports any standard-library module and semif_agent's kernel; the
refusals kept, each with its reason, are in :mod:`._modules`: third-party
packages (not installed where a body runs), the network (a body has none),
what loads or runs code named in a string or in data (``importlib``,
``pickle``, ``builtins``...), native code, frames and live objects
(``ctypes``, ``inspect``, ``gc``), starting programs (``subprocess``,
``os.system``, ``os.exec*``, ``os.spawn*``, ``os.fork``), the import system
(``sys.modules``, ``sys.path``) and every other ``semif_agent`` module (the
host's, not a body's).

What hides what a body does is refused too, each with its line:
importing everything (``*``) or relatively, reaching a module through
another (``shutil.os.system``, ``email.utils.socket``), using a module as a value or rebinding its name,
changing a module's or an imported object's attributes, ``getattr`` with a
computed name, ``setattr``/``delattr``, dunder names and attributes
(``__class__``, ``__globals__``, ``__subclasses__``, ``__builtins__``...),
private attributes (``_name``) outside ``self``/``cls``, frame and code
attributes (``gi_frame``, ``f_globals``...), ``exec``/``eval``/``compile``/
``__import__`` and their kin, what runs annotation strings as code
(``typing.get_type_hints``, ``ForwardRef``, ``functools.singledispatch``),
``exit``/``SystemExit``, SQLite's extension loading and ``ATTACH``/``VACUUM INTO`` (files outside the write dirs), and
format strings that read such attributes; class patterns (``case C(__globals__=g)``) and strings naming such an
attribute (``x["__globals__"]``) as well. SQL handed to ``execute`` and strings given ``.format`` are followed however
they are built (:mod:`._built_strings`): one the checker cannot follow is refused.

These are static checks on what a body says, a gate on its quality. The
sandbox a body runs in is what bounds what it can do.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ._built_strings import BuiltStrings
from ._modules import STOPS_PROCESS, gateway, member_module, member_refusal, module_refusal
from .report import Violation

_BUILTINS = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "breakpoint",
        "globals",
        "locals",
        "vars",
        "help",
        "input",
        "exit",
        "quit",
        "SystemExit",
        "setattr",
        "delattr",
    }
)
"""Built-in names a body may not use: they run strings as code, reach scopes, stop the host, wait on a terminal
no one watches, or set attributes by name."""
_OUT_OF_REACH = frozenset(
    {
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "ag_await",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "co_names",
        "mro",
        "load_extension",
        "enable_load_extension",
        "get_type_hints",
        "ForwardRef",
        "singledispatch",
        "singledispatchmethod",
        "attrgetter",
        "methodcaller",
        "Formatter",
        "get_field",
        "vformat",
    }
)
"""Attributes and importable names refused wherever they appear: frames and code objects, native extensions,
what runs annotation strings or reaches attributes by name, and ``string.Formatter`` (whose ``get_field`` follows a
computed attribute path)."""
_ALLOWED_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__", "__file__", "__debug__"})
_SELF = frozenset({"self", "cls"})
_FORMAT_FIELD = re.compile(r"\{[^{}]*[.\[](?:_|" + "|".join(sorted(_OUT_OF_REACH)) + r")")
_DUNDER_IN_TEXT = re.compile(r"(?:^|[.\[])(__\w+__)(?:$|[\[\]]|\.(?!py\b))")  # "__globals__", "f.__code__.x"
_SQL_FILES = re.compile(
    r"\battach\s+database\b|\battach\s+('[^']*'|\"[^\"]*\"|\?|:\w+)\s+as\b|\bvacuum\s+(\w+\s+)?into\b", re.I
)


def escape_violations(tree: ast.Module) -> list[Violation]:
    """Every criterion-3 violation of ``tree``, each with its line."""
    scan = _Scan(tree)
    return [*scan.violations(), *BuiltStrings(tree, scan.parents).violations(_FORMAT_FIELD)]


class _Scan:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.modules: dict[str, str] = {}  # a name bound by an import -> the module it names
        self.imported: set[str] = set()  # every name an import binds

    def violations(self) -> Iterator[Violation]:
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield from self._import(node)
        rebound = self._rebound()
        for node in ast.walk(self.tree):
            line = getattr(node, "lineno", 1)
            if isinstance(node, ast.Name):
                yield from self._name(node, rebound)
            elif isinstance(node, ast.Attribute):
                yield from self._attribute(node, line)
            elif isinstance(node, ast.Call):
                yield from self._call(node, line)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield from self._text(node.value, line)
            elif isinstance(node, ast.MatchClass):
                yield from self._class_pattern(node)
        for name, line in rebound.items():
            yield Violation(3, line, f"rebinds {name!r}, a name its imports bind: give the value another name")

    # imports

    def _import(self, node: ast.Import | ast.ImportFrom) -> Iterator[Violation]:
        line = node.lineno
        if isinstance(node, ast.Import):
            for alias in node.names:
                reason = module_refusal(alias.name)
                if reason and not gateway(alias.name):
                    yield Violation(3, line, f"imports {alias.name!r}: {reason}")
                    continue
                bound = alias.asname or alias.name.split(".")[0]
                self.modules[bound] = alias.name if alias.asname else alias.name.split(".")[0]
                self.imported.add(bound)
            return
        if node.level:
            yield Violation(3, line, "relative imports are not allowed")
            return
        module = node.module or ""
        reason = module_refusal(module)
        if reason and not gateway(module):
            yield Violation(3, line, f"imports {module!r}: {reason}")
            return
        for alias in node.names:
            if alias.name == "*":
                yield Violation(3, line, f"imports * from {module}: import each name it uses")
                continue
            bound = alias.asname or alias.name
            self.imported.add(bound)
            if reason := member_refusal(module, alias.name):
                yield Violation(3, line, f"imports {alias.name} from {module}: {reason}")
            elif isinstance(target := member_module(module, alias.name), str):
                if (reason := module_refusal(target)) and not gateway(target):
                    yield Violation(3, line, f"imports the module {target} through {module}: {reason}")
                else:
                    self.modules[bound] = target
            elif alias.name in _OUT_OF_REACH or alias.name.startswith("_"):
                yield Violation(3, line, f"imports {alias.name} from {module}: {_why(alias.name)}")

    def _rebound(self) -> dict[str, int]:
        """Imported names the body binds again (assignment, parameter, loop, ``with``, ``def``...)."""
        found: dict[str, int] = {}
        for node in ast.walk(self.tree):
            names: list[tuple[str, int]] = []
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names = [(node.id, node.lineno)]
            elif isinstance(node, ast.arg):
                names = [(node.arg, node.lineno)]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [(node.name, node.lineno)]
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names = [(node.name, node.lineno)]
            for name, line in names:
                if name in self.imported:
                    found.setdefault(name, line)
        return found

    # uses

    def _name(self, node: ast.Name, rebound: dict[str, int]) -> Iterator[Violation]:
        parent = self.parents.get(node)
        if node.id in _BUILTINS and node.id not in self.imported:
            yield Violation(3, node.lineno, f"uses {node.id}: {_why(node.id)}")
        elif node.id == "getattr" and not (isinstance(parent, ast.Call) and parent.func is node):
            yield Violation(3, node.lineno, "uses getattr as a value: write obj.NAME")
        elif _dunder(node.id) and node.id not in _ALLOWED_DUNDERS:
            yield Violation(3, node.lineno, f"uses {node.id}: dunder names reach the interpreter's internals")
        elif node.id in self.modules and node.id not in rebound and isinstance(node.ctx, ast.Load):
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                yield Violation(
                    3, node.lineno, f"uses the module {node.id} as a value: call what it holds as {node.id}.NAME"
                )
            else:
                yield from self._chain(node)

    def _chain(self, root: ast.Name) -> Iterator[Violation]:
        """Follow ``module.a.b`` through the real modules; refuse a step that reaches a name or module not allowed."""
        module = self.modules[root.id]
        node: ast.AST = root
        while isinstance(parent := self.parents.get(node), ast.Attribute) and parent.value is node:
            attr, line = parent.attr, parent.lineno
            if not isinstance(parent.ctx, ast.Load):
                yield Violation(3, line, f"changes {ast.unparse(parent)}: bodies may not change modules")
                return
            if _dunder(attr) or attr.startswith("_"):
                return  # refused as an attribute
            if reason := member_refusal(module, attr):
                used = ast.unparse(parent)
                named = "" if used == f"{module}.{attr}" else f" ({module}.{attr})"
                yield Violation(3, line, f"uses {used}{named}: {reason}")
                return
            target = member_module(module, attr)
            if target is None:
                return
            if (reason := module_refusal(target)) and not gateway(target):
                yield Violation(3, line, f"reaches the module {target} through {ast.unparse(parent)}: {reason}")
                return
            module, node = target, parent

    def _attribute(self, node: ast.Attribute, line: int) -> Iterator[Violation]:
        attr = node.attr
        root = _root(node)
        if _dunder(attr) and attr not in _ALLOWED_DUNDERS:
            yield Violation(3, line, f"uses .{attr}: dunder attributes reach the interpreter's internals")
        elif attr in _OUT_OF_REACH:
            yield Violation(3, line, f"uses .{attr}: {_why(attr)}")
        elif (
            attr.startswith("_")
            and not _dunder(attr)
            and not (isinstance(node.value, ast.Name) and node.value.id in _SELF)
        ):
            yield Violation(3, line, f"uses the private attribute .{attr}: only a class's own methods (self, cls) may")
        elif not isinstance(node.ctx, ast.Load) and root in self.imported and root not in self.modules:
            yield Violation(3, line, f"changes {ast.unparse(node)}: bodies may not change what they import")

    def _call(self, node: ast.Call, line: int) -> Iterator[Violation]:
        if not (isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")):
            return
        name = node.args[1] if len(node.args) > 1 else None
        target = node.args[0] if node.args else None
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            yield Violation(3, line, f"calls {node.func.id}() with a computed attribute name: write obj.NAME")
        elif _dunder(name.value) or name.value.startswith("_") or name.value in _OUT_OF_REACH:
            yield Violation(3, line, f"calls {node.func.id}() for {name.value!r}: that attribute is out of reach")
        elif isinstance(target, ast.Name) and target.id in self.modules:
            return  # the module as a value is refused where it is used

    def _class_pattern(self, node: ast.MatchClass) -> Iterator[Violation]:
        """``case C(attr=...)`` reads ``attr`` as ``.attr`` would: the same names are out of reach."""
        for attr in node.kwd_attrs:
            if (_dunder(attr) and attr not in _ALLOWED_DUNDERS) or attr in _OUT_OF_REACH:
                yield Violation(3, node.lineno, f"matches a class pattern on {attr}: {_why(attr)}")
            elif attr.startswith("_") and not _dunder(attr):
                yield Violation(3, node.lineno, f"matches a class pattern on the private attribute {attr}")

    def _text(self, text: str, line: int) -> Iterator[Violation]:
        named = _DUNDER_IN_TEXT.search(text)
        if named and named.group(1) not in _ALLOWED_DUNDERS:
            yield Violation(
                3, line, f"names {named.group(1)} in a string (a subscript, pattern or path reaches it as an attribute)"
            )
        elif _FORMAT_FIELD.search(text):
            yield Violation(3, line, "has a format string that reads private, dunder or frame attributes")
        elif _SQL_FILES.search(text):
            yield Violation(
                3, line, "has SQL that attaches or writes another database file: use the paths in ctx.config"
            )


def _why(name: str) -> str:
    if name in ("setattr", "delattr"):
        return "set attributes directly (obj.NAME = value)"
    if name in ("exit", "quit", "SystemExit"):
        return STOPS_PROCESS
    if name in ("input", "help", "breakpoint"):
        return "a body runs with no one at a terminal: take what it needs from the request"
    if name in ("attrgetter", "methodcaller", "get_type_hints", "ForwardRef", "singledispatch", "singledispatchmethod"):
        return "it reaches attributes by name or runs annotation strings as code"
    if name in ("Formatter", "get_field", "vformat"):
        return "string.Formatter follows attribute paths it is given as text"
    if _dunder(name):
        return "dunder attributes reach the interpreter's internals"
    if name in _OUT_OF_REACH:
        return "frames, code objects and native extensions are out of reach"
    if name.startswith("_"):
        return "private names of a module are out of reach"
    return "running or importing code from strings, and reaching scopes, is refused"


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""
