"""Shared fixtures: the owner / teammate / outsider world, API clients, agent tokens,
real Celery workers and the browser."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests
# make around it are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

REPO_ROOT = Path(__file__).resolve().parent
REDIS_TEST_URL = os.environ.get("MEMORYHUB_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
PASSWORD = "correct horse battery staple"


def test_engine() -> str:
    """The engine the suite runs on: "sqlite" or "postgresql" (``DATABASE_URL``)."""
    return (
        "sqlite"
        if settings.DATABASES["default"]["ENGINE"] == settings.SQLITE_ENGINE
        else ("postgresql")
    )


def pytest_collection_modifyitems(config, items) -> None:
    """Tests of one engine's own machinery (``@pytest.mark.sqlite_only(reason)``,
    ``postgresql_only``) are skipped on the other, with the reason they give."""
    engine = test_engine()
    for item in items:
        for name, only in (("sqlite_only", "sqlite"), ("postgresql_only", "postgresql")):
            marker = item.get_closest_marker(name)
            if marker is not None and engine != only:
                why = marker.args[0] if marker.args else f"{only} only"
                item.add_marker(pytest.mark.skip(reason=f"{only} only: {why}"))


@pytest.fixture(autouse=True, scope="session")
def _celery_eager() -> Iterator[None]:
    """Unit tests run tasks in-process; integration tests start real workers."""
    from memoryhub.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield


@pytest.fixture(autouse=True)
def _eager_join_flag_reset() -> Iterator[None]:
    """Eager tasks run on several live-server threads at once leave Celery's global
    "joining would block" flag set (each run saves and restores it, interleaved), which
    then refuses ``result.get()`` in the next test. Eager mode is for tests only."""
    yield
    from celery.result import _set_task_join_will_block

    _set_task_join_will_block(False)


@pytest.fixture(autouse=True)
def _queue_circuit_closed() -> Iterator[None]:
    """A test that finds the broker down leaves queueing as it found it."""
    yield
    from memoryhub.engine.tasks import queue_circuit

    queue_circuit.close()


@pytest.fixture(autouse=True)
def _cache_circuit_closed() -> Iterator[None]:
    """A test that finds the shared cache down leaves it as it found it."""
    yield
    from memoryhub.engine.cache import cache_circuit

    cache_circuit.close()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    # The default hasher is deliberately slow; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(django_user_model) -> Callable:
    def make(username: str, **extra: object):
        return django_user_model.objects.create_user(username=username, password=PASSWORD, **extra)

    return make


@pytest.fixture
def owner(make_user):
    return make_user("alice")


@pytest.fixture
def teammate(make_user):
    return make_user("bob")


@pytest.fixture
def outsider(make_user):
    return make_user("charlie")


@pytest.fixture
def staff(make_user):
    return make_user("dana", is_staff=True)


@pytest.fixture
def team(owner, teammate) -> Group:
    """A team with the owner (admin) and the teammate (member); owner's active team."""
    from teams.models import Membership, MemorySettings, Role

    group = Group.objects.create(name="Platform")
    Membership.objects.create(user=owner, team=group, role=Role.ADMIN)
    Membership.objects.create(user=teammate, team=group, role=Role.MEMBER)
    MemorySettings.objects.update_or_create(user=owner, defaults={"active_team": group})
    return group


@pytest.fixture
def other_team(outsider) -> Group:
    from teams.models import Membership, Role

    group = Group.objects.create(name="Elsewhere")
    Membership.objects.create(user=outsider, team=group, role=Role.ADMIN)
    return group


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner_client(owner) -> Client:
    return _logged_in(owner)


@pytest.fixture
def teammate_client(teammate) -> Client:
    return _logged_in(teammate)


@pytest.fixture
def outsider_client(outsider) -> Client:
    return _logged_in(outsider)


@pytest.fixture
def staff_client(staff) -> Client:
    return _logged_in(staff)


@pytest.fixture
def remember(django_capture_on_commit_callbacks) -> Callable:
    """Store a fact for ``user`` through the write service, running the on-commit
    embedding inline (tasks are eager in unit tests)."""
    from facts.services.create import fact_create
    from teams.services import Actor

    def store(user, content: str, **data: object):
        with django_capture_on_commit_callbacks(execute=True):
            result = fact_create(actor=Actor(user=user), data={"content": content, **data})
        result.fact.refresh_from_db()
        return result.fact

    return store


@pytest.fixture
def make_token() -> Callable:
    """Create an agent token; returns (token, secret)."""
    from teams.services import Actor, agent_token_create

    def make(
        user,
        name: str = "agent",
        scopes: tuple[str, ...] = ("read", "write"),
        fleet: str = "",
        role: str = "",
    ):
        return agent_token_create(
            actor=Actor(user=user), name=name, scopes=list(scopes), fleet=fleet, role=role
        )

    return make


@pytest.fixture
def agent_client(make_token) -> Callable:
    """A Client that sends ``Authorization: Bearer`` for a fresh token of ``user``."""

    def make(user, scopes: tuple[str, ...] = ("read", "write"), name: str = "agent") -> Client:
        _, secret = make_token(user, name=name, scopes=scopes)
        return Client(headers={"Authorization": f"Bearer {secret}"})

    return make


# --- Real workers -------------------------------------------------------------------------


def _redis_answers() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_TEST_URL, socket_timeout=1).ping())
    except redis.RedisError:
        return False


class WorkerProcess:
    """A real ``celery worker`` process for the project's app, stopped on close. With
    ``pool="prefork"`` it runs its tasks in ``concurrency`` pool processes
    (``pool_pids()``)."""

    def __init__(
        self,
        *,
        env: dict[str, str],
        queue: str,
        pool: str = "solo",
        name: str = "",
        concurrency: int = 1,
    ) -> None:
        self.queue = queue
        self.name = name or queue
        self.log = Path(env["MEMORYHUB_DATA_DIR"]) / f"worker-{queue}-{uuid.uuid4().hex[:6]}.log"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memoryhub",
                "worker",
                "--pool",
                pool,
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "--queues",
                queue,
                "--hostname",
                f"{self.name}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def pool_pids(self) -> list[int]:
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True, text=True
        ).stdout
        return [int(pid) for pid in out.split()]

    def kill(self) -> None:
        """SIGKILL the worker and its pool, as the OOM killer or ``kill -9`` would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def output(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "ready." in self.output():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.output()}")
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {timeout}s:\n{self.output()}")


def worker_env(
    *, data_dir: Path, redis_url: str = "", extra: dict[str, str] | None = None
) -> dict[str, str]:
    env = dict(os.environ)
    env["MEMORYHUB_DATA_DIR"] = str(data_dir)
    env["SECRET_KEY"] = str(settings.SECRET_KEY)
    db = settings.DATABASES["default"]
    if db["ENGINE"] == settings.SQLITE_ENGINE:
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:  # the test database, which the test run made beside the configured one
        password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
        env["DATABASE_URL"] = (
            f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
        )
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.update(extra or {})
    return env


@pytest.fixture
def redis_url() -> str:
    if not _redis_answers():
        if os.environ.get("CI"):
            pytest.fail(f"Redis is not answering at {REDIS_TEST_URL}")
        pytest.skip(f"Redis is not answering at {REDIS_TEST_URL}")
    return REDIS_TEST_URL


@pytest.fixture
def start_worker(tmp_path) -> Iterator[Callable[..., WorkerProcess]]:
    """Start a real worker on Redis (``redis_url``) or the filesystem transport, on a
    queue of its own so no other worker steals the tasks (or on ``queue``, such as the
    default one of a broker the test owns), with ``env`` added to its environment, named
    ``name`` (default: the queue's) for several on one queue, with ``concurrency`` pool
    processes on the prefork pool."""
    started: list[WorkerProcess] = []

    def start(
        redis_url: str = "",
        *,
        queue: str = "",
        pool: str = "solo",
        env: dict[str, str] | None = None,
        name: str = "",
        concurrency: int = 1,
    ) -> WorkerProcess:
        worker = WorkerProcess(
            env=worker_env(data_dir=tmp_path, redis_url=redis_url, extra=env),
            queue=queue or f"test-{uuid.uuid4().hex[:10]}",
            pool=pool,
            name=name,
            concurrency=concurrency,
        )
        started.append(worker)
        worker.wait_ready()
        return worker

    yield start
    # The test is over: no warm shutdown to wait for (seconds a worker, on a prefork
    # pool or the filesystem queue), the worker and its pool just go.
    for worker in started:
        worker.kill()


# --- Real web servers ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcesses:
    """Server processes a test starts on the test database (as ``make run`` serves them),
    each answered once it serves, all stopped with the test."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[subprocess.Popen] = []

    def start(self, name: str, command: list[str], *, env: dict[str, str], probe: str) -> None:
        """Run ``command`` and wait until ``probe`` gets any answer (it is serving)."""
        import httpx

        log = self.tmp_path / f"{name}.log"
        proc = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
        )
        self.started.append(proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited early:\n{log.read_text()}")
            try:
                httpx.get(probe, timeout=2)
                return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError(f"{name} not ready after 60s:\n{log.read_text()}")

    def stop(self) -> None:
        for proc in self.started:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def start_web(tmp_path) -> Iterator[Callable[..., str]]:
    """Start the web server (gunicorn, as ``make run`` does) on the test database and
    answer its base URL. Each call is one more server sharing the data: one process of
    two threads, or ``workers`` processes of ``threads`` threads (``make run`` serves
    with ``MEMORYHUB_WEB_WORKERS`` processes of 4 threads)."""
    servers = ServerProcesses(tmp_path)

    def start(redis_url: str = "", *, workers: int = 1, threads: int = 2, **env_extra: str) -> str:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application",
                   "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
                   "--threads", str(threads)]  # fmt: skip
        env = worker_env(data_dir=tmp_path, redis_url=redis_url) | env_extra
        servers.start(f"web-{port}", command, env=env, probe=f"{url}/login/")
        return url

    yield start
    servers.stop()


@pytest.fixture
def start_chat(tmp_path) -> Iterator[Callable[..., str]]:
    """Start the OpenAI-compatible endpoint (uvicorn, as ``make run`` does) on the test
    database and answer its base URL, ``.../v1``."""
    servers = ServerProcesses(tmp_path)

    def start(**env_extra: str) -> str:
        port = _free_port()
        url = f"http://127.0.0.1:{port}/v1"
        command = [sys.executable, "-m", "uvicorn", "memoryhub.asgi:chat", "--port", str(port)]
        env = worker_env(data_dir=tmp_path) | env_extra
        servers.start(f"chat-{port}", command, env=env, probe=f"{url}/models")
        return url

    yield start
    servers.stop()


class RedisServer:
    """A ``redis-server`` of the test's own on a free port, without persistence, that
    the test may kill and start again on the same port."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.data_dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if redis.Redis.from_url(self.url, socket_timeout=1).ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def broker_at() -> Callable[..., contextlib.AbstractContextManager]:
    """``with broker_at(url):`` the app sends its tasks to the Redis at ``url`` (with the
    production timeouts), or with an empty ``url`` to the filesystem queue under
    ``data_dir``, instead of running them in-process; put back afterwards."""
    from memoryhub.celery import app
    from memoryhub.engine.queue import celery_queue_settings
    from memoryhub.engine.tasks import queue_circuit

    def forget_connections() -> None:
        app._after_fork()  # the pooled connections to the broker the app had
        app._backend_cache = None  # and its result backend
        app._local.__dict__.pop("backend", None)

    @contextlib.contextmanager
    def use(url: str, *, data_dir: Path | None = None) -> Iterator[None]:
        keys = ("broker_url", "broker_transport_options", "result_backend", "task_always_eager")
        saved = {key: app.conf[key] for key in keys}
        queue = celery_queue_settings(redis_url=url, data_dir=data_dir or Path(settings.DATA_DIR))
        app.conf.update(
            broker_url=queue["broker_url"],
            broker_transport_options=queue["broker_transport_options"],
            result_backend=queue["result_backend"],
            task_always_eager=False,
        )
        forget_connections()
        queue_circuit.close()
        try:
            yield
        finally:
            app.conf.update(saved)
            forget_connections()
            queue_circuit.close()

    return use


# --- Browser ------------------------------------------------------------------------------


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        message = "Debian's chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=path,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def login(page, live_server) -> Callable:
    """Log ``user`` in through the real login form."""

    def do_login(user) -> None:
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", user.get_username())
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return do_login


# --- Agent tools ----------------------------------------------------------------------------


@pytest.fixture
def tool_world(owner, remember, tmp_path, settings) -> dict:
    """The owner's memory, a wiki page and a scanned code project, and one call of each
    agent tool that finds them: {tool name: arguments}."""
    from codegraph.services import code_project_register, code_project_scan
    from teams.services import Actor
    from wiki.services import wiki_page_upsert

    fact = remember(owner, "The staging database runs on host db-stage-2")
    remember(owner, "Alice drinks her espresso without sugar")
    remember(owner, "Ledgerd runs on Postgres.")
    wiki_page_upsert(
        actor=Actor(user=owner),
        title="Deploy runbook",
        content="# Deploy runbook\n\nRestart the canary before the fleet.",
    )
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    source = tmp_path / "shop"
    source.mkdir()
    (source / "auth.py").write_text("def login(user):\n    return user\n")
    (source / "views.py").write_text("from auth import login\n\n\ndef view(u):\n    login(u)\n")
    project = code_project_register(actor=Actor(user=owner), name="shop", path=str(source))
    code_project_scan(project_id=project.pk)
    return {
        "recall": {"query": "Which host runs the staging database?"},
        "memory_write": {"content": "Deploys go out on Tuesdays"},
        "memory_get": {"ids": [fact.pk]},
        "learning_write": {
            "skill": "deploy",
            "content": "A cold cache stalls the rollout; warm it first.",
            "fingerprint": "rollout-stall",
        },
        "memory_forget": {"topic": "espresso"},
        "tiered_recall": {"tier": "org", "query": "canary"},
        "codegraph_query": {"query": "login"},
        "wiki_search": {"query": "canary"},
        "wiki_read": {"title_or_slug": "Deploy runbook"},
        "wiki_write": {"title": "Vendors", "content": "Acme ships on Mondays."},
        "concept_query": {"entity": "Ledgerd"},
    }


@pytest.fixture
def role_presets(db) -> None:
    """The shipped role presets (a flush between transactional tests removes the rows
    the data migration seeded)."""
    import importlib

    from memoryhub.surface.models import RolePreset

    shipped = {
        **importlib.import_module("memoryhub.migrations.0003_role_preset_defaults").DEFAULTS,
        **importlib.import_module("memoryhub.surface.migrations.0002_every_roles_preset").PRESETS,
    }
    for role, (description, entries) in shipped.items():
        RolePreset.objects.get_or_create(
            role=role, defaults={"description": description, "entries": entries}
        )
