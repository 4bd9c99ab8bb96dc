"""YAML read the way the reference library reads it: every scalar a string, no surprises.

The reference library parses frontmatter with StrictYAML, which has no
implicit types (``1.0`` stays ``"1.0"``, ``true`` stays ``"true"``, an empty
value is ``""``) and refuses flow collections (``{}``, ``[]``), anchors,
aliases, explicit tags and duplicate keys. This module gives the same results
with PyYAML: its untyped base loader, with those constructs refused by the
scanner and the constructor.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.scanner import ScannerError


class DisallowedYAML(ScannerError):
    """A construct StrictYAML refuses (flow collection, anchor, alias, tag)."""


class _UntypedLoader(yaml.BaseLoader):
    def _refuse(self, what: str) -> None:
        raise DisallowedYAML("while scanning", self.get_mark(), f"found disallowed {what}", self.get_mark())

    def fetch_flow_sequence_start(self) -> None:
        self._refuse("flow sequence ('[' ... ']'); quote the value to make it text")

    def fetch_flow_mapping_start(self) -> None:
        self._refuse("flow mapping ('{' ... '}'); quote the value to make it text")

    def fetch_anchor(self) -> None:
        self._refuse("anchor ('&')")

    def fetch_alias(self) -> None:
        self._refuse("alias ('*')")

    def fetch_tag(self) -> None:
        self._refuse("tag ('!'); do not give types in markup")

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (list, dict)):
                raise ConstructorError(
                    "while constructing a mapping", node.start_mark, "found a key that is not text", key_node.start_mark
                )
            if key in seen:
                raise ConstructorError(
                    "while parsing", node.start_mark, f"duplicate key {key!r} found", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=True)


def load_untyped(text: str) -> Any:
    """Parse ``text``: strings, lists and dicts only; raises :class:`yaml.YAMLError` when refused."""
    loader = _UntypedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
