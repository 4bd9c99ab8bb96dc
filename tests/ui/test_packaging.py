"""Every template and static file of the web view is package data, so an installed wheel serves it."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import semif_agent

PACKAGE = Path(semif_agent.__file__).parent
PYPROJECT = PACKAGE.parents[1] / "pyproject.toml"


def test_the_ui_assets_are_package_data() -> None:
    settings = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    patterns = settings["tool"]["setuptools"]["package-data"]["semif_agent"]
    assets = [
        path.relative_to(PACKAGE).as_posix()
        for folder in ("ui/templates", "ui/static")
        for path in (PACKAGE / folder).iterdir()
        if path.is_file()
    ]
    assert {"ui/templates/base.html", "ui/static/app.js", "ui/static/app.css"} <= set(assets)
    assert [asset for asset in assets if not any(fnmatch.fnmatch(asset, pattern) for pattern in patterns)] == []
    extras = settings["project"]["optional-dependencies"]
    assert any("ui" in entry for entry in extras["all"]) and any("ui" in entry for entry in extras["test"])
