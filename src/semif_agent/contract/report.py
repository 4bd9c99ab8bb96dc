"""What the contract checker found: :class:`Violation` (criterion, line, message) and :class:`CheckReport`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .._json import JsonObject


@dataclass(frozen=True)
class Violation:
    criterion: int | str
    line: int
    message: str

    def render(self, filename: str = "") -> str:
        where = f"{filename}:{self.line}" if filename else f"line {self.line}"
        return f"{where}: [criterion {self.criterion}] {self.message}"


@dataclass
class CheckReport:
    """What the checker found. ``ok`` when there is no violation."""

    name: str
    category: str
    violations: list[Violation] = field(default_factory=list)
    nearest: JsonObject | None = None
    gate: JsonObject | None = None

    @property
    def ok(self) -> bool:
        return not self.violations

    def criteria(self) -> set[int | str]:
        return {v.criterion for v in self.violations}

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "category": self.category,
            "ok": self.ok,
            "violations": [asdict(v) for v in self.violations],
            "nearest": self.nearest,
            "gate": self.gate,
        }

    def render(self, filename: str = "") -> str:
        if self.ok:
            return f"{self.name}: passes the contract"
        return "\n".join(v.render(filename) for v in self.violations)
