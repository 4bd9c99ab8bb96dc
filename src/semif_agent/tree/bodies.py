"""Import code-skill bodies under their manifest name, with clear errors.

A body is compiled from its file and executed as a fresh module named after
the manifest (``email.compose``). It is not registered in ``sys.modules`` (a
manifest name may shadow a real package, like the standard library's
``email``); loaded bodies are cached by file version, so an edited body is
picked up on the next run.
"""

from __future__ import annotations

import types
from pathlib import Path

from ..errors import SkillContractError, SkillLoadError
from ..skills import body_line, missing_functions
from .manifests import SkillManifest

_cache: dict[tuple[str, str, int, int], types.ModuleType] = {}


def load_body(manifest: SkillManifest) -> types.ModuleType:
    """The body module of ``manifest``, with callable ``predict`` and ``act``."""
    path = manifest.body_path
    if path is None or not path.is_file():
        raise SkillLoadError(f"skill {manifest.name!r} has no body (expected {path})")
    stat = path.stat()
    key = (manifest.name, str(path), stat.st_size, stat.st_mtime_ns)
    module = _cache.get(key)
    if module is None:
        module = _import(manifest.name, path)
        _cache[key] = module
    return module


def _import(name: str, path: Path) -> types.ModuleType:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillLoadError(f"{path}: cannot read the body of {name!r} ({exc})") from exc
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise SkillLoadError(f"{path}:{exc.lineno}: syntax error in {name!r}: {exc.msg}") from exc
    module = types.ModuleType(name)
    module.__file__ = str(path)
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        where = _body_frame(exc, path)
        raise SkillLoadError(f"{where}: importing {name!r} raised {type(exc).__name__}: {exc}") from exc
    missing = missing_functions(module)
    if missing:
        raise SkillContractError(f"{path}: the body of {name!r} does not define {' and '.join(missing)}")
    return module


def _body_frame(exc: BaseException, path: Path) -> str:
    """``file:line`` of the deepest frame inside the body, for error messages."""
    line = body_line(exc, path)
    return f"{path}:{line}" if line is not None else str(path)
