"""A knowledge graph of 1,000 facts for the browser tests: people working at
organisations and on projects, projects using and running on tools and depending on one
another, people and organisations in places. Some entities are named far more often
than others, as in a real memory."""

import random

FIRST = (
    "Alice Bruno Chloe Dmitri Elena Farid Greta Hugo Ines Jonas Kira Luca Maya Nils Olga "
    "Pablo Quinn Rosa Sven Tara Umar Vera Wim Xenia Yusuf Zoe"
).split()
LAST = "Moreau Okafor Lindqvist Tanaka Rossi Novak Duarte Becker Haddad Silva Kowalski".split()
ORGANISATIONS = [
    f"{name} {kind}"
    for name in "Acme Globex Initech Umbrella Stark Wayne Hooli Vandelay Soylent Tyrell".split()
    for kind in ("Labs", "Systems", "Group")
]
PROJECTS = [
    f"Project {name}"
    for name in (
        "Atlas Borealis Cobalt Dynamo Ember Falcon Granite Harbor Iris Juniper Kestrel Lumen "
        "Monsoon Nimbus Onyx Pioneer Quasar Raven Sierra Tundra Umbra Vortex Willow Zephyr"
    ).split()
]
TOOLS = (
    "Postgres Redis Kafka Kubernetes Terraform Grafana Prometheus Django React Celery "
    "Nginx Docker Elasticsearch RabbitMQ Ansible Jenkins Sentry Vault Consul Airflow Spark "
    "Flink Cassandra MongoDB ClickHouse"
).split()
PLACES = "Berlin Lisbon Oslo Nairobi Osaka Toronto Lyon Krakow Porto Austin Dublin Seoul".split()


def _zipf(rng: random.Random, items: list[str]) -> str:
    """One of ``items``, the first ones far more often (weights 1/rank)."""
    return rng.choices(items, weights=[1 / (rank + 1) for rank in range(len(items))])[0]


def statements(count: int = 1000, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    people = [f"{first} {last}" for last in LAST for first in FIRST]
    rng.shuffle(people)
    made: set[str] = set()
    while len(made) < count:
        person, org = _zipf(rng, people), _zipf(rng, ORGANISATIONS)
        project, tool = _zipf(rng, PROJECTS), _zipf(rng, TOOLS)
        made.add(
            rng.choice(
                (
                    f"{person} works at {org}.",
                    f"{person} works on {project}.",
                    f"{person} works on {project}.",
                    f"{project} uses {tool}.",
                    f"{project} runs on {_zipf(rng, TOOLS)}.",
                    f"{project} depends on {_zipf(rng, PROJECTS)}.",
                    f"{person} lives in {_zipf(rng, PLACES)}.",
                    f"{org} is headquartered in {_zipf(rng, PLACES)}.",
                    f"{person} manages {project}.",
                    f"{tool} depends on {_zipf(rng, TOOLS)}.",
                )
            )
        )
    return sorted(made)


def build(owner, count: int = 1000) -> int:
    """Store ``count`` facts of ``owner`` and extract their graph offline; the facts."""
    from concepts.services import concept_graph_sync
    from facts.models import Fact

    Fact.objects.bulk_create(Fact(owner=owner, content=s) for s in statements(count))
    concept_graph_sync()
    return Fact.objects.filter(owner=owner).count()
