"""Run the web server, the chat endpoint and a Celery worker (with celery beat inside
it) in the foreground.

Each is supervised: one that exits (crashed, killed) is started again after a pause
that grows with repeated failures, and the log says so. Only Ctrl-C (or SIGTERM) stops
everything.
"""

import json
import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from memoryhub.celery import app as celery_app
from memoryhub.engine import liveness
from memoryhub.supervisor import PLAN_ENV


class Command(BaseCommand):
    help = "Run web + chat + worker (with beat) until interrupted, restarting any that exits."

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
                str(settings.MEMORYHUB_WEB_THREADS),
                # The application (Django, the views, the query session of the embedding
                # model) is loaded once, before the web workers are forked: they share it.
                "--preload",
                "--access-logfile",
                "-",
                "--graceful-timeout",
                "5",
                # Beside the rest of the server's state, not in the account's home.
                "--control-socket",
                str(settings.DATA_DIR / "gunicorn.ctl"),
            ],
            # The OpenAI-compatible endpoint, where a streamed answer costs no thread.
            "chat": [
                python,
                "-m",
                "uvicorn",
                "memoryhub.asgi:chat",
                "--host",
                options["host"],
                "--port",
                str(settings.MEMORYHUB_CHAT_PORT),
                "--timeout-graceful-shutdown",
                "5",
                "--no-access-log",
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
                # Beat runs inside the worker, in a process forked from it: it shares
                # the worker's pages instead of loading Django a fourth time, and it
                # stops and starts with the worker. Another beat elsewhere (Redis)
                # stands by on the lease as before.
                "--beat",
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
            f"MemoryHub on http://{bind}/ (API docs at /api/docs; OpenAI-compatible "
            f"endpoint at http://{options['host']}:{settings.MEMORYHUB_CHAT_PORT}/v1), "
            f"worker with beat on {broker}. Ctrl-C stops everything."
        )
        if os.geteuid() == 0:
            self.stdout.write(
                "Running as root. The worker takes JSON messages only, so a message cannot "
                "run code of its own (the risk Celery warns of for root); still, prefer an "
                "ordinary account."
            )
        # The worker leaves signs of life on a beacon; one that leaves none while tasks
        # wait in its queue is stuck (its pool wedged) and is started again.
        beacon = settings.DATA_DIR / "worker.beacon"
        os.environ[liveness.BEACON_ENV] = str(beacon)
        os.environ[PLAN_ENV] = json.dumps(
            {
                "commands": commands,
                "log_level": settings.LOG_LEVEL,
                "stall": {
                    "name": "worker",
                    "beacon": str(beacon),
                    "broker": {
                        "broker_url": celery_app.conf.broker_url,
                        "broker_transport_options": celery_app.conf.broker_transport_options,
                    },
                    "seconds": settings.MEMORYHUB_WORKER_STALL_SECONDS,
                },
            }
        )
        # This process becomes the supervisor, in a fresh interpreter without Django: the
        # same process id (Ctrl-C and SIGTERM reach it as before), a fifth of the memory.
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(python, [python, "-m", "memoryhub.supervisor"])
