"""Every index the installed apps declare: each app's ``search`` module holds its
``FtsIndex``, ``VectorIndex`` and ``KeyIndex`` objects, found here in ``INSTALLED_APPS``
order, for the engine's work over all of them (copying a database to another engine)."""

import functools
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec

from django.apps import apps

from memoryhub.engine.search.fts import FtsIndex
from memoryhub.engine.search.keys import KeyIndex
from memoryhub.engine.search.vectors import VectorIndex


@dataclass(frozen=True)
class DeclaredIndexes:
    fts: tuple[FtsIndex, ...]
    vectors: tuple[VectorIndex, ...]
    keys: tuple[KeyIndex, ...]


@functools.cache
def declared_indexes() -> DeclaredIndexes:
    found: dict[type, list] = {FtsIndex: [], VectorIndex: [], KeyIndex: []}
    for config in apps.get_app_configs():
        name = f"{config.name}.search"
        if find_spec(name) is None:
            continue
        for value in vars(import_module(name)).values():
            kind = type(value)
            if kind in found and value not in found[kind]:
                found[kind].append(value)
    return DeclaredIndexes(
        fts=tuple(found[FtsIndex]), vectors=tuple(found[VectorIndex]), keys=tuple(found[KeyIndex])
    )
