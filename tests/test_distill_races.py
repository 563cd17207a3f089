"""Distillation racing the writes that change who reads its sources, against a real
threaded server and a chat model that takes its time: what the model wrote from a fact
forgotten or made private meanwhile is never published, and jobs running at once never
distil the same facts twice."""

import threading
from collections import Counter
from functools import partial

import httpx
import pytest

from facts.models import Fact
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.llm.tests.conftest import completion, serve, user_data  # noqa: F401
from memoryhub.engine.models import MemoryConfig

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DRACE = [
    "Drace build agents run on spot instances in zone b.",
    "Payroll codename Heron lives in vault nine.",
    "The drace release train leaves every second Thursday.",
    "Drace staging certificates renew through the ops bot.",
]


def configure(**values: object) -> None:
    memory_config_get()  # the settings row, created once
    MemoryConfig.objects.filter(pk=1).update(**values)


def api_client(live_server, make_token, user) -> httpx.Client:
    _, secret = make_token(user, name=f"{user.username}-agent")
    return httpx.Client(
        base_url=f"{live_server.url}/api",
        headers={"Authorization": f"Bearer {secret}"},
        timeout=60,
    )


@pytest.fixture
def alice(live_server, make_token, owner, team):
    with api_client(live_server, make_token, owner) as client:
        yield client


@pytest.fixture
def bob(live_server, make_token, teammate, team):
    with api_client(live_server, make_token, teammate) as client:
        yield client


def at_once(*calls) -> list[httpx.Response]:
    """Run the calls on threads released together; their responses in order."""
    barrier = threading.Barrier(len(calls))
    responses: list[httpx.Response | None] = [None] * len(calls)

    def run(index: int, call) -> None:
        barrier.wait()
        responses[index] = call()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return responses


def everything_read_by(client: httpx.Client) -> str:
    """What a reader gets from the list, every fact page and recall."""
    listed = client.get("/memories", params={"limit": 200, "status": "all"}).json()
    texts = [item["content"] for item in listed["items"]]
    for item in listed["items"]:
        texts.append(client.get(f"/memories/{item['id']}").text)
    recalled = client.post("/recall", json={"query": "drace vault heron zone", "max_items": 50})
    return "\n".join([*texts, recalled.text])


def test_a_distillation_racing_a_forget_and_a_move_to_private_publishes_neither(
    alice,
    bob,
    serve,  # noqa: F811
):
    """alice's four team facts of project drace are being distilled; while the model
    thinks, she forgets one and makes another private. Bob then reads no summary or
    profile quoting either, and the job says it distilled again what was left."""
    asked, go = threading.Event(), threading.Event()

    def answer(request, count):
        if "facts" not in user_data(request):  # the concept graph's extraction
            return completion({"triples": []})
        sources = user_data(request)["facts"]
        if not asked.is_set():  # the first summary request waits for the test's changes
            asked.set()
            go.wait(30)
        return completion(
            {
                "summaries": [
                    {
                        "text": " ".join(source["text"] for source in sources),
                        "source_ids": [source["id"] for source in sources],
                    }
                ]
            }
        )

    server = serve(answer)
    configure(llm_url=server.url, llm_model="test-model", distillation_min_facts=2)
    ids = [
        alice.post("/memories", json={"content": text, "visibility": "team", "project": "drace"})
        .raise_for_status()
        .json()["id"]
        for text in DRACE
    ]
    forgotten, hidden = ids[0], ids[1]

    started: dict[str, httpx.Response] = {}
    job = threading.Thread(
        target=lambda: started.setdefault(
            "response", alice.post("/memories/distill-now", json={"project": "drace"})
        )
    )
    job.start()
    try:
        assert asked.wait(30), "the job never asked the chat model"
        receipt = alice.post("/forget", json={"topic": "zone b", "ids": [forgotten]})
        assert receipt.status_code == 200, receipt.text
        moved = alice.patch(f"/memories/{hidden}", json={"visibility": "private"})
        assert moved.status_code == 200, moved.text
        assert bob.get(f"/memories/{hidden}").status_code == 404
    finally:
        go.set()
        job.join(60)
    response = started["response"]
    assert response.status_code == 202, response.text
    result = alice.get(f"/jobs/{response.json()['job']}").json()
    assert result["state"] == "done", result

    read = everything_read_by(bob)
    assert "zone b" not in read and "vault nine" not in read
    # What was left is distilled again, from the two facts still there: the job says so.
    assert result["result"]["redone"] == 1 and result["result"]["discarded"] == 0, result
    summary = Fact.objects.get(layer=2, visibility="team", project="drace")
    assert set(summary.derived_from.values_list("pk", flat=True)) == set(ids[2:])
    assert "release train" in summary.content and "vault nine" not in summary.content
    profile = Fact.objects.get(layer=3, visibility="team", project="drace")
    assert "vault nine" not in profile.content and "zone b" not in profile.content
    assert "release train" in read
    # The private fact is alice's alone, and still waits for a distillation of its own.
    assert not Fact.objects.get(pk=hidden).distilled


@pytest.mark.postgresql_only("SQLite runs one write transaction at a time")
def test_distillations_started_at_once_distil_each_fact_once(alice, owner):
    """Five distill-now calls at once over the same twelve facts: one summary set, each
    fact distilled into exactly one summary, one profile."""
    configure(distillation_min_facts=12)
    for trial in range(3):
        project = f"dup-{trial}"
        for n in range(12):
            text = f"Duplicate trial {trial}: the pager rotation covers service {n} weekly"
            alice.post(
                "/memories", json={"content": text, "visibility": "team", "project": project}
            ).raise_for_status()
        distill = partial(alice.post, "/memories/distill-now", json={"project": project})
        responses = at_once(*[distill] * 5)
        assert [r.status_code for r in responses] == [202] * 5, [r.text for r in responses]
        links = Fact.derived_from.through.objects.filter(
            from_fact__layer=2, from_fact__project=project
        )
        cited = Counter(links.values_list("to_fact_id", flat=True))
        assert len(cited) == 12 and set(cited.values()) == {1}, cited
        assert Fact.objects.filter(layer=3, project=project).count() == 1
        assert Fact.objects.filter(owner=owner, project=project, distilled=True).count() == 12
