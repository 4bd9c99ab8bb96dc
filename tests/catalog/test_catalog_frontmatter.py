"""Splitting SKILL.md into frontmatter and body, and parsing the YAML."""

from __future__ import annotations

import pytest

from semif_agent.catalog import SkillParseError, parse_document, split_document
from semif_agent.errors import UserError


def test_frontmatter_and_body_are_split():
    data, body = parse_document("---\nname: a\ndescription: b\n---\n# Title\n\nText\n")
    assert data == {"name": "a", "description": "b"}
    assert body == "# Title\n\nText\n"


def test_triple_dash_inside_a_value_is_not_a_delimiter():
    text = "---\nname: a\ndescription: before---after\nnote: |\n  ---\n  indented\n---\nbody\n"
    data, body = parse_document(text)
    assert data["description"] == "before---after"
    assert data["note"] == "---\nindented\n"
    assert body == "body\n"


def test_bom_and_crlf_are_accepted():
    text = "\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\nline\r\n"
    data, body = parse_document(text)
    assert data == {"name": "a", "description": "b"}
    assert body == "body\nline\n"


def test_closing_delimiter_may_carry_trailing_blanks_and_end_the_file():
    data, body = parse_document("---  \nname: a\n---   ")
    assert data == {"name": "a"}
    assert body == ""


def test_body_line_counts_from_the_file_start():
    assert split_document("---\na: 1\nb: 2\n---\nbody").body_line == 5


@pytest.mark.parametrize(
    "text, message",
    [
        ("# no frontmatter\n", "must start with a '---' line"),
        ("---\nname: a\n", "not closed"),
        ("----\nname: a\n---\n", "must start with a '---' line"),
        ("---\n- a\n- b\n---\n", "must be a YAML mapping"),
    ],
)
def test_malformed_documents_raise_a_parse_error(text, message):
    with pytest.raises(SkillParseError, match=message) as caught:
        parse_document(text)
    assert isinstance(caught.value, UserError)


def test_invalid_yaml_reports_the_file_line():
    with pytest.raises(SkillParseError) as caught:
        parse_document("---\nname: a\ndescription: [unclosed\nother: x\n---\n", path="x/SKILL.md")
    assert "invalid YAML" in str(caught.value)
    assert caught.value.line >= 3
    assert str(caught.value).startswith("x/SKILL.md:")


def test_duplicate_keys_are_refused():
    with pytest.raises(SkillParseError, match="duplicate key 'name'"):
        parse_document("---\nname: a\nname: b\n---\n")


def test_values_are_typed_by_the_safe_loader():
    data, _ = parse_document("---\nversion: 1.0\nflag: true\nwhen: 2024-01-01\nquoted: '1.0'\n---\n")
    assert data["version"] == 1.0 and data["flag"] is True and data["quoted"] == "1.0"


def test_unsafe_tags_are_refused():
    with pytest.raises(SkillParseError):
        parse_document("---\nname: !!python/object/apply:os.system ['echo hi']\n---\n")


def test_empty_frontmatter_is_an_empty_mapping():
    assert parse_document("---\n---\nbody") == ({}, "body")
