"""Shared pieces of the fact-store benchmarks: a throwaway data directory with Django
set up in it, a generator of realistic fact sentences and questions, timing statistics,
tables, and a gunicorn server on 127.0.0.1.

Not a benchmark itself: ``python bench/_common.py`` prints a few generated facts.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


# --- Environment --------------------------------------------------------------------------


@contextlib.contextmanager
def temp_data_dir(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A fresh MEMORYHUB_DATA_DIR, removed afterwards unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            print(f"(kept {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)


def bench_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment the bench and its server run with: the temp data dir, no cap on
    active facts (a bulk load would otherwise be archived down to the default 1,000),
    quiet logs, plus ``extra``."""
    env = dict(os.environ)
    env.update(
        {
            # Never the user's own database or broker.
            "DATABASE_URL": "",
            "REDIS_URL": "",
            "MEMORYHUB_DATA_DIR": str(data_dir),
            "MEMORYHUB_MAX_ACTIVE_FACTS": "0",
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        }
    )
    env.update(extra)
    return env


def django_setup(env: dict[str, str]) -> None:
    """Configure Django in this process with ``env`` and migrate its database."""
    os.environ.update(env)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def bench_user(username: str = "bench"):
    """A user who owns the benchmark's facts, with an agent token. Returns
    ``(user, actor, secret)``."""
    from django.contrib.auth import get_user_model

    from teams.services import Actor, agent_token_create

    user = get_user_model().objects.create_user(username=username, password=None)
    actor = Actor(user=user)
    _, secret = agent_token_create(actor=actor, name=f"{username}-agent", scopes=["read", "write"])
    return user, actor, secret


def machine_note() -> str:
    """CPU count and load, since other work on a small box skews every figure."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return f"{os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"


def revision() -> str:
    """The checkout's commit, marked when it has local changes: the code measured."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unknown revision"
    return commit + (" + local changes" if dirty else "")


# --- Timing and tables ------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Latency statistics of one measured operation, in milliseconds."""

    p50: float
    p95: float
    mean: float
    n: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Timing:
        ms = sorted(s * 1000 for s in seconds)
        return cls(
            p50=_quantile(ms, 0.50), p95=_quantile(ms, 0.95), mean=statistics.fmean(ms), n=len(ms)
        )


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values."""
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A markdown table, columns padded to their widest cell."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            + " |"
        )

    print()
    print(title)
    print()
    print(line(cells[0]))
    print(
        "|"
        + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths))
        + "|"
    )
    for row in cells[1:]:
        print(line(row))
    sys.stdout.flush()


def _cell(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


# --- A gunicorn server ------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn_server(
    env: dict[str, str], *, workers: int = 1, threads: int = 4, log_path: Path | None = None
) -> Iterator[str]:
    """Serve MemoryHub with gunicorn (as ``make run`` does, one worker) and yield its base
    URL once it answers; stop it on exit."""
    import httpx

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "memoryhub.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--timeout",
        "300",
    ]
    base = f"http://127.0.0.1:{port}"
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(log_path, "ab")) if log_path else subprocess.DEVNULL
        # Its own session, so stopping it reaches its worker too and nothing else.
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
        stack.callback(stop_process_group, process)
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"gunicorn exited with code {process.returncode}"
                    + (f"; see {log_path}" if log_path else "")
                )
            # Any answer will do (401 here): /api/health would wait on a worker ping.
            try:
                httpx.get(base + "/api/memories", timeout=5)
                break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not answer within 60 s")
            time.sleep(0.2)
        try:
            yield base
        except Exception:
            if log_path:
                # The temp dir goes with the server: show why it failed while we can.
                tail = log_path.read_text(errors="replace").splitlines()[-40:]
                print("\n".join(["--- gunicorn log, last lines ---", *tail]), file=sys.stderr)
            raise


def stop_process_group(process: subprocess.Popen) -> None:
    """Stop a process started in its own session, with its children."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# --- Realistic facts --------------------------------------------------------------------------

FIRST = """Alice Bob Charlie Priya Mateo Yuki Olga Tariq Fatima Liam Chen Amara Jonas Ines
Ravi Sofia Kwame Hana Diego Elif Noah Mei Omar Lena Arjun Zara Felix Nadia Tomas Aiko Ben
Clara Dmitri Esther Farid Greta Hugo Isla Jin Kofi Lucia Marco Nia Oscar Paula Quentin Rosa
Samir Tala Uma Viktor Wen Ximena Yusuf Zoe Anika Bruno Carmen Dario Emeka Freya Gideon Hiro
Ingrid Javier Keiko Leon Maya Nikolai Orla Pablo Rania Stefan Thandiwe Ugo Vera Wanjiru
Xavier Yara Zeynep""".split()
LAST = """Okafor Lindqvist Tanaka Moreau Kowalski Haddad Nguyen Schmidt Rossi Patel Garcia
Ivanova Mensah Novak Silva Fischer Brennan Costa Dubois Kaur Larsen Mbeki Nakamura Ortiz
Petrov Quinn Reyes Sato Torres Umarov Varga Weber Yilmaz Zhou Abiodun Bauer Castillo Dahl
Eriksen Fontaine""".split()
PROJECTS = """Atlas Borealis Cobalt Dynamo Ember Falcon Granite Helix Ion Juniper Kestrel
Lumen Meridian Nimbus Onyx Pioneer Quartz Redwood Sierra Tundra Umbra Vortex Willow Xenon
Yarrow Zephyr Aurora Beacon Cascade Drift Echo Fjord Glacier Harbor Iris Jade Keystone
Lantern Mosaic Nova Orbit Prism Quill Ripple Summit Tidal Unity Vesper Wren""".split()
COMPONENTS = """billing-service auth-gateway search-indexer mobile-app admin-dashboard
data-pipeline notification-worker payments-api reporting-job recommendation-engine
image-resizer audit-trail feature-flags rate-limiter session-store export-service
webhook-dispatcher scheduler analytics-warehouse chat-backend""".split()
TOOLS = """PostgreSQL Redis Kafka RabbitMQ Elasticsearch ClickHouse SQLite MongoDB DynamoDB
Kubernetes Terraform Ansible Docker Nomad Helm ArgoCD Jenkins GitHub-Actions GitLab-CI
CircleCI Grafana Prometheus Datadog Sentry OpenTelemetry Jaeger Celery Airflow Dagster
Spark dbt Snowflake BigQuery Django FastAPI Flask Rails Spring Express Next.js React Vue
Svelte Angular Tailwind pytest Playwright Cypress Jest mypy ruff Black Poetry uv pnpm
Bazel Gradle Maven Vim Neovim Emacs VS-Code IntelliJ PyCharm tmux zsh fish Jupyter pandas
NumPy Polars DuckDB Ollama vLLM llama.cpp pgvector FAISS Qdrant Weaviate Nginx Caddy
Traefik Envoy Vault Consul Keycloak Okta Stripe Twilio SendGrid Figma Notion Linear Jira
Slack Zoom""".split()
LANGUAGES = """Python Go Rust TypeScript Java Kotlin Swift Elixir Haskell Scala C++ Ruby
Zig OCaml Clojure""".split()
CITIES = """Lisbon Berlin Nairobi Osaka Toronto Bogota Warsaw Dublin Singapore Austin
Melbourne Lagos Helsinki Seoul Montreal Porto Prague Cape-Town Oslo Buenos-Aires Zurich
Bangalore Istanbul Edinburgh Vancouver Kyoto Accra Tallinn Valencia Denver""".split()
FOODS = """ramen tacos sushi falafel pho dumplings paella curry pizza shakshuka bibimbap
ceviche pierogi jollof injera risotto""".split()
DRINKS = """oat-milk flat whites, black coffee, green tea, chai, sparkling water, espresso,
matcha lattes, rooibos""".split(", ")
TEAMS = """platform payments growth infra data mobile security search ml design support
sre""".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday".split()
MONTHS = """January February March April May June July August September October November
December""".split()
HOBBIES = """climbing chess sourdough baking trail running sailing photography cycling
pottery birdwatching salsa dancing woodworking swimming gardening""".split()
TASKS = """code review, writing design docs, debugging flaky tests, pairing on refactors,
incident response, sprint planning, load testing, writing migrations, on-call handovers,
customer demos, data modelling, API design""".split(", ")
STYLES = """short bullet points, detailed explanations, code examples first, a summary
before details, diagrams, step-by-step instructions, links to the source, plain prose""".split(", ")
EDITOR_SETTINGS = """dark mode, a light theme, vertical splits, relative line numbers, four
space indentation, tabs for indentation, format on save, a 100-column ruler, the Fira Code
font, minimap turned off""".split(", ")
ADJECTIVES = """careful direct patient curious pragmatic meticulous upbeat sceptical
concise methodical""".split()

# (category, template, tags). Fields in braces are drawn from the vocabularies above.
TEMPLATES: list[tuple[str, str, tuple[str, ...]]] = [
    ("preference", "{person} prefers {tool} over {tool2} for {task}.", ("tooling",)),
    ("preference", "{person} likes answers as {style}.", ("communication",)),
    ("preference", "{person} uses {tool} with {setting} on every machine.", ("editor",)),
    (
        "preference",
        "{person} drinks {drink} and avoids meetings before {hour} on {weekday}s.",
        ("habits",),
    ),
    (
        "preference",
        "{person} wants {lang} examples rather than {lang2} when learning {tool}.",
        ("learning",),
    ),
    (
        "preference",
        "{person} asked not to be paged about {project} outside working hours in {city}.",
        ("on-call",),
    ),
    (
        "fact",
        "The {project} {component} runs on {tool} {version} in the {city} region.",
        ("infrastructure",),
    ),
    (
        "fact",
        "The {project} {component} is written in {lang} and deployed with {tool}.",
        ("stack",),
    ),
    (
        "fact",
        "{project} stores its {component} data in {tool} with nightly backups at {hour}.",
        ("data",),
    ),
    ("fact", "The {team} team owns {project} and its {component}.", ("ownership",)),
    (
        "fact",
        "{project} release {version} shipped on {date} with the new {component}.",
        ("release",),
    ),
    (
        "fact",
        "The staging cluster for {project} uses {tool} and {tool2} behind {proxy}.",
        ("staging",),
    ),
    ("fact", "{person}'s laptop runs {os} with {tool} installed through {pkg}.", ("setup",)),
    (
        "context",
        "{person} is travelling to {city} from {date} to {date2} for the {project} offsite.",
        ("travel",),
    ),
    (
        "context",
        "{person} is on parental leave until {date}; {person2} covers {project}.",
        ("leave",),
    ),
    (
        "context",
        "The {project} launch moved to {date} because the {component} failed load tests.",
        ("deadline",),
    ),
    (
        "context",
        "{person} is migrating {project} from {tool} to {tool2} this quarter.",
        ("migration",),
    ),
    ("context", "The {team} team is hiring a {lang} engineer for the {component}.", ("hiring",)),
    (
        "context",
        "The incident on {date} took down the {project} {component} for {minutes} minutes.",
        ("incident",),
    ),
    ("relationship", "{person} reports to {person2} on the {team} team.", ("org",)),
    ("relationship", "{person} mentors {person2} on {lang} and {tool}.", ("mentoring",)),
    ("relationship", "{person} and {person2} co-own the {project} {component}.", ("ownership",)),
    ("relationship", "{person} is the {team} team's contact for {tool} questions.", ("org",)),
    ("relationship", "{person} pairs with {person2} every {weekday} on {task}.", ("pairing",)),
    (
        "pattern",
        "{person} usually deploys {project} on {weekday} mornings after the standup.",
        ("deploys",),
    ),
    (
        "pattern",
        "{person} reviews pull requests for the {component} within {minutes} minutes.",
        ("review",),
    ),
    (
        "pattern",
        "Every {weekday} {person} runs the {project} {component} load tests with {tool}.",
        ("testing",),
    ),
    (
        "pattern",
        "{person} writes a design doc before touching the {project} {component}.",
        ("process",),
    ),
    (
        "pattern",
        "When {tool} alerts fire for {project}, {person} checks {tool2} dashboards first.",
        ("on-call",),
    ),
    (
        "personality",
        "{person} is {adjective} and likes to hear the trade-offs before a decision.",
        ("working-style",),
    ),
    ("personality", "{person} enjoys {hobby} and often mentions it on {weekday}s.", ("personal",)),
    (
        "personality",
        "{person} loves {food} and recommends a place near the {city} office.",
        ("personal",),
    ),
    (
        "personality",
        "{person} is {adjective} in code review and asks for tests with every change.",
        ("review",),
    ),
]

# Questions an agent sends to recall, drawn from the same vocabularies so that some
# words match and some only paraphrase.
QUESTIONS = [
    "What does {person} prefer for {task}?",
    "How should I format answers for {person}?",
    "Which editor settings does {person} use?",
    "When can I schedule a meeting with {person}?",
    "Which language should examples for {person} be in?",
    "Can I page {person} about {project} tonight?",
    "Which database does the {project} {component} use?",
    "What is the {project} {component} written in?",
    "Where does {project} keep its {component} data?",
    "Who owns {project}?",
    "When did {project} release the {component}?",
    "What runs the staging cluster of {project}?",
    "What is installed on {person}'s laptop?",
    "Is {person} travelling to {city} soon?",
    "Who covers {project} while {person} is away?",
    "Why did the {project} launch slip?",
    "What is {project} migrating to?",
    "Is the {team} team hiring?",
    "What happened in the {project} {component} incident?",
    "Who does {person} report to?",
    "Who mentors {person}?",
    "Who maintains the {project} {component}?",
    "Who can answer {tool} questions?",
    "When does {person} pair on {task}?",
    "When does {person} usually deploy {project}?",
    "How fast does {person} review pull requests?",
    "Who runs load tests on the {project} {component}?",
    "Does {person} need a design doc for the {project} change?",
    "What should I check when {tool} alerts fire?",
    "How does {person} like to make decisions?",
    "What does {person} do for fun?",
    "Where should we eat in {city} with {person}?",
    "What does {person} look for in code review?",
    "{tool} upgrade plan for {project}",
    "{person} {project} deadline",
    "remind me about {person}'s preferences",
]


# Fields whose values become tags of a generated fact.
SUBJECT_FIELDS = ("person", "person2", "project", "component", "team", "tool", "tool2", "city")


class FactGenerator:
    """Deterministic, varied fact sentences with categories, tags and importance."""

    def __init__(self, seed: int = 7) -> None:
        self.random = random.Random(seed)

    def _fields(self) -> dict[str, str]:
        r = self.random
        person, person2 = (f"{r.choice(FIRST)} {r.choice(LAST)}" for _ in range(2))
        tool, tool2 = r.sample(TOOLS, 2)
        lang, lang2 = r.sample(LANGUAGES, 2)
        day, day2 = r.randint(1, 27), r.randint(1, 28)
        month = r.randrange(12)
        year = r.choice((2024, 2025, 2026))
        return {
            "person": person,
            "person2": person2,
            "tool": tool.replace("-", " "),
            "tool2": tool2.replace("-", " "),
            "lang": lang,
            "lang2": lang2,
            "project": r.choice(PROJECTS),
            "component": r.choice(COMPONENTS),
            "city": r.choice(CITIES).replace("-", " "),
            "team": r.choice(TEAMS),
            "task": r.choice(TASKS),
            "style": r.choice(STYLES),
            "drink": r.choice(DRINKS),
            "setting": r.choice(EDITOR_SETTINGS),
            "weekday": r.choice(WEEKDAYS),
            "hour": f"{r.randint(7, 11)}:{r.choice(('00', '30'))}",
            "version": f"{r.randint(1, 17)}.{r.randint(0, 12)}",
            "date": f"{day} {MONTHS[month]} {year}",
            "date2": f"{max(day, day2) + 1} {MONTHS[month]} {year}",
            "minutes": str(r.choice((5, 10, 15, 20, 30, 45, 90, 120))),
            "os": r.choice(("macOS", "Ubuntu 24.04", "Fedora", "Arch Linux", "Windows 11")),
            "pkg": r.choice(("Homebrew", "apt", "Nix", "asdf", "mise", "winget")),
            "proxy": r.choice(("Nginx", "Caddy", "Traefik", "Envoy")),
            "adjective": r.choice(ADJECTIVES),
            "hobby": r.choice(HOBBIES),
            "food": r.choice(FOODS),
        }

    def fact(self) -> dict[str, object]:
        """One fact as the write API takes it."""
        category, template, tags = self.random.choice(TEMPLATES)
        fields = self._fields()
        # Tags name the entities a fact is about. Template-mates share most of their
        # words, so a shared topic tag as well would make the write path merge facts
        # about different people as "the same subject".
        subjects = [
            fields[name].lower().replace(" ", "-")
            for name in SUBJECT_FIELDS
            if "{" + name + "}" in template
        ]
        return {
            "content": template.format(**fields),
            "category": category,
            "tags": subjects or list(tags),
            "importance": round(self.random.uniform(0.2, 0.95), 2),
        }

    def unique_facts(self, n: int) -> list[dict[str, object]]:
        """``n`` facts with pairwise distinct content."""
        seen: set[str] = set()
        out: list[dict[str, object]] = []
        while len(out) < n:
            fact = self.fact()
            if fact["content"] not in seen:
                seen.add(fact["content"])
                out.append(fact)
        return out

    def questions(self, n: int) -> list[str]:
        """``n`` recall queries in the voice of an agent's turn."""
        return [self.random.choice(QUESTIONS).format(**self._fields()) for _ in range(n)]


if __name__ == "__main__":
    generator = FactGenerator()
    for fact in generator.unique_facts(8):
        print(fact)
    for question in generator.questions(4):
        print(question)
