"""The ``codegraph_query`` agent tool: plain text lines an agent can read directly."""

from codegraph import selectors
from memoryhub.errors import ApplicationError
from teams.services import Actor


def codegraph_query(
    *,
    actor: Actor,
    query: str,
    project: str | int | None = None,
    callers: bool = False,
    limit: int = 20,
) -> str:
    """Find symbols named like ``query`` (``kind name — file:line`` per line), or with
    ``callers`` the call sites of ``query`` (a dotted name such as
    ``django.contrib.auth.login`` or a bare name), resolved through imports. Errors
    come back as one line of text, as an agent would want them."""
    try:
        if callers:
            result = selectors.symbol_callers(
                user=actor.user, symbol=query, project=project, limit=limit
            )
            target = ", ".join(result.targets) or query
            if not result.calls:
                return f"No calls of {target} found."
            header = f"{len(result.calls)} call(s) of {target}:"
            return "\n".join([header, *(call.as_line() for call in result.calls)])
        # Exact names first, then the ranked fuzzy rest.
        ordered = selectors.symbol_find(
            user=actor.user, query=query, project=project, mode="exact", limit=limit
        )
        if len(ordered) < limit:
            seen = {hit.id for hit in ordered}
            ordered += [
                hit
                for hit in selectors.symbol_find(
                    user=actor.user, query=query, project=project, mode="fuzzy", limit=limit
                )
                if hit.id not in seen
            ][: limit - len(ordered)]
        if not ordered:
            return f"No symbols match '{query}'."
        return "\n".join(hit.as_line() for hit in ordered)
    except ApplicationError as exc:
        return f"Error: {exc.message}"
