"""What agents may call of CodeGraph: ``codegraph_query``."""

import dataclasses
from typing import Any

from pydantic import BaseModel, Field

from codegraph import selectors
from memoryhub.engine.toolkit import ToolAnswer, tool
from teams.services import Actor


class CodegraphQueryArguments(BaseModel):
    query: str = Field(description="A symbol name (login, Client.get) or, with callers, a "
                       "dotted name (django.contrib.auth.login) or a bare one")  # fmt: skip
    project: str | int | None = Field(None, description="A code project's name or id")
    callers: bool = Field(False, description="List the call sites of the symbol instead")
    limit: int = Field(20, ge=1, le=200)


class CodegraphQueryAnswer(BaseModel):
    query: str | None = Field(None, description="The symbol searched for (definitions)")
    symbols: list[dict[str, Any]] | None = Field(
        None, description="Definitions: kind, name, qualified_name, path, line, signature, ..."
    )
    symbol: str | None = Field(None, description="The symbol whose callers were asked for")
    targets: list[str] | None = Field(None, description="Dotted names the calls resolve to")
    calls: list[dict[str, Any]] | None = Field(None, description="Call sites: path, line, caller")


@tool(arguments=CodegraphQueryArguments, answer=CodegraphQueryAnswer)
def codegraph_query(actor: Actor, args: CodegraphQueryArguments) -> ToolAnswer:
    """Find where a symbol is defined in the indexed source trees (``kind name - file:line``
    per line, exact names first), or with ``callers`` where it is called, resolved through
    imports."""
    if args.callers:
        result = selectors.symbol_callers(
            user=actor.user, symbol=args.query, project=args.project, limit=args.limit
        )
        target = ", ".join(result.targets) or args.query
        calls = [dataclasses.asdict(call) for call in result.calls]
        data = {"symbol": args.query, "targets": result.targets, "calls": calls}
        if not result.calls:
            return ToolAnswer(data=data, text=f"No calls of {target} found.")
        header = f"{len(result.calls)} call(s) of {target}:"
        return ToolAnswer(data=data, text="\n".join([header, *(c.as_line() for c in result.calls)]))
    # Exact names first, then the ranked fuzzy rest.
    found = selectors.symbol_find(
        user=actor.user, query=args.query, project=args.project, mode="exact", limit=args.limit
    )
    if len(found) < args.limit:
        seen = {hit.id for hit in found}
        fuzzy = selectors.symbol_find(
            user=actor.user, query=args.query, project=args.project, mode="fuzzy", limit=args.limit
        )
        found += [hit for hit in fuzzy if hit.id not in seen][: args.limit - len(found)]
    data = {"query": args.query, "symbols": [dataclasses.asdict(hit) for hit in found]}
    if not found:
        return ToolAnswer(data=data, text=f"No symbols match '{args.query}'.")
    return ToolAnswer(data=data, text="\n".join(hit.as_line() for hit in found))


TOOLS = [codegraph_query]
