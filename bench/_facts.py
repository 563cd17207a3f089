"""A generator of realistic fact sentences and of the questions an agent asks about them.

Not a benchmark itself: ``python bench/_facts.py`` prints a few generated facts.
"""

from __future__ import annotations

import random

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
