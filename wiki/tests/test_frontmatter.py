import pytest

from wiki.frontmatter import ALLOWED_KEYS, FrontMatterError, dump, parse

PAGE = """---
title: Rotating the ingest API keys
tags: [runbook, ingest, secrets]
visibility: team
kind: runbook
---
# Rotating the ingest API keys

1. Create the new key in the vault.
"""


def test_it_splits_front_matter_from_body() -> None:
    meta, body = parse(PAGE)
    assert meta == {
        "title": "Rotating the ingest API keys",
        "tags": ["runbook", "ingest", "secrets"],
        "visibility": "team",
        "kind": "runbook",
    }
    assert body.startswith("# Rotating the ingest API keys\n")


def test_text_without_front_matter_is_all_body() -> None:
    text = "# Title\n\nSome text\n---\nafter a rule\n"
    assert parse(text) == ({}, text)


def test_empty_block_gives_empty_meta() -> None:
    assert parse("---\n---\nbody\n") == ({}, "body\n")


def test_crlf_and_bom_are_understood() -> None:
    meta, body = parse("\ufeff---\r\ntitle: Windows note\r\n---\r\nbody\r\n")
    assert meta == {"title": "Windows note"}
    assert body == "body\r\n"


def test_dots_close_the_block_too() -> None:
    assert parse("---\ntitle: x\n...\nbody") == ({"title": "x"}, "body")


@pytest.mark.parametrize(
    ("meta", "body"),
    [
        ({"title": "A", "tags": ["x", "y"], "visibility": "global", "kind": "adr"}, "# A\n"),
        ({"title": "Ünïcödé: colons, # hashes & 'quotes'"}, "body without newline"),
        ({"tags": []}, ""),
        ({"title": "yes"}, "body\n"),  # a YAML 1.1 boolean word must stay a string
        ({"title": "123"}, "x"),
        ({}, "# Plain page\n"),
        ({}, "---\nstarts with a rule\n"),
        ({"kind": "pdd", "visibility": "private"}, "\n\nleading blank lines\n"),
    ],
)
def test_dump_and_parse_round_trip(meta: dict, body: str) -> None:
    assert parse(dump(meta, body)) == (meta, body)


def test_dump_writes_keys_in_a_stable_order() -> None:
    text = dump({"kind": "note", "title": "T", "visibility": "team", "tags": ["a"]}, "b")
    keys = [line.split(":")[0] for line in text.splitlines()[1:5]]
    assert keys == ["title", "tags", "visibility", "kind"]


def test_invalid_yaml_is_refused_with_a_message() -> None:
    with pytest.raises(FrontMatterError, match="not valid YAML"):
        parse("---\ntitle: [unclosed\n---\nbody")


@pytest.mark.parametrize("block", ["- a\n- b\n", "just a string\n", "42\n"])
def test_a_non_mapping_is_refused(block: str) -> None:
    with pytest.raises(FrontMatterError, match="must be a mapping"):
        parse(f"---\n{block}---\nbody")


def test_an_unknown_key_is_named_with_the_allowed_keys() -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse("---\ntitle: x\ntag: [a]\nauthor: bob\n---\nbody")
    message = str(caught.value)
    assert "'tag'" in message and "'author'" in message
    for key in ALLOWED_KEYS:
        assert key in message


def test_an_unclosed_block_is_refused() -> None:
    with pytest.raises(FrontMatterError, match="no closing"):
        parse("---\ntitle: x\nbody without end\n")


@pytest.mark.parametrize(
    ("block", "fragment"),
    [
        ("title: ''\n", "'title'"),
        ("title: [a]\n", "'title'"),
        ("tags: runbook\n", "'tags'"),
        ("tags: [1, 2]\n", "'tags'"),
        ("tags: ['']\n", "'tags'"),
        ("visibility: public\n", "'visibility'"),
        ("kind: Run Book\n", "'kind'"),
        ("kind: 3\n", "'kind'"),
    ],
)
def test_values_of_the_wrong_shape_are_refused(block: str, fragment: str) -> None:
    with pytest.raises(FrontMatterError, match=fragment):
        parse(f"---\n{block}---\nbody")


def test_dump_refuses_what_parse_would_refuse() -> None:
    with pytest.raises(FrontMatterError, match="allowed keys"):
        dump({"title": "x", "owner": "alice"}, "body")
    with pytest.raises(FrontMatterError, match="visibility"):
        dump({"visibility": "everyone"}, "body")


def test_yaml_tags_that_build_objects_are_refused() -> None:
    with pytest.raises(FrontMatterError):
        parse("---\ntitle: !!python/object/apply:os.system ['true']\n---\nbody")
