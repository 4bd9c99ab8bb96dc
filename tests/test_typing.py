"""What a user's type checker sees: every lazy package imports its exports under TYPE_CHECKING, the same names from
the same modules, and the package ships ``py.typed`` so a user's mypy checks calls into it."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

import semif_agent

PACKAGE = Path(semif_agent.__file__).resolve().parent
ROOT = PACKAGE.parents[1]


def lazy_packages() -> list[Path]:
    """Every ``__init__.py`` of the package that exports names through a module ``__getattr__``."""
    found = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        names = {n.id for node in ast.walk(tree) for n in ast.walk(node) if isinstance(n, ast.Name)}
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if "__getattr__" in names | defined:
            found.append(init)
    return found


def module_name(init: Path) -> str:
    return ".".join(init.parent.relative_to(PACKAGE.parent).parts)


def exported(tree: ast.Module) -> dict[str, str]:
    """``_EXPORTS``: public name -> module, as written."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("no _EXPORTS table")


def imported_for_type_checking(tree: ast.Module) -> dict[str, tuple[str, int]]:
    """The names imported under ``if TYPE_CHECKING:``: name -> (module, level), each re-exported as itself."""
    names: dict[str, tuple[str, int]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
            for alias in statement.names:
                assert alias.asname == alias.name, f"{ast.unparse(statement)}: import it `as` itself to re-export it"
                names[alias.name] = (statement.module or "", statement.level)
    return names


def test_every_lazy_package_is_found() -> None:
    found = {module_name(init) for init in lazy_packages()}
    assert {
        "semif_agent",
        "semif_agent.catalog",
        "semif_agent.loop",
        "semif_agent.routing",
        "semif_agent.sandbox",
    } <= found


@pytest.mark.parametrize("init", lazy_packages(), ids=module_name)
def test_a_lazy_package_imports_for_type_checking_exactly_what_it_exports(init: Path) -> None:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    exports, typed = exported(tree), imported_for_type_checking(tree)
    assert sorted(typed) == sorted(exports), "the TYPE_CHECKING imports and _EXPORTS name different things"
    package = module_name(init)
    for name, (module, level) in typed.items():
        written = "." * level + module
        assert importlib.util.resolve_name(written, package) == importlib.util.resolve_name(exports[name], package), (
            f"{package}.{name}: imported from {written} for type checking, from {exports[name]} at run time"
        )
    submodules = {p.stem for p in init.parent.glob("*.py")} | {p.parent.name for p in init.parent.glob("*/__init__.py")}
    shadowed = sorted(set(exports) & submodules)
    assert not shadowed, f"{package} exports {shadowed}, the names of its modules: importing the module replaces it"
    loaded = importlib.import_module(package)
    for name in exports:
        assert getattr(loaded, name) is getattr(importlib.import_module(exports[name], package), name)


def test_py_typed_ships_in_the_package_data() -> None:
    assert (PACKAGE / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    package_data = pyproject[pyproject.index("[tool.setuptools.package-data]") :].splitlines()[1]
    assert package_data.startswith("semif_agent = [") and '"py.typed"' in package_data


USER_FILE = """
    import semif_agent
    from semif_agent import Agent, DecisionLog, Router, tool

    reveal_type(semif_agent.Agent)
    reveal_type(Router)
    reveal_type(DecisionLog)

    @tool
    def greet(name: str) -> str:
        \"\"\"Greet someone by name.\"\"\"
        return f"Hello, {name}!"

    agent: Agent = semif_agent.Agent("scripted/echo").with_tools([greet])
    agent.with_no_such_method()
    semif_agent.Agnet
"""


@pytest.mark.slow
def test_a_users_mypy_sees_the_installed_packages_types(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")
    # An environment where the package is installed as `pip install -e` puts it: a .pth line naming the source
    # folder in site-packages (and one naming the dependencies this interpreter has).
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "semif_agent.pth").write_text(f"{PACKAGE.parent}\n{sysconfig.get_paths()['purelib']}\n")
    user = tmp_path / "user"
    user.mkdir()
    (user / "app.py").write_text(textwrap.dedent(USER_FILE))
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental", "app.py"],
        cwd=user,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = checked.stdout
    revealed = {
        line.split(":")[1]: line.split("Revealed type is ", 1)[1]
        for line in out.splitlines()
        if "Revealed type" in line
    }
    assert revealed["5"].startswith('"def (model: str | None =') and revealed["5"].endswith(
        '-> semif_agent.agent.agent.Agent"'
    ), out
    assert revealed["6"].endswith('-> semif_agent.chooser.router.Router"'), out
    assert revealed["7"].endswith('-> semif_agent.records.log.DecisionLog"'), out
    assert 'app.py:15: error: "Agent" has no attribute "with_no_such_method"' in out, out
    assert 'app.py:16: error: Module has no attribute "Agnet"' in out, out
    assert "Found 2 errors in 1 file" in out, out
