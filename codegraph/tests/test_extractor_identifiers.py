"""Splitting identifiers into words for full-text search."""

from __future__ import annotations

import pytest

from codegraph.extractor import split_identifier


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("getQueryset", "get queryset"),
        ("snake_case", "snake case"),
        ("HTTPServerError", "http server error"),
        ("XMLHttpRequest", "xml http request"),
        ("CONSTANT_NAME", "constant name"),
        ("__init__", "init"),
        ("_private_helper", "private helper"),
        ("userID", "user id"),
        ("ID", "id"),
        ("x", "x"),
        ("utf8Decode", "utf8 decode"),
        ("base64_encode", "base64 encode"),
        ("HTML5Parser", "html5 parser"),
        ("IPv4Address", "ipv4 address"),
        ("Int32Array", "int32 array"),
        ("sha256", "sha256"),
        ("get2ndItem", "get2nd item"),
        ("v2", "v2"),
        ("404", "404"),
        ("#privateField", "private field"),
        ("$scope", "scope"),
        ("kebab-case-name", "kebab case name"),
        ("données_brutes", "données brutes"),
        ("", ""),
    ],
)
def test_split_identifier(name: str, words: str) -> None:
    assert split_identifier(name) == words
