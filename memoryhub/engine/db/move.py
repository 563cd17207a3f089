"""Copying a live SQLite install into PostgreSQL: every table, the full-text indexes and
the vectors, with the counts checked at the end.

The target is migrated first (by ``manage.py migrate`` in a process of its own, so that
its search tables are made as on any PostgreSQL install), then emptied of what the
migrations wrote (content types, permissions) and filled with the source's rows under
the same ids. PostgreSQL checks foreign keys at commit (Django makes them deferrable),
so tables are copied in any order, each in pieces. Sequences are set past the copied ids.
Full-text entries are copied as stored (with the session neighbours' words of each
fact) and vectors with the model that made them, so nothing is embedded again; the
facts' near-duplicate keys are gathered into PostgreSQL's per-fact lists.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.apps import apps
from django.core.management.color import no_style
from django.db import connection, connections, models, transaction

from memoryhub.engine.search import postgres as pg
from memoryhub.engine.search.registry import declared_indexes

TARGET = "migration_target"
PIECE = 2000


@dataclass
class MoveReport:
    rows: dict[str, tuple[int, int]] = field(default_factory=dict)  # table: (source, target)
    nul_values: int = 0  # text values that held NUL characters, which were removed

    @property
    def consistent(self) -> bool:
        return all(source == target for source, target in self.rows.values())


def _models() -> list[type[models.Model]]:
    """Every concrete table Django manages, many-to-many link tables included."""
    found: dict[str, type[models.Model]] = {}
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if meta.managed and not meta.proxy and not meta.swapped:
            found.setdefault(meta.db_table, model)
    return [found[name] for name in sorted(found)]


def _search_indexes() -> tuple[tuple, tuple]:
    declared = declared_indexes()
    return declared.fts, declared.vectors


def target_migrate(url: str, base_dir: Path) -> None:
    """``manage.py migrate`` against the target, in a process of its own."""
    env = dict(os.environ, DATABASE_URL=url)
    done = subprocess.run(
        [sys.executable, str(base_dir / "manage.py"), "migrate", "--noinput", "-v", "0"],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Migrating the target failed:\n{done.stderr[-2000:]}")


def _without_nul(value: object, report: MoveReport) -> object:
    if isinstance(value, str) and "\x00" in value:
        report.nul_values += 1
        return value.replace("\x00", "")
    return value


def _pieces(cursor, sql: str) -> Iterator[list[tuple]]:
    cursor.execute(sql)
    while rows := cursor.fetchmany(PIECE):
        yield rows


def _copy_table(model: type[models.Model], target, report: MoveReport, step: Callable) -> None:
    fields = [f for f in model._meta.concrete_fields]
    quote = target.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    insert = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks})"
    names = [f.attname for f in fields]
    with target.cursor() as out:
        queryset = model._base_manager.using("default").order_by("pk").values_list(*names)
        batch: list[tuple] = []
        for values in queryset.iterator(chunk_size=PIECE):
            batch.append(
                tuple(
                    _without_nul(f.get_db_prep_save(v, connection=target), report)
                    for f, v in zip(fields, values, strict=True)
                )
            )
            if len(batch) >= PIECE:
                out.executemany(insert, batch)
                step(len(batch))
                batch = []
        if batch:
            out.executemany(insert, batch)
            step(len(batch))


def _copy_fts(index, target, report: MoveReport, step: Callable) -> None:
    columns = ", ".join(index.columns)
    with connection.cursor() as source, target.cursor() as out:
        for rows in _pieces(source, f"SELECT rowid, {columns} FROM {index.table}"):
            entries = [(r[0], tuple(_without_nul(v, report) for v in r[1:])) for r in rows]
            pg.fts_upsert(index, entries, cursor=out)
            step(len(rows))


def _copy_vectors(index, target, step: Callable) -> None:
    with connection.cursor() as source:
        source.execute(f"SELECT rowid, model FROM {index.table}")
        model_of = dict(source.fetchall())
    dim = None
    with connection.cursor() as source, target.cursor() as out:
        for rows in _pieces(source, f"SELECT id, embedding FROM {index.raw_table}"):
            items = [(i, np.frombuffer(blob, dtype="<f4"), model_of.get(i, "")) for i, blob in rows]
            if dim is None and items:
                dim = len(items[0][1])
                # A model of another width: the target's table follows.
                if pg.vector_current_dim(index, cursor=out) != dim:
                    for sql in pg.vector_drop_sql(index) + pg.vector_create_sql(index, dim):
                        out.execute(sql)
            pg.vector_upsert(index, items, cursor=out)
            step(len(rows))


def _count(cursor, table: str) -> int:
    cursor.execute(f"SELECT count(*) FROM {table}")
    return cursor.fetchone()[0]


def source_total() -> int:
    """Rows to copy, for a progress bar."""
    fts, vectors = _search_indexes()
    with connection.cursor() as cursor:
        total = sum(_count(cursor, m._meta.db_table) for m in _models())
        total += sum(_count(cursor, i.table) for i in fts)
        total += sum(_count(cursor, i.raw_table) for i in vectors)
    return total


def move_to_postgres(target_settings: dict, *, step: Callable[[int], object]) -> MoveReport:
    """Copy everything of the default (SQLite) database into the migrated, empty-or-not
    PostgreSQL database of ``target_settings`` (which is emptied first)."""
    if connection.vendor != "sqlite":
        raise RuntimeError("The source must be the SQLite database this install runs on.")
    configured = connections.configure_settings({**connections.settings, TARGET: target_settings})
    connections.settings[TARGET] = configured[TARGET]
    target = connections[TARGET]
    report = MoveReport()
    fts, vectors = _search_indexes()
    key_indexes = declared_indexes().keys
    key_lists = {index.lists_table for index in key_indexes}
    tables = _models()
    try:
        with target.cursor() as out:
            names = [m._meta.db_table for m in tables] + [i.table for i in (*fts, *vectors)]
            out.execute(
                f"TRUNCATE {', '.join(target.ops.quote_name(n) for n in names)} "
                "RESTART IDENTITY CASCADE"
            )
        with transaction.atomic(using=TARGET):
            for model in tables:
                _copy_table(model, target, report, step)
            with target.cursor() as out:
                for sql in target.ops.sequence_reset_sql(no_style(), tables):
                    out.execute(sql)
            for index in fts:
                _copy_fts(index, target, report, step)
            for index in vectors:
                _copy_vectors(index, target, step)
            with target.cursor() as out:
                for index in key_indexes:
                    index.into_lists(out)
        with connection.cursor() as source, target.cursor() as out:
            for model in tables:
                name = model._meta.db_table
                if name not in key_lists:
                    report.rows[name] = (_count(source, name), _count(out, name))
            # Keys (the facts' near-duplicate keys), a row each on SQLite, are lists here.
            for index in key_indexes:
                report.rows[index.rows_table] = (index.count(source), index.count(out))
            for index in fts:
                report.rows[index.table] = (_count(source, index.table), _count(out, index.table))
            for index in vectors:
                report.rows[index.table] = (
                    _count(source, index.raw_table),
                    _count(out, index.table),
                )
    finally:
        target.close()
        del connections.settings[TARGET]
    return report
