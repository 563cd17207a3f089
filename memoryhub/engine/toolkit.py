"""The one shape of an agent tool, and the registry of every tool. Each app (and the
agent surface, for the tools that span apps) declares its tools in its ``tools.py`` with
``@tool`` and lists them in ``TOOLS``; the registry finds them in the installed apps, in
their order; the agent surface serves them over REST and MCP.

A tool has a name, a description (its handler's docstring), a pydantic model of its
arguments (their JSON Schema is the tool's input schema), optionally one of its answer's
data (the output schema), the token scope it needs, and annotations: read-only,
destructive, idempotent. Its handler takes the acting ``Actor`` and the validated
arguments, calls the app's services or selectors, and answers a ``ToolAnswer``:
structured data, plus the compact text an agent reads.
"""

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from django.apps import apps
from pydantic import BaseModel, ValidationError

from memoryhub.engine.errors import InvalidInput, NotFound
from memoryhub.engine.refs import shortened
from memoryhub.engine.unicode import require_storable_text
from teams.services import Actor


@dataclass(frozen=True)
class ToolAnswer:
    data: dict[str, Any]  # structured: ids, fields, counts
    text: str  # what an agent reads: short lines, ids to fetch more with


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    scope: str  # "read" or "write": the token scope it needs
    read_only: bool
    destructive: bool
    idempotent: bool
    handler: Callable[[Actor, Any], ToolAnswer]
    answer: type[BaseModel] | None = None  # the shape of ToolAnswer.data

    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        if self.answer is None:
            return {"type": "object", "additionalProperties": True}
        return self.answer.model_json_schema(mode="serialization")

    def __call__(self, *, actor: Actor, **arguments: Any) -> ToolAnswer:
        return self.run(actor=actor, arguments=arguments)

    def run(self, *, actor: Actor, arguments: Any) -> ToolAnswer:
        """Run the tool as ``actor``: its token must have the scope; the arguments are
        checked against the tool's model (a clear InvalidInput when they do not fit)."""
        actor.require_scope(self.scope)
        if not isinstance(arguments, dict):
            raise InvalidInput(f"The arguments of {self.name} are a JSON object.")
        require_storable_text(arguments)
        try:
            parsed = self.arguments.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            raise InvalidInput(f"Arguments of {self.name} do not fit: {problems}.") from None
        return self.handler(actor, parsed)


def tool(
    *,
    arguments: type[BaseModel],
    answer: type[BaseModel] | None = None,
    scope: str = "read",
    destructive: bool = False,
    idempotent: bool | None = None,
) -> Callable[[Callable[[Actor, Any], ToolAnswer]], Tool]:
    """Declare a handler as a tool named after it. A read tool is read-only and
    idempotent; a write tool says whether it destroys and whether repeating it is
    harmless."""

    def declare(handler: Callable[[Actor, Any], ToolAnswer]) -> Tool:
        return Tool(
            name=handler.__name__,
            description=inspect.cleandoc(handler.__doc__ or ""),
            arguments=arguments,
            scope=scope,
            read_only=scope == "read",
            destructive=destructive,
            idempotent=scope == "read" if idempotent is None else idempotent,
            handler=handler,
            answer=answer,
        )

    return declare


@functools.cache
def tool_registry() -> dict[str, Tool]:
    """Every tool by name, in the order agents see them: each installed app's ``TOOLS``
    (in its ``tools`` module), the apps in ``INSTALLED_APPS`` order."""
    found: dict[str, Tool] = {}
    for config in apps.get_app_configs():
        name = f"{config.name}.tools"
        if find_spec(name) is None:
            continue
        for each in getattr(import_module(name), "TOOLS", ()):
            found[each.name] = each
    return found


@functools.cache
def tool_apps() -> dict[str, str]:
    """The label of the app that declares each tool, by tool name."""
    found: dict[str, str] = {}
    for config in apps.get_app_configs():
        name = f"{config.name}.tools"
        if find_spec(name) is not None:
            for each in getattr(import_module(name), "TOOLS", ()):
                found[each.name] = config.label
    return found


def tool_names() -> list[str]:
    return list(tool_registry())


def tool_get(*, name: str) -> Tool:
    found = tool_registry().get(name)
    if found is None:
        raise NotFound(
            f"There is no tool named '{shortened(str(name))}'; "
            f"the tools are {', '.join(tool_names())}."
        )
    return found
