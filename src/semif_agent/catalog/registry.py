"""The shared catalog of SKILL.md skills: :class:`SkillCatalog`.

A catalog is filled by scans (``scan_builtin``, ``scan_custom``, ``scan_env``,
``scan_conventional``) and by registration from Python (``register``,
``register_folder``). The first source to claim a skill id keeps it; every
later claim is a collision, reported as a :class:`SkillCatalogWarning` and
kept in :attr:`SkillCatalog.issues`.

Scanning is one pass over the folders. :meth:`SkillCatalog.refresh` re-runs
every scan in its original order: it re-stats each SKILL.md (and the files its
frontmatter names), re-parses only the changed ones, and picks up added and
removed folders. Documents and files are always read from disk.

Many :class:`~.runtime.AgentSkillRuntime` objects share one catalog and only
read it; per-agent state never lives here.
"""

from __future__ import annotations

import errno
import os
import stat
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from .descriptor import SkillDescriptor
from .errors import SkillCatalogWarning, SkillCollisionError, SkillNotFound, SkillParseError, SkillPathError
from .frontmatter import read_skill_md_text
from .loader import SKILL_MD_NAMES, LoadResult, load_skill, search_skill_folders
from .locations import BUILTIN_NAMESPACE, BUILTIN_ROOT, CUSTOM_NAMESPACE, SkillLocation, conventional_locations
from .paths import OUTSIDE_SKILL, open_file_inside, open_skill_folder, resolve_inside

_Signature = tuple[object, ...]


@dataclass(frozen=True)
class SkillIssue:
    """A problem met while loading: ``kind`` is ``warning``, ``skipped`` or ``shadowed``."""

    kind: str
    path: Path
    message: str
    skill_id: str = ""

    def __str__(self) -> str:
        subject = f"{self.skill_id} ({self.path})" if self.skill_id else str(self.path)
        return f"{subject}: {self.message}"


@dataclass(frozen=True)
class RefreshReport:
    """What a :meth:`SkillCatalog.refresh` changed, as sorted skill ids."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass
class _ScanSource:
    """One scanned folder of skill folders (or a single skill folder when ``only`` is set)."""

    root: Path
    namespace: str
    source: str
    source_label: str
    only: str | None = None
    cache: dict[str, tuple[_Signature, LoadResult]] = field(default_factory=dict)


@dataclass
class _PythonSkill:
    descriptor: SkillDescriptor
    doc: str | None = None


class SkillCatalog:
    """The skills known to a process, by id (``namespace@name``) and by display name."""

    def __init__(self) -> None:
        """An empty catalog."""
        self._layers: list[_ScanSource | _PythonSkill] = []
        self._skills: dict[str, SkillDescriptor] = {}
        self._docs: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = {}
        self._by_hook: dict[str, list[str]] = {}
        self._sorted: list[SkillDescriptor] | None = None
        self._issues: list[SkillIssue] = []
        self._builtin_scanned = False

    # -- scanning ---------------------------------------------------------

    def scan_builtin(self, root: Path | None = None) -> list[str]:
        """Scan the built-in skills once (namespace ``built-in``); later calls add nothing."""
        if self._builtin_scanned:
            return []
        self._builtin_scanned = True
        return self._scan(_ScanSource(Path(root or BUILTIN_ROOT), BUILTIN_NAMESPACE, "built-in", "built-in"))

    def scan_custom(self, skills_root: Path, namespace: str = CUSTOM_NAMESPACE) -> list[str]:
        """Scan a folder of skill folders into ``namespace``; returns the ids added."""
        namespace = namespace.strip() or CUSTOM_NAMESPACE
        return self._scan(_ScanSource(Path(skills_root), namespace, "custom", str(skills_root)))

    def scan_env(self, skills_dir: Path, env_name: str) -> list[str]:
        """Scan an environment module's skills into namespace ``env:<env_name>``."""
        namespace = f"env:{env_name.strip() or 'unknown'}"
        return self._scan(_ScanSource(Path(skills_dir), namespace, "env", str(skills_dir)))

    def scan_folder(self, folder: str | os.PathLike[str], namespace: str = CUSTOM_NAMESPACE) -> list[str]:
        """Scan a single skill folder (not a folder of skills) into ``namespace``."""
        folder = Path(folder)
        return self._scan(_ScanSource(folder.parent, namespace, "custom", str(folder), only=folder.name))

    def scan_location(self, location: SkillLocation) -> list[str]:
        """Scan one :class:`~.locations.SkillLocation`."""
        return self._scan(_ScanSource(location.path, location.namespace, location.source, location.label))

    def scan_conventional(
        self,
        workspace_root: str | os.PathLike[str] | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        include_user: bool = True,
    ) -> list[str]:
        """Scan the conventional locations in precedence order (see :mod:`.locations`)."""
        added: list[str] = []
        for location in conventional_locations(workspace_root, home=home, include_user=include_user):
            added += self.scan_location(location)
        return added

    @classmethod
    def for_workspace(
        cls,
        workspace_root: str | os.PathLike[str],
        *,
        home: str | os.PathLike[str] | None = None,
        include_user: bool = True,
    ) -> SkillCatalog:
        """A catalog holding the built-in skills and a workspace's conventional skills."""
        catalog = cls()
        catalog.scan_builtin()
        catalog.scan_conventional(workspace_root, home=home, include_user=include_user)
        return catalog

    def refresh(self) -> RefreshReport:
        """Re-run every scan and registration in order; pick up edited, added and removed skills."""
        before = dict(self._skills)
        self._skills, self._docs, self._by_name, self._by_hook = {}, {}, {}, {}
        self._sorted = None
        self._issues = []
        for layer in self._layers:
            if isinstance(layer, _ScanSource):
                for result in self._load_source(layer):
                    self._admit_result(result)
            else:
                self._admit(layer.descriptor, doc=layer.doc)
        added = sorted(set(self._skills) - set(before))
        removed = sorted(set(before) - set(self._skills))
        changed = sorted(sid for sid in set(before) & set(self._skills) if before[sid] != self._skills[sid])
        return RefreshReport(tuple(added), tuple(removed), tuple(changed))

    # -- registration from Python -------------------------------------------

    def register(self, descriptor: SkillDescriptor, *, doc: str | None = None, replace: bool = False) -> str:
        """Add a skill built in Python; ``doc`` stands in for its SKILL.md text.

        A taken id raises :class:`SkillCollisionError` unless ``replace`` is true;
        a replacing registration takes precedence over every scan, also on refresh.
        """
        existing = descriptor.skill_id in self._skills
        if existing and not replace:
            raise SkillCollisionError(f"skill id {descriptor.skill_id!r} is already registered")
        layer = _PythonSkill(descriptor, doc)
        if existing:
            self._layers = [item for item in self._layers if not _is_python(item, descriptor.skill_id)]
            self._layers.insert(0, layer)
            self.refresh()
        else:
            self._layers.append(layer)
            self._admit(descriptor, doc=doc)
        return descriptor.skill_id

    def register_folder(
        self,
        folder: str | os.PathLike[str],
        *,
        namespace: str = CUSTOM_NAMESPACE,
        source: str = "python",
        source_label: str = "",
    ) -> str:
        """Add one skill folder from Python (loaded leniently, refreshed like scans); returns its id."""
        folder = Path(folder)
        layer = _ScanSource(folder.parent, namespace, source, source_label or str(folder), only=folder.name)
        results = self._load_source(layer)
        if not results or results[0].descriptor is None:
            reason = results[0].skipped if results else "no SKILL.md"
            raise SkillParseError(reason, path=str(folder))
        skill_id = results[0].descriptor.skill_id
        if skill_id in self._skills:
            raise SkillCollisionError(f"skill id {skill_id!r} is already registered")
        self._layers.append(layer)
        self._admit_result(results[0])
        return skill_id

    def unregister(self, skill_id: str) -> bool:
        """Remove a skill registered from Python; scanned skills leave only when their folder does."""
        kept = [layer for layer in self._layers if not _is_python(layer, skill_id)]
        if len(kept) == len(self._layers):
            return False
        self._layers = kept
        self.refresh()
        return True

    # -- queries ----------------------------------------------------------

    def list_all(self) -> list[SkillDescriptor]:
        """Every registered skill, sorted by id."""
        if self._sorted is None:
            self._sorted = [self._skills[sid] for sid in sorted(self._skills)]
        return list(self._sorted)

    def get(self, skill_id: str) -> SkillDescriptor | None:
        """The skill with that id, or None."""
        return self._skills.get(skill_id)

    def find_by_name(self, name: str) -> list[SkillDescriptor]:
        """The skills with that display name, sorted by id (an index lookup)."""
        return [self._skills[sid] for sid in sorted(self._by_name.get(name, ()))]

    def list_hooks(self, hook_type: str) -> list[SkillDescriptor]:
        """The skills declaring ``hook_type``, sorted by id."""
        return [self._skills[sid] for sid in sorted(self._by_hook.get(hook_type, ()))]

    @property
    def issues(self) -> list[SkillIssue]:
        """Problems met by the scans so far (since the last refresh)."""
        return list(self._issues)

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, skill_id: object) -> bool:
        return skill_id in self._skills

    def read_skill_doc(self, skill_id: str) -> str:
        """The skill's SKILL.md text, read now; empty when unknown or unreadable."""
        if skill_id in self._docs:
            return self._docs[skill_id]
        info = self._skills.get(skill_id)
        if info is None or info.skill_md is None:
            return ""
        try:
            return read_skill_md_text(info.skill_md)  # bounded, and never through a link
        except SkillParseError:
            return ""

    def skill_file_path(self, skill_id: str, relative_path: str) -> Path:
        """The real path of a file inside a skill.

        Raises :class:`SkillNotFound` for an unknown id and :class:`SkillPathError`
        (one uniform message) for a path that leaves the skill.
        """
        info = self._skills.get(skill_id)
        if info is None:
            raise SkillNotFound(f"no skill {skill_id!r}")
        return resolve_inside(info.root, relative_path)

    def read_skill_file(self, skill_id: str, relative_path: str) -> str:
        """A file inside a skill as text; empty when unknown, outside the skill or unreadable."""
        try:
            return self.skill_file_text(skill_id, relative_path)
        except (SkillNotFound, SkillPathError, OSError):
            return ""

    def skill_file_text(self, skill_id: str, relative_path: str) -> str:
        """A file inside a skill as text, its folder opened from the folder it was scanned in and the file from its
        folder, with no link followed at any component below: a folder swapped for a link since the scan is never
        read through. Raises :class:`SkillNotFound` for an unknown id, :class:`SkillPathError` for a path that
        leaves the skill (or a folder now a link) and ``OSError`` when no regular file is there."""
        info = self._skills.get(skill_id)
        if info is None:
            raise SkillNotFound(f"no skill {skill_id!r}")
        scanned_in = [layer.root for layer in self._layers if isinstance(layer, _ScanSource)]
        try:
            folder = open_skill_folder(scanned_in, info.root, else_itself=True)
        except OSError:
            raise SkillPathError(OUTSIDE_SKILL) from None
        try:
            opened = open_file_inside(folder, relative_path)
        finally:
            os.close(folder)
        if opened is None:
            raise FileNotFoundError(errno.ENOENT, "no regular file there", relative_path)
        with os.fdopen(opened, "rb") as file:
            return file.read().decode("utf-8", errors="replace")

    def copy(self) -> SkillCatalog:
        """An independent catalog with the same skills and scans (descriptors are shared)."""
        other = SkillCatalog()
        other._layers = [
            replace(layer, cache=dict(layer.cache)) if isinstance(layer, _ScanSource) else layer
            for layer in self._layers
        ]
        other._skills = dict(self._skills)
        other._docs = dict(self._docs)
        other._by_name = {name: list(ids) for name, ids in self._by_name.items()}
        other._by_hook = {hook: list(ids) for hook, ids in self._by_hook.items()}
        other._issues = list(self._issues)
        other._builtin_scanned = self._builtin_scanned
        return other

    # -- internals --------------------------------------------------------

    def _scan(self, layer: _ScanSource) -> list[str]:
        self._layers.append(layer)
        return [sid for result in self._load_source(layer) if (sid := self._admit_result(result))]

    def _load_source(self, layer: _ScanSource) -> list[LoadResult]:
        """Load every skill folder of ``layer``, reusing cached results whose files did not change."""
        results: list[LoadResult] = []
        fresh: dict[str, tuple[_Signature, LoadResult]] = {}
        found, left_out = _skill_folders(layer.root, layer.only)
        results += [LoadResult(path, None, reason) for path, reason in left_out]
        for name, folder in found:
            skill_md, signature = _stat_skill(folder)
            if skill_md is None:
                continue
            cached = layer.cache.get(name)
            if cached is not None and cached[0] == signature + _watched_state(folder, cached[1].watched):
                result = cached[1]
            else:
                result = load_skill(
                    folder,
                    namespace=layer.namespace,
                    source=layer.source,
                    source_label=layer.source_label,
                    skill_md=skill_md,
                )
            fresh[name] = (signature + _watched_state(folder, result.watched), result)
            results.append(result)
        layer.cache = fresh
        return results

    def _admit_result(self, result: LoadResult) -> str:
        if result.descriptor is None:
            self._note(SkillIssue("skipped", result.folder, f"skipped: {result.skipped}"))
            return ""
        return self._admit(result.descriptor)

    def _admit(self, descriptor: SkillDescriptor, *, doc: str | None = None) -> str:
        """Index ``descriptor`` unless its id is taken (a collision); returns the id admitted or ''."""
        skill_id = descriptor.skill_id
        holder = self._skills.get(skill_id)
        if holder is not None:
            where = holder.skill_md.parent if holder.skill_md else holder.source_label
            self._note(SkillIssue("shadowed", descriptor.root, f"shadowed by the same id from {where}", skill_id))
            return ""
        self._skills[skill_id] = descriptor
        if doc is not None:
            self._docs[skill_id] = doc
        self._by_name.setdefault(descriptor.name, []).append(skill_id)
        for hook_type in descriptor.hooks:
            self._by_hook.setdefault(hook_type, []).append(skill_id)
        self._sorted = None
        if descriptor.warnings:
            self._note(SkillIssue("warning", descriptor.root, "; ".join(descriptor.warnings), skill_id))
        return skill_id

    def _note(self, issue: SkillIssue) -> None:
        self._issues.append(issue)
        warnings.warn(str(issue), SkillCatalogWarning, stacklevel=4)


def _is_python(layer: _ScanSource | _PythonSkill, skill_id: str) -> bool:
    return isinstance(layer, _PythonSkill) and layer.descriptor.skill_id == skill_id


def _skill_folders(root: Path, only: str | None) -> tuple[list[tuple[str, Path]], list[tuple[Path, str]]]:
    """``(key, real folder)`` of each skill folder under ``root`` (nested ones too), sorted by key, and the folders
    the search left out, with why (:func:`~.loader.search_skill_folders`)."""
    base = os.path.realpath(root)
    if only is not None:
        folder = os.path.join(base, only)
        return ([(only, Path(os.path.realpath(folder)))] if os.path.isdir(folder) else []), []
    search = search_skill_folders(base)
    return search.found, search.reported()


def _stat_skill(folder: Path) -> tuple[Path | None, _Signature]:
    """The folder's skill document and a signature that changes when the document does."""
    for name in SKILL_MD_NAMES:
        path = os.path.join(folder, name)
        try:
            info = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        return Path(path), (name, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return None, ()


def _watched_state(folder: Path, watched: tuple[str, ...]) -> _Signature:
    return tuple(os.path.isfile(os.path.join(folder, relative)) for relative in watched)
