"""create_workspace: a loadable workspace, refusal of an existing one, force, and the template's shape."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from semif_agent.errors import WorkspaceError
from semif_agent.starter import TEMPLATE_DIR, create_workspace, template_files
from semif_agent.workspace import Workspace

NAME = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")
PATH_KEYS = {"data", "drafts", "contacts", "notes", "calendar", "todos", "files_root"}
WRITE_DIRS = ["data/drafts", "data/notes", "data/calendar", "data/todos"]


def test_creates_a_loadable_workspace(tmp_path):
    root = create_workspace(tmp_path / "new" / "agent")
    assert root == (tmp_path / "new" / "agent").resolve()
    ws = Workspace.load(root)
    config = ws.skill_config()
    assert PATH_KEYS <= set(config)
    assert config["drafts"] == str(root / "data" / "drafts")
    assert config["files_root"] == str(root / "files")
    assert ws.write_roots == tuple(root / d for d in WRITE_DIRS)
    assert all(folder.is_dir() and not any(folder.iterdir()) for folder in ws.write_roots)
    assert ws.log_path == root / "data" / "decisions.jsonl"
    assert ws.settings.log.enabled is True
    assert ws.categories_path.is_file()
    for rel in template_files():
        assert (root / rel).read_bytes() == (TEMPLATE_DIR / rel).read_bytes()


def test_creates_into_an_existing_empty_or_unrelated_directory(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    create_workspace(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
    assert (tmp_path / "semif.toml").is_file()


def test_refuses_an_existing_workspace(tmp_path):
    create_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="already a workspace"):
        create_workspace(tmp_path)


def test_refuses_a_file(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(WorkspaceError, match="not a directory"):
        create_workspace(tmp_path / "f")


def test_force_restores_missing_files_and_keeps_user_data(tmp_path):
    root = create_workspace(tmp_path)
    (root / "semif.toml").write_text('[engine]\nname = "lexical"\n')
    (root / "data" / "contacts.json").write_text('[{"name": "Zoe", "description": "me"}]')
    (root / "data" / "skills" / "todos" / "add.py").unlink()
    (root / "data" / "todos" / "todos.json").write_text("[]")
    create_workspace(root, force=True)
    assert (root / "semif.toml").read_text() == '[engine]\nname = "lexical"\n'
    assert json.loads((root / "data" / "contacts.json").read_text()) == [{"name": "Zoe", "description": "me"}]
    assert (root / "data" / "todos" / "todos.json").read_text() == "[]"
    assert (root / "data" / "skills" / "todos" / "add.py").is_file()


def test_force_adds_the_starter_entries_to_existing_categories(tmp_path):
    root = tmp_path
    (root / "data").mkdir()
    (root / "semif.toml").write_text("")
    mine = {"name": "email.compose", "category": "email", "description": "my own compose"}
    extra = {"name": "home.lights", "category": "home", "description": "lights"}
    (root / "data" / "categories.json").write_text(
        json.dumps(
            {"version": 1, "categories": [{"name": "home", "description": "the house"}], "skills": [mine, extra]}
        )
    )
    create_workspace(root, force=True)
    doc = json.loads((root / "data" / "categories.json").read_text())
    skills = {s["name"]: s for s in doc["skills"]}
    assert skills["email.compose"] == mine and skills["home.lights"] == extra
    assert "todos.complete" in skills and len(skills) == 12
    assert [c["name"] for c in doc["categories"]] == ["home", "email", "notes", "calendar", "files", "todos"]


def test_force_leaves_an_unreadable_categories_file_alone(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "semif.toml").write_text("")
    (tmp_path / "data" / "categories.json").write_text("{broken")
    create_workspace(tmp_path, force=True)
    assert (tmp_path / "data" / "categories.json").read_text() == "{broken"


def test_settings_file_has_exactly_the_documented_tables():
    settings = tomllib.loads((TEMPLATE_DIR / "semif.toml").read_text())
    assert set(settings) == {"engine", "paths", "skills", "log"}
    assert settings["engine"] == {}
    assert set(settings["paths"]) == PATH_KEYS
    assert settings["skills"] == {"write_dirs": WRITE_DIRS}
    assert [settings["paths"][kind] for kind in ("drafts", "notes", "calendar", "todos")] == WRITE_DIRS
    assert settings["log"] == {"enabled": True, "path": "data/decisions.jsonl"}
    assert '# name = "local"' in (TEMPLATE_DIR / "semif.toml").read_text()


def test_template_is_data_not_packages():
    assert not list(TEMPLATE_DIR.rglob("__init__.py"))
    assert not list(TEMPLATE_DIR.rglob("__pycache__"))
    assert not [p for p in TEMPLATE_DIR.rglob("*.py") if re.match(r"(test_.*|.*_test)\.py$", p.name)]
    assert not [p for p in template_files() if p.suffix == ".pyc"]


def test_categories_manifest_shape():
    doc = json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text())
    assert doc["version"] == 1
    categories = {c["name"] for c in doc["categories"]}
    assert len(categories) >= 5 and all(c["description"] for c in doc["categories"])
    assert len(doc["skills"]) >= 11
    descriptions = set()
    for skill in doc["skills"]:
        assert NAME.fullmatch(skill["name"]) and skill["name"].count(".") == 1
        assert skill["category"] in categories and skill["name"].startswith(skill["category"] + ".")
        assert skill["description"] not in descriptions
        descriptions.add(skill["description"])
        assert 20 <= len(skill["description"]) <= 160
        assert skill["allowed_inputs"] and skill["actions"] and all(isinstance(a, str) for a in skill["actions"])
        assert isinstance(skill["cost_budget"], int) and skill["cost_budget"] >= 1
        assert skill["decision_log_ref"] == f"data/decisions.jsonl?skill={skill['name']}"
        assert 3 <= len(skill["examples"]) <= 10  # enough for the act threshold to be measured, few enough to read
        category, leaf = skill["name"].split(".")
        assert (TEMPLATE_DIR / "data" / "skills" / category / f"{leaf}.py").is_file()
    bodies = {f"{p.parent.name}.{p.stem}" for p in (TEMPLATE_DIR / "data" / "skills").rglob("*.py")}
    assert bodies == {s["name"] for s in doc["skills"]}
    assert {len([s for s in doc["skills"] if s["category"] == c]) >= 2 for c in categories} == {True}


def test_contacts_are_realistic():
    contacts = json.loads((TEMPLATE_DIR / "data" / "contacts.json").read_text())
    assert 6 <= len(contacts) <= 8
    for contact in contacts:
        assert set(contact) == {"name", "email", "roles", "description"}
        assert isinstance(contact["roles"], list) and all(isinstance(r, str) and r for r in contact["roles"])
        assert re.fullmatch(r"[\w.]+@example\.com", contact["email"])
    assert len({c["name"].split()[0] for c in contacts}) == len(contacts)
    assert any(c["name"].startswith("Alice") for c in contacts)
    roles = [r for c in contacts for r in c["roles"]]
    assert {"sister", "landlord", "manager"} <= set(roles)


def test_compiled_files_in_an_installed_template_are_not_copied(tmp_path, monkeypatch):
    import shutil

    import semif_agent.starter as starter

    copy = tmp_path / "template"
    shutil.copytree(TEMPLATE_DIR, copy)
    (copy / "data" / "skills" / "email" / "__pycache__").mkdir()
    (copy / "data" / "skills" / "email" / "__pycache__" / "compose.cpython-311.pyc").write_bytes(b"\0")
    (copy / "data" / "skills" / "email" / "compose.pyc").write_bytes(b"\0")
    monkeypatch.setattr(starter, "TEMPLATE_DIR", copy)
    root = starter.create_workspace(tmp_path / "ws")
    assert not list(root.rglob("__pycache__")) and not list(root.rglob("*.pyc"))
    assert (root / "data" / "skills" / "email" / "compose.py").is_file()
