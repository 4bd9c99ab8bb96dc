"""Engines, providers and routing strategies by name: semif-agent's own and those other distributions add.

Each kind is an entry-point group (``semif_agent.engines``, ``semif_agent.providers``,
``semif_agent.strategies``) whose entry points name an object as ``module:attribute``.
semif-agent declares its built-ins in the same groups, so they are found and
loaded exactly as a third party's are; run from a source tree whose package
metadata is not installed, the built-in table stands in for its own entry points.

The names are read from the installed distributions once per process, when
they are listed or a name that is not built in is asked for; an entry is
imported only when its name is asked for. Building a built-in reads no
metadata: semif-agent's own entries always win their names. A third-party plug-in that fails (its import, its attribute,
or its factory raising) is one warning line on stderr, said once, and is then
unavailable; everything else keeps working.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .errors import UserError

OWN_DISTRIBUTION = "semif-agent"


@dataclass(frozen=True)
class PluginEntry:
    """One named entry of a group: where its object lives, and the distribution that declares it."""

    name: str
    module: str
    attribute: str
    distribution: str  # "semif-foo 1.0"; "" for semif-agent's own

    @classmethod
    def parse(cls, name: str, target: str, distribution: str) -> PluginEntry:
        """The entry for ``target``, written ``module:attribute`` (an entry point's extras, ``[x]``, ignored)."""
        module, _, attribute = target.partition(":")
        return cls(name, module.strip(), attribute.split("[")[0].strip(), distribution)

    @property
    def own(self) -> bool:
        return not self.distribution

    def load(self) -> Any:
        found: Any = importlib.import_module(self.module)
        for part in self.attribute.split("."):
            found = getattr(found, part)
        return found


class PluginGroup:
    """The objects of one kind by name: registered at run time, then declared as entry points.

    ``builtin`` (name -> ``"module:attribute"``) is semif-agent's own table,
    used when its installed metadata declares none for ``group``. ``error``
    is the :class:`~semif_agent.errors.UserError` raised for a name that is
    unknown or whose plug-in failed.
    """

    def __init__(self, group: str, kind: str, builtin: Mapping[str, str], error: type[UserError]) -> None:
        self.group = group
        self.kind = kind
        self.builtin = dict(builtin)
        self.error = error
        self._registered: dict[str, Any] = {}
        self._entries: dict[str, PluginEntry] | None = None
        self._loaded: dict[str, Any] = {}
        self._failed: set[str] = set()

    def register(self, name: str, obj: Any) -> None:
        """Make ``name`` stand for ``obj`` in this process, ahead of any entry point of that name."""
        self._registered[name] = obj

    def names(self) -> list[str]:
        """Every name known: registered, built in or declared by an installed distribution (none imported)."""
        return sorted(set(self._registered) | set(self.entries()))

    def entries(self) -> dict[str, PluginEntry]:
        """The group's entry points by name, read once per process."""
        if self._entries is None:
            self._entries = self._scan()
        return self._entries

    def load(self, name: str) -> Any:
        """The object ``name`` stands for, imported now (once).

        semif-agent's own entries raise what their import raises (a missing
        extra is the caller's to explain); a third party's failure is warned
        once and raised as ``error``, like an unknown name.
        """
        if name in self._registered:
            return self._registered[name]
        if name in self._loaded:
            return self._loaded[name]
        entry = self._entry(name)
        if entry is None:
            raise self.error(f"unknown {self.kind} {name!r} (known: {', '.join(self.names())})")
        if name in self._failed:
            raise self._unavailable(name)
        with self.guard(name, passing=()):
            self._loaded[name] = entry.load()
        return self._loaded[name]

    @contextmanager
    def guard(self, name: str, passing: tuple[type[Exception], ...] = (UserError,)) -> Iterator[None]:
        """Run a third-party plug-in's code: a failure disables it, said once (but ``passing``, one-line errors).

        Built-in and registered entries' failures propagate unchanged.
        """
        entry = None if name in self._registered else self._entry(name)
        if entry is None or entry.own:
            yield
            return
        try:
            yield
        except passing:
            raise
        except Exception as exc:  # noqa: BLE001 - a third party's bug of any kind must not stop semif
            self._failed.add(name)
            first_line = (str(exc).strip().splitlines() or [""])[0]
            print(
                f"semif: plug-in {self.kind} {name!r} from {entry.distribution} failed to load: "
                f"{type(exc).__name__}: {first_line}; skipped",
                file=sys.stderr,
            )
            raise self._unavailable(name) from None

    def _entry(self, name: str) -> PluginEntry | None:
        """The entry of ``name``; a built-in's without reading any metadata (ours always wins a name)."""
        if name in self.builtin:
            return PluginEntry.parse(name, self.builtin[name], "")
        return self.entries().get(name)

    def _unavailable(self, name: str) -> UserError:
        return self.error(f"{self.kind} {name!r} is not available: its plug-in failed to load")

    def _scan(self) -> dict[str, PluginEntry]:
        from importlib.metadata import entry_points

        own: dict[str, PluginEntry] = {}
        others: list[PluginEntry] = []
        for point in entry_points(group=self.group):
            metadata = point.dist.metadata if point.dist is not None else None
            dist_name = (metadata["Name"] if metadata is not None else None) or "an unnamed distribution"
            if _canonical(dist_name) == OWN_DISTRIBUTION:
                own[point.name] = PluginEntry.parse(point.name, point.value, "")
            else:
                version = point.dist.version if point.dist is not None else ""
                others.append(PluginEntry.parse(point.name, point.value, f"{dist_name} {version}".strip()))
        if not own:  # no installed metadata of ours (a source tree): the built-in table stands in
            own = {name: PluginEntry.parse(name, target, "") for name, target in self.builtin.items()}
        found = dict(own)
        for entry in others:
            if entry.name in found:
                taken_by = found[entry.name].distribution or OWN_DISTRIBUTION
                print(
                    f"semif: plug-in {self.kind} {entry.name!r} from {entry.distribution} is skipped: "
                    f"{taken_by} already has a {self.kind} of that name",
                    file=sys.stderr,
                )
                continue
            found[entry.name] = entry
        return found


def _canonical(distribution: str) -> str:
    return distribution.lower().replace("_", "-").replace(".", "-")
