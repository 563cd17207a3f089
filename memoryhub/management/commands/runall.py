"""Run the web server, a Celery worker and celery beat in the foreground.

Ctrl-C (or SIGTERM) stops all three; if one of them exits, the others are stopped too.
"""

import signal
import subprocess
import sys
import time
from types import FrameType

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run web + worker + beat until interrupted."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.MEMORYHUB_HOST)
        parser.add_argument("--port", type=int, default=settings.MEMORYHUB_PORT)

    def handle(self, *args: object, **options: object) -> None:
        python = sys.executable
        bind = f"{options['host']}:{options['port']}"
        commands = {
            "web": [
                python,
                "-m",
                "gunicorn",
                "memoryhub.wsgi:application",
                "--bind",
                bind,
                "--workers",
                str(settings.MEMORYHUB_WEB_WORKERS),
                "--threads",
                "4",
                "--access-logfile",
                "-",
                "--graceful-timeout",
                "5",
            ],
            "worker": [
                python,
                "-m",
                "celery",
                "-A",
                "memoryhub",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                str(settings.MEMORYHUB_WORKER_CONCURRENCY),
                "--hostname",
                "memoryhub@%h",
            ],
            "beat": [
                python,
                "-m",
                "celery",
                "-A",
                "memoryhub",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                settings.CELERY_BEAT_SCHEDULE_FILENAME,
            ],
        }
        broker = (
            "redis"
            if settings.REDIS_URL
            else "the filesystem queue in " + str(settings.DATA_DIR / "queue")
        )
        self.stdout.write(
            f"MemoryHub on http://{bind}/ (API docs at /api/docs), "
            f"worker and beat on {broker}. Ctrl-C stops everything."
        )
        # Own sessions: Ctrl-C reaches only this process, which then stops each child once.
        processes = {
            name: subprocess.Popen(cmd, start_new_session=True) for name, cmd in commands.items()
        }
        stopping = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        try:
            while not stopping:
                for name, proc in processes.items():
                    code = proc.poll()
                    if code is not None:
                        self.stderr.write(f"{name} exited with code {code}; stopping the rest.")
                        exit_code = code or 1
                        stopping = True
                        break
                time.sleep(0.5)
        finally:
            for proc in processes.values():
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            for proc in processes.values():
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
        if exit_code:
            sys.exit(exit_code)
