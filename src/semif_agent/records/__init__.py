"""The decision log and its rows: every decision, outcome, label and model call, typed.

- :mod:`.log`: :class:`DecisionLog`, the append-only JSON-lines file
  (crash-safe, locked, never through a link), which refuses a row of the
  wrong shape;
- :mod:`.rows` and :mod:`.calls`: one frozen pydantic model per kind of row
  (``to_row()`` writes it, ``from_row()`` reads an old one leniently);
- :mod:`.kinds`: the table of kinds (:data:`RECORD_KINDS`) the CLI, the web
  view and the readers go by, and :data:`AnyRow`, the union of the row
  models told apart by ``kind``, with the one :data:`ROW_ADAPTER` that reads
  and checks them;
- :mod:`.runs`: the runs of a log as :class:`RunRecord`, people's labels
  folded in.

It sits just above the kernel: everything from ``llm`` up may import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_namespace

# public name -> module that defines it (imported on first use: pydantic loads with the rows, not for a --help)
_EXPORTS = {
    "DecisionLog": ".log",
    "Joined": ".log",
    "TornLineWarning": ".log",
    "SCHEMA_VERSION": ".log",
    "RECORD_KINDS": ".kinds",
    "RecordKind": ".kinds",
    "AnyRow": ".kinds",
    "ROW_ADAPTER": ".kinds",
    "LogRow": ".rows",
    "ROUTE_KIND": ".kinds",
    "ASSESS_KIND": ".kinds",
    "OUTCOME_KIND": ".kinds",
    "LABEL_KIND": ".kinds",
    "UNDO_KIND": ".kinds",
    "UNLABEL_KIND": ".kinds",
    "check_row": ".kinds",
    "is_run_record": ".kinds",
    "DecisionRow": ".rows",
    "OutcomeRow": ".rows",
    "LabelRow": ".rows",
    "ProposeRow": ".rows",
    "GenerateRow": ".rows",
    "UndoRow": ".rows",
    "UnlabelRow": ".rows",
    "ModelCallRow": ".calls",
    "Label": ".runs",
    "RunRecord": ".runs",
    "RunRows": ".runs",
    "fold_labels": ".runs",
    "label_row": ".runs",
    "login_name": ".runs",
    "persons_labels": ".runs",
    "resolve_run_id": ".runs",
    "run_records": ".runs",
    "run_rows": ".runs",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from .calls import ModelCallRow as ModelCallRow
    from .kinds import ASSESS_KIND as ASSESS_KIND
    from .kinds import LABEL_KIND as LABEL_KIND
    from .kinds import OUTCOME_KIND as OUTCOME_KIND
    from .kinds import RECORD_KINDS as RECORD_KINDS
    from .kinds import ROUTE_KIND as ROUTE_KIND
    from .kinds import ROW_ADAPTER as ROW_ADAPTER
    from .kinds import UNDO_KIND as UNDO_KIND
    from .kinds import UNLABEL_KIND as UNLABEL_KIND
    from .kinds import AnyRow as AnyRow
    from .kinds import RecordKind as RecordKind
    from .kinds import check_row as check_row
    from .kinds import is_run_record as is_run_record
    from .log import SCHEMA_VERSION as SCHEMA_VERSION
    from .log import DecisionLog as DecisionLog
    from .log import Joined as Joined
    from .log import TornLineWarning as TornLineWarning
    from .rows import DecisionRow as DecisionRow
    from .rows import GenerateRow as GenerateRow
    from .rows import LabelRow as LabelRow
    from .rows import LogRow as LogRow
    from .rows import OutcomeRow as OutcomeRow
    from .rows import ProposeRow as ProposeRow
    from .rows import UndoRow as UndoRow
    from .rows import UnlabelRow as UnlabelRow
    from .runs import Label as Label
    from .runs import RunRecord as RunRecord
    from .runs import RunRows as RunRows
    from .runs import fold_labels as fold_labels
    from .runs import label_row as label_row
    from .runs import login_name as login_name
    from .runs import persons_labels as persons_labels
    from .runs import resolve_run_id as resolve_run_id
    from .runs import run_records as run_records
    from .runs import run_rows as run_rows
else:  # at run time each name is imported on first use
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
