"""The contract checker names every violation with its criterion and line."""

from __future__ import annotations

import textwrap

import pytest

from semif_agent._sync import run_sync
from semif_agent.errors import InvalidArgumentError
from semif_agent.forge import acheck_skill, check_source
from semif_agent.tree.tree import SkillTree

from ..conftest import SEED_BODY

HEADER = "from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction\n"


def check(body: str, name: str = "notes.tag", category: str = "notes"):
    return check_source(HEADER + textwrap.dedent(body), name=name, category=category)


GOOD = """
def predict(ctx, request):
    decision = DecisionRequest(request.text, "Which tag?", [Option("work"), Option("none", "No tag.")])
    result = ctx.engine.call(decision)
    return Prediction(text=result.selected, decisions=[(decision, result)])

def act(ctx, request, prediction):
    if prediction.text == "none":
        return ActionResult(action_log="notes.tag: no tag fits", new_state=request.text)
    path = ctx.data_path("tags.txt")
    path.write_text(prediction.text)
    return ActionResult(action_log=f"notes.tag: tagged {prediction.text}", new_state="tagged")
"""


def test_the_seed_example_passes_as_is() -> None:
    report = check_source(SEED_BODY, name="email.compose", category="email")
    assert report.ok, report.render()


def test_a_good_body_passes() -> None:
    assert check(GOOD).ok


@pytest.mark.parametrize(
    ("body", "criterion", "line", "fragment"),
    [
        ("def predict(ctx, request)\n    pass\n", 1, 2, "does not compile"),
        (
            GOOD.replace("def act(ctx, request, prediction):", "def perform(ctx, request, prediction):"),
            1,
            1,
            "does not define act",
        ),
        (GOOD.replace("def predict(ctx, request):", "def predict(ctx):"), 1, 3, "predict must take (ctx, request)"),
        (GOOD.replace("def predict(ctx, request):", "async def predict(ctx, request):"), 1, 3, "not async"),
        ("import requests\n" + GOOD, 3, 2, "'requests': a body may import only the standard library"),
        ("import subprocess\n" + GOOD, 3, 2, "'subprocess': starting programs hides what runs"),
        (
            GOOD.replace("    path = ctx.data_path", "    __import__('os')\n    path = ctx.data_path"),
            3,
            11,
            "uses __import__",
        ),
        (GOOD.replace("    path = ctx.data_path", "    eval('1+1')\n    path = ctx.data_path"), 3, 11, "uses eval"),
        (
            GOOD.replace("    path = ctx.data_path", "    import os; os.system('ls')\n    path = ctx.data_path"),
            3,
            11,
            "uses os.system: starting programs hides what runs",
        ),
        (
            GOOD.replace(
                "    result = ctx.engine.call(decision)",
                "    from semif_agent.engine import DecisionResult\n    result = DecisionResult(selected='work')",
            ),
            4,
            6,
            "builds a DecisionResult itself",
        ),
        ("class FakeEngine:\n    pass\n" + GOOD, 4, 2, "defines FakeEngine"),
        (
            GOOD.replace(
                '    return ActionResult(action_log=f"notes.tag: tagged {prediction.text}", new_state="tagged")',
                '    return "done"',
            ),
            4,
            13,
            "act must return an ActionResult, not 'done'",
        ),
        (
            GOOD.replace("    result = ctx.engine.call(decision)", "    result = type('R', (), {'selected': 'work'})"),
            4,
            1,
            "never asks ctx.engine.call",
        ),
    ],
)
def test_each_violation_is_named_with_its_criterion_and_line(body, criterion, line, fragment) -> None:
    report = check(body)
    assert not report.ok
    matching = [v for v in report.violations if v.criterion == criterion and fragment in v.message]
    assert matching, report.render()
    assert matching[0].line == line, report.render()


def test_name_and_category_are_checked() -> None:
    report = check(GOOD, name="Notes.Tag!", category="")
    assert [v.criterion for v in report.violations] == [2, 2]
    assert "does not match" in report.violations[0].message and "no category" in report.violations[1].message


def test_all_violations_are_reported_not_just_the_first() -> None:
    body = "import numpy\nimport socket\n" + GOOD.replace("def act(ctx, request, prediction):", "def act(ctx):")
    report = check(body)
    assert {3, 1} <= report.criteria()
    assert len(report.violations) >= 3


def in_act(*lines: str) -> str:
    """GOOD with ``lines`` at the start of act's work (line 11 onwards)."""
    return GOOD.replace(
        "    path = ctx.data_path", "".join(f"    {line}\n" for line in lines) + "    path = ctx.data_path"
    )


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("from os import system\n" + GOOD, 2, "imports system from os: starting programs"),
        ("import importlib\n" + GOOD, 2, "imports 'importlib'"),
        ("import builtins\n" + GOOD, 2, "imports 'builtins'"),
        ("import ctypes\n" + GOOD, 2, "imports 'ctypes'"),
        ("import socket\n" + GOOD, 2, "imports 'socket'"),
        ("import urllib.request\n" + GOOD, 2, "imports 'urllib.request'"),
        ("from urllib import request as fetch\n" + GOOD, 2, "imports the module urllib.request through urllib"),
        ("import _posixsubprocess\n" + GOOD, 2, "private modules are the standard library's internals"),
        ("import unittest.__main__\n" + GOOD, 2, "private modules are the standard library's internals"),
        ("from semif_agent.loop.guard import unguarded\n" + GOOD, 2, "it is the host's, not a body's"),
        ("from semif_agent import Agent\n" + GOOD, 2, "imports Agent from semif_agent: it is the host's"),
        ("from semif_agent.engine import create_engine\n" + GOOD, 2, "imports create_engine from semif_agent.engine"),
        ("from email.utils import socket\n" + GOOD, 2, "imports the module socket through email.utils"),
        ("from functools import singledispatch\n" + GOOD, 2, "runs annotation strings as code"),
        ("from json import *\n" + GOOD, 2, "imports * from json"),
        ("from .helpers import x\n" + GOOD, 2, "relative imports are not allowed"),
        (in_act("import pathlib", "pathlib.os.system('id')"), 12, "uses pathlib.os.system (os.system): starting"),
        (in_act("from semif_agent import skills", "skills.os.fork()"), 12, "uses skills.os.fork (os.fork): starting"),
        (in_act("import os as o", "o.path.os.execv('/bin/sh', [])"), 12, "uses o.path.os.execv (os.execv)"),
        (in_act("import urllib.parse", "urllib.request.urlopen('http://x')"), 12, "reaches the module urllib.request"),
        (in_act("import email.utils", "email.utils.socket.socket()"), 12, "reaches the module socket through email"),
        (in_act("from semif_agent import engine", "engine.create_engine('local')"), 12, "it is the host's"),
        (in_act("import json", "loader = json"), 12, "uses the module json as a value"),
        (in_act("import json", "json.loads = print"), 12, "changes json.loads: bodies may not change modules"),
        (in_act("import json", "json = None"), 12, "rebinds 'json'"),
        (
            in_act("from semif_agent.skills import ActionContext", "ActionContext.check_write = print"),
            12,
            "changes ActionContext.check_write",
        ),
        (in_act("name = 'lo' + 'ads'", "getattr(request, name)"), 12, "getattr() with a computed attribute name"),
        (in_act("getattr(ctx, '__class__')"), 11, "calls getattr() for '__class__'"),
        (in_act("fetch = getattr"), 11, "uses getattr as a value"),
        (in_act("setattr(ctx, 'write_roots', ())"), 11, "uses setattr"),
        (in_act("__import__('os')"), 11, "uses __import__"),
        (in_act("exec('1')"), 11, "uses exec"),
        (in_act("run = eval"), 11, "uses eval"),
        (in_act("compile('1', 'x', 'exec')"), 11, "uses compile"),
        (in_act("globals()"), 11, "uses globals"),
        (in_act("exit()"), 11, "a body may not stop the process"),
        (in_act("kind = ctx.__class__"), 11, "uses .__class__"),
        (in_act("scope = predict.__globals__"), 11, "uses .__globals__"),
        (in_act("found = object.__subclasses__()"), 11, "uses .__subclasses__"),
        (in_act("found = __builtins__"), 11, "uses __builtins__"),
        (in_act("frame = (x for x in []).gi_frame"), 11, "uses .gi_frame"),
        (in_act("import random", "random._inst"), 12, "uses the private attribute ._inst"),
        (in_act("import typing", "typing.get_type_hints(act)"), 12, "uses .get_type_hints"),
        (
            in_act("import sqlite3", "sqlite3.connect(':memory:').enable_load_extension(True)"),
            12,
            "uses .enable_load_extension",
        ),
        (in_act("sql = \"ATTACH DATABASE '/tmp/x.db' AS other\""), 11, "attaches or writes another database file"),
        (in_act("shown = '{0.__class__}'.format(ctx)"), 11, "a format string that reads private, dunder or frame"),
    ],
)
def test_each_way_around_the_allow_list_is_refused_with_its_line(body: str, line: int, fragment: str) -> None:
    report = check(body)
    matching = [v for v in report.violations if fragment in v.message]
    assert matching, report.render()
    assert matching[0].line == line and matching[0].criterion in (3, 4), report.render()


@pytest.mark.parametrize(
    "lines",
    [
        ("import xml.etree.ElementTree as ET", "ET.fromstring('<a/>')"),
        ("import xml.etree.ElementTree", "xml.etree.ElementTree.fromstring('<a/>')"),
        ("from urllib.parse import quote", "quote('a b')"),
        ("import re", "re.compile('x')"),
        ("from re import compile", "compile('x')"),
        ("import csv, statistics, textwrap, zoneinfo", "statistics.mean([1, 2])"),
        ("from email.utils import formataddr", "formataddr(('Alice', 'alice@example.com'))"),
        ("from semif_agent import skills", "skills.Option('x')"),
        ("kind = type(ctx).__name__", "note = 'attach the report as a PDF'"),
        ("config = getattr(ctx, 'config')", "shown = '{0.text}'.format(request)"),
        # the seed's rule: "the stdlib and the agent package" (its kernel)
        ("import os", "names = os.listdir(ctx.config['drafts'])", "where = os.environ.get('HOME', '')"),
        ("import sys", "sys.stdout.write(request.text)", "size = sys.getsizeof(request)"),
        ("import io", "buffer = io.StringIO()", "buffer.write(request.text)"),
        ("import tempfile", "with tempfile.TemporaryDirectory() as scratch:", "    kept = scratch"),
        ("with open(ctx.data_path('notes.txt'), 'a', encoding='utf-8') as out:", "    out.write(request.text)"),
        ("import pathlib", "pathlib.Path(ctx.config['drafts']).mkdir(exist_ok=True)"),
        ("import json", "json.dumps({'text': request.text})"),
        ("import sqlite3", "sqlite3.connect(str(ctx.data_path('db.sqlite'))).execute('SELECT 1')"),
        ("import shutil, threading, signal, types", "kept = types.SimpleNamespace(a=shutil.which)"),
        ("import semif_agent.skills.dates", "semif_agent.skills.dates.read_when(request.text, None)"),
        ("from semif_agent.engine import DecisionRequest, DecisionResult, NONE_ID, Option", "ids = [NONE_ID]"),
        ("from semif_agent.engine.decisions import softmax", "softmax([1.0, 2.0])"),
        ("from semif_agent import engine", "kind = engine.Option"),
    ],
)
def test_what_a_body_legitimately_needs_passes(lines: tuple[str, ...]) -> None:
    report = check(in_act(*lines))
    assert report.ok, report.render()


REFUSALS = [
    (("import requests",), "third-party packages are not installed where it runs"),
    (("import numpy",), "third-party packages are not installed where it runs"),
    (("import socket",), "a body acts on the workspace's data; it has no network"),
    (("import urllib.request",), "a body acts on the workspace's data; it has no network"),
    (("import asyncio",), "a body acts on the workspace's data; it has no network"),
    (("import ctypes",), "it reaches native code, frames or live objects past what the body says"),
    (("import subprocess",), "starting programs hides what runs: do the work in Python"),
    (("import os", "os.system('ls')"), "starting programs hides what runs: do the work in Python"),
    (("import os", "os.execv('/bin/ls', ['ls'])"), "starting programs hides what runs: do the work in Python"),
    (("import os", "os.spawnl(os.P_WAIT, '/bin/ls')"), "starting programs hides what runs: do the work in Python"),
    (("import os", "os.fork()"), "starting programs hides what runs: do the work in Python"),
    (("import importlib",), "it runs code named in a string or in data, which hides what a body does"),
    (("import pickle",), "it runs code named in a string or in data, which hides what a body does"),
    (("import sys", "sys.modules['json']"), "the import system decides what code runs"),
    (("import sys", "sys.path.insert(0, ctx.config['drafts'])"), "the import system decides what code runs"),
    (("import types", "types.FunctionType"), "building functions and code objects by hand hides what a body runs"),
    (("import sys", "sys.exit(0)"), "a body may not stop the process; return an ActionResult instead"),
    (("import _thread",), "private modules are the standard library's internals"),
    (("import semif_agent.loop",), "it is the host's, not a body's"),
    (("__import__('json')",), "dunder names reach the interpreter's internals"),
    (("exec('x = 1')",), "running or importing code from strings, and reaching scopes, is refused"),
]
"""Bodies each refused for one reason: its lines in act, and the reason."""


@pytest.mark.parametrize(("lines", "why"), REFUSALS)
def test_each_refusal_says_why(lines: tuple[str, ...], why: str) -> None:
    report = check(in_act(*lines))
    assert [v.criterion for v in report.violations if why in v.message] == [3], report.render()


def test_the_rule_is_the_standard_library_and_the_kernel() -> None:
    from semif_agent.contract import KERNEL_MODULES, allowed_module

    for name in ("os", "sys", "io", "tempfile", "pathlib", "json", "sqlite3", "os.path", "xml.sax", "http", "fcntl"):
        assert allowed_module(name), name
    for name in KERNEL_MODULES:
        assert allowed_module(name) and allowed_module(name + ".anything"), name
    for name in ("semif_agent", "semif_agent.engine", "semif_agent.loop", "semif_agent.contract", "requests"):
        assert not allowed_module(name), name


def _rule_three(text: str) -> str:
    """The text of the contract's rule 3 after its title, whitespace folded."""
    start = text.index("3. **The standard library and the kernel only.**")
    rule = text[start : text.index("4. **Decisions go through the engine.**")]
    return " ".join(rule.split("**", 2)[2].split())


def test_the_contract_and_the_readme_state_the_rule_in_the_same_words() -> None:
    from pathlib import Path

    from semif_agent.forge import contract_text

    rule = _rule_three(contract_text())
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "the standard library" in rule and rule in readme


def test_the_contract_names_every_module_the_checker_refuses_and_they_are_few() -> None:
    import sys

    from semif_agent.contract import module_refusal
    from semif_agent.forge import contract_text

    rule = _rule_three(contract_text())
    dotted = ["http.client", "http.server", "urllib.request", "logging.config", "unittest.mock"]
    names = [n for n in sys.stdlib_module_names if not n.startswith("_")] + dotted
    refused = sorted(n for n in names if module_refusal(n))
    assert set(dotted) <= set(refused)
    assert [n for n in refused if f"`{n}`" not in rule] == []
    assert len(refused) < len(names) / 4, "the rule allows the standard library, less a few modules"


@pytest.mark.parametrize("lines", [lines for lines, _ in REFUSALS if not lines[0].startswith(("__import__", "exec"))])
def test_the_contract_given_to_the_model_gives_each_reason_the_checker_gives(lines: tuple[str, ...]) -> None:
    from semif_agent.forge import contract_text

    rule = _rule_three(contract_text())
    messages = [v.message for v in check(in_act(*lines)).violations]
    assert messages and all(m.split(": ", 1)[1] in rule for m in messages), messages


def test_the_gate_without_a_workspace_is_refused_and_the_static_check_needs_none() -> None:
    manifest = {"name": "notes.add", "category": "notes"}
    with pytest.raises(InvalidArgumentError, match="gate runs against a workspace"):
        run_sync(acheck_skill(SEED_BODY, manifest, workspace=None, tree=SkillTree()))
    report = run_sync(acheck_skill(SEED_BODY, manifest, workspace=None, tree=SkillTree(), gate=False))
    assert report.ok and report.gate is None


# The escapes a red-team pass found past the checker: each refused with its line.
@pytest.mark.parametrize(
    ("lines", "line", "fragment"),
    [
        (("match predict:", "    case object(__globals__=g):", "        pass"), 12, "class pattern on __globals__"),
        (("match ctx:", "    case object(_secret=s):", "        pass"), 12, "class pattern on the private attribute"),
        (("match ctx:", "    case object(gi_frame=f):", "        pass"), 12, "class pattern on gi_frame"),
        (("scope = {'a': 1}['__globals__']",), 11, "names __globals__ in a string"),
        (("key = '__globals__'",), 11, "names __globals__ in a string"),
        (("from string import Formatter",), 11, "imports Formatter from string"),
        (("import string", "string.Formatter().get_field('0.' + '__glo' + 'bals__', [act], {})"), 12, ".Formatter"),
        (("template = request.text", "shown = template.format(ctx)"), 12, "format string built at run time"),
        (("shown = ('{0.' + '__class__}').format(ctx)",), 11, "reads private, dunder or frame"),
        (("shown = str.format(request.text, ctx)",), 11, "format string built at run time"),
        (("shown = f'{request.text}'.format_map({})",), 11, "format string built at run time"),
        (
            ("import sqlite3", "sqlite3.connect(':memory:').execute('ATT' + 'ACH DATABASE ? AS x', ('/tmp/x',))"),
            12,
            "attaches",
        ),
        (
            (
                "import sqlite3",
                "verb = 'ATT' + 'ACH'",
                "sqlite3.connect(':memory:').execute(f'{verb} ? AS x', ('/t',))",
            ),
            13,
            "attaches",
        ),
        (("import sqlite3", "sqlite3.connect(':memory:').execute('VACUUM %s ?' % 'INTO', ('/t',))"), 12, "attaches"),
        (
            ("import sqlite3", "sqlite3.connect(':memory:').execute(' '.join(['vacuum', 'into ?']), ('/t',))"),
            12,
            "attaches",
        ),
        (("import sqlite3", "sqlite3.connect(':memory:').executescript('attach/**/database ? as x')"), 12, "attaches"),
        (("import sqlite3", "sqlite3.connect(':memory:').execute(request.text)"), 12, "cannot follow"),
        (("import sqlite3", "run = sqlite3.connect(':memory:').execute"), 12, "uses .execute as a value"),
    ],
)
def test_each_named_escape_is_refused_with_its_line(lines: tuple[str, ...], line: int, fragment: str) -> None:
    report = check(in_act(*lines))
    matching = [v for v in report.violations if fragment in v.message]
    assert matching, report.render()
    assert matching[0].line == line and matching[0].criterion == 3, report.render()


@pytest.mark.parametrize(
    "lines",
    [
        ("import sqlite3", "order = 'id DESC'", "sqlite3.connect(':memory:').execute(f'SELECT 1 ORDER BY {order}')"),
        (
            "import sqlite3",
            "marks = ', '.join('?' for _ in range(3))",
            "sqlite3.connect(':memory:').execute(f'SELECT {marks}', (1, 2, 3))",
        ),
        ("template = 'Dear {name}'", "shown = template.format(name=request.text)"),
        ("shown = 'see __init__.py and {0.text}'.format(request)",),
        ("import sqlite3", "sqlite3.connect(':memory:').execute('SELECT ? AS attached', ('x',))"),
    ],
)
def test_strings_built_from_literals_the_checker_can_follow_pass(lines: tuple[str, ...]) -> None:
    report = check(in_act(*lines))
    assert report.ok, report.render()
