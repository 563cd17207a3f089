"""Several worker processes on one Redis queue, as on several machines: every task is
run by exactly one of them, none is lost, and the work is shared. Runs on the suite's
engine (SQLite or PostgreSQL), with real workers on a Redis of the test's own."""

import re
import time
import uuid
from collections import Counter

import pytest

from facts.models import Fact

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

EMBEDDED = "local:all-MiniLM-L6-v2-int8"
SUCCEEDED = re.compile(r"Task facts\.embed\[([0-9a-f-]+)\] succeeded")


def test_three_workers_on_one_queue_run_each_task_once_and_share_them(
    owner, agent_client, redis_server, start_worker, broker_at
):
    workers = [start_worker(redis_server.url, queue="celery", name=f"machine{n}") for n in range(3)]
    client = agent_client(owner)
    ids = []
    with broker_at(redis_server.url):
        for n in range(45):
            words = " ".join(uuid.uuid4().hex[:8] for _ in range(5))
            response = client.post(
                "/api/memories", {"content": f"Record {n} {words}"}, "application/json"
            )
            assert response.status_code == 201, response.content
            ids.append(response.json()["id"])

    # A task embeds the facts still waiting beside its own, so every fact can be embedded
    # before the last tasks ran: wait for the tasks themselves.
    def runs() -> dict[str, list[str]]:
        return {w.name: SUCCEEDED.findall(w.output()) for w in workers}

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if sum(len(tasks) for tasks in runs().values()) >= len(ids):
            break
        time.sleep(0.2)
    assert Fact.objects.filter(pk__in=ids, embedding_model=EMBEDDED).count() == len(ids)
    time.sleep(1)  # a task run twice would show by now
    ran = runs()
    every = Counter(task for tasks in ran.values() for task in tasks)
    assert every and set(every.values()) == {1}, "a task ran twice"
    assert len(every) == len(ids)  # one embedding task per write, none lost
    assert sum(1 for tasks in ran.values() if tasks) >= 2, {k: len(v) for k, v in ran.items()}
