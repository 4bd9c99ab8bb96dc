"""Plug-ins by entry points: a real distribution, installed by pip, adds an engine, a provider and a strategy."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

import semif_agent
from semif_agent._plugins import PluginGroup
from semif_agent.engine.registry import BUILTIN_ENGINES
from semif_agent.errors import EngineConfigError
from semif_agent.llm.registry import BUILTIN_PROVIDERS
from semif_agent.routing.names import BUILTIN_STRATEGIES

SRC = Path(semif_agent.__file__).resolve().parents[1]
PYPROJECT = SRC.parent / "pyproject.toml"

PLUGIN_MODULE = '''\
"""semif-testplug: an engine, a provider and a routing strategy for semif."""

import dataclasses

from semif_agent.engine.lexical import LexicalEngine
from semif_agent.llm import ScriptedProvider
from semif_agent.routing.builtin import best_leaf


class TestplugEngine(LexicalEngine):
    name = "testplug"


def create_engine(settings):
    return TestplugEngine()


class TestplugProvider(ScriptedProvider):
    def __init__(self, model_id, **options):
        super().__init__(fn=lambda request: f"testplug {model_id} answers", model=model_id, name="testplug", **options)


class MarkedRoutes:
    """best_leaf, saying in each route's reason that this plug-in routed it."""

    name = "testplug"

    def __init__(self, inner):
        self.inner = inner

    async def aroute(self, text):
        return dataclasses.replace(await self.inner.aroute(text), reason="routed by testplug")


def create_strategy(inputs):
    return MarkedRoutes(best_leaf(inputs))


create_strategy.needs = {"scores"}
'''

ENTRY_POINTS = """\
[semif_agent.engines]
testplug = semif_testplug:create_engine
broken = semif_testplug:no_such_factory

[semif_agent.providers]
testplug = semif_testplug:TestplugProvider

[semif_agent.strategies]
testplug = semif_testplug:create_strategy
broken = semif_testplug.missing:create_strategy
"""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(directory: Path, name: str, version: str, files: dict[str, str], entry_points: str) -> Path:
    """A wheel of ``files`` (path -> text) whose metadata declares ``entry_points``, written with the stdlib."""
    dist_info = f"{name.replace('-', '_')}-{version}.dist-info"
    contents = {
        **files,
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/entry_points.txt": entry_points,
    }
    record = [_record_line(path, text.encode()) for path, text in contents.items()] + [f"{dist_info}/RECORD,,"]
    wheel = directory / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
        archive.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return wheel


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where pip installed semif-testplug 1.0 (to put on PYTHONPATH)."""
    root = tmp_path_factory.mktemp("testplug")
    wheel = build_wheel(root, "semif-testplug", "1.0", {"semif_testplug/__init__.py": PLUGIN_MODULE}, ENTRY_POINTS)
    target = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture
def with_plugin(semif, plugin_path: Path):
    """``semif`` in a new process that has semif-testplug installed."""
    path = os.pathsep.join([str(plugin_path), str(SRC)])
    return lambda *args, **kwargs: semif(*args, env={"PYTHONPATH": path}, **kwargs)


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "plug-in" in line]


def test_a_plugin_engine_and_strategy_route_a_run(with_plugin, make_workspace) -> None:
    root = make_workspace()
    done = with_plugin(
        "run", "Email Alice the report", "-w", str(root), "--engine", "testplug", "--strategy", "testplug", "--json"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["skill"], result["route_reason"]) == ("email.compose", "routed by testplug")
    assert result["assessment"]["engine"] == "testplug"
    assert _warnings(done.stderr) == []  # the broken entries were never asked for, so never imported


def test_the_workspace_settings_name_a_plugin_engine(with_plugin, make_workspace) -> None:
    root = make_workspace(settings='[engine]\nname = "testplug"\n')
    done = with_plugin("run", "Email Alice the report", "-w", str(root), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assessment"]["engine"] == "testplug"


def test_a_broken_plugin_is_one_warning_and_the_rest_still_works(with_plugin, make_workspace, tmp_path: Path) -> None:
    root = make_workspace()
    dataset = tmp_path / "requests.jsonl"
    dataset.write_text('{"text": "Email Alice the report", "skill": "email.compose"}\n', encoding="utf-8")
    done = with_plugin("eval", str(dataset), "-w", str(root), "--engine", "lexical", "--strategy", "all", "--json")
    assert done.returncode == 0, done.stderr
    assert _warnings(done.stderr) == [
        "semif: plug-in routing strategy 'broken' from semif-testplug 1.0 failed to load: "
        "ModuleNotFoundError: No module named 'semif_testplug.missing'; skipped"
    ]
    measured = json.loads(done.stdout)["strategies"]
    assert set(measured) == {"chain", "best_leaf", "beam", "shortlist", "examples", "testplug"}
    assert measured["testplug"]["accuracy"] == 1.0


def test_asking_for_a_broken_plugin_is_one_warning_and_one_error(with_plugin, make_workspace) -> None:
    root = make_workspace()
    done = with_plugin("run", "Email Alice", "-w", str(root), "--engine", "broken")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "semif: plug-in engine 'broken' from semif-testplug 1.0 failed to load: "
        "AttributeError: module 'semif_testplug' has no attribute 'no_such_factory'; skipped",
        "Error: engine 'broken' is not available: its plug-in failed to load",
    ]


def test_an_unknown_strategy_names_the_plugins_too(with_plugin, make_workspace) -> None:
    done = with_plugin("run", "Email Alice", "-w", str(make_workspace()), "--strategy", "warp")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: unknown routing strategy 'warp' (known: chain, best_leaf, beam, shortlist, examples, learned, "
        "broken, testplug)"
    ]


def test_a_plugin_provider_answers_for_its_models(plugin_path: Path) -> None:
    code = textwrap.dedent(
        """
        from semif_agent import Agent
        from semif_agent.engine import engine_names
        from semif_agent.llm import create_provider, provider_names

        print(create_provider("testplug/small").invoke("hi").text)
        agent = Agent(model="testplug/big")
        print("".join(e.text for e in agent.stream("hi") if e.type == "text_delta"))
        print("testplug" in provider_names(), "testplug" in engine_names())
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(SRC)])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["testplug small answers", "testplug big answers", "True True"]


def test_the_builtin_tables_are_the_packages_own_entry_points() -> None:
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared["semif_agent.engines"] == BUILTIN_ENGINES
    assert declared["semif_agent.providers"] == BUILTIN_PROVIDERS
    assert declared["semif_agent.strategies"] == BUILTIN_STRATEGIES


def test_without_our_metadata_the_builtin_table_stands_in(capsys: pytest.CaptureFixture[str]) -> None:
    group = PluginGroup("semif_agent.no_such_group", "gadget", {"plain": "json:dumps"}, EngineConfigError)
    assert group.names() == ["plain"]
    assert group.load("plain")([1]) == "[1]"
    with pytest.raises(EngineConfigError, match=r"unknown gadget 'other' \(known: plain\)"):
        group.load("other")
    assert capsys.readouterr().err == ""


def test_names_are_listed_without_importing_and_a_failure_is_said_once(
    plugin_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(plugin_path))
    engines = PluginGroup("semif_agent.engines", "engine", BUILTIN_ENGINES, EngineConfigError)
    assert engines.names() == sorted([*BUILTIN_ENGINES, "testplug", "broken"])
    assert "semif_testplug" not in sys.modules
    for _ in range(2):
        with pytest.raises(EngineConfigError, match="engine 'broken' is not available"):
            engines.load("broken")
    assert capsys.readouterr().err.count("plug-in engine 'broken' from semif-testplug 1.0 failed") == 1
    assert engines.load("testplug")({}).name == "testplug"
    sys.modules.pop("semif_testplug")  # imported here only: the other tests import it in their own processes


def test_building_a_builtin_reads_no_package_metadata() -> None:
    code = textwrap.dedent(
        """
        import sys
        from semif_agent.engine import create_engine
        from semif_agent.routing import create_strategy
        from semif_agent.tree.tree import SkillTree

        create_strategy("best_leaf", SkillTree(), create_engine("lexical"))
        print("importlib.metadata" in sys.modules)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert (done.returncode, done.stdout) == (0, "False\n"), done.stderr
