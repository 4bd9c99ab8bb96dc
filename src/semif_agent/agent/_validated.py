"""The base of the agent's public pydantic models: bad fields raise our error, not pydantic's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import ArgumentValidationError


class ValidatedModel(BaseModel):
    """A pydantic model whose constructor raises :class:`~.errors.ArgumentValidationError` for bad fields.

    That error is still a pydantic ``ValidationError`` (and a ``ValueError``),
    with the same :meth:`~pydantic.ValidationError.errors`; pydantic's own is
    its ``__cause__``.
    """

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ArgumentValidationError:
            raise
        except ValidationError as exc:
            raise ArgumentValidationError.from_validation(exc) from exc
