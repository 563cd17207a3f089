"""Serve the agent tools over MCP on stdin / stdout, as the user of an agent token."""

import logging
import os
import sys

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from memoryhub.surface.mcp_server import ActorGone, mcp_server
from teams.services import Actor, TokenRejected, agent_token_authenticate


def _actor(secret: str) -> Actor:
    """The token's actor now: a token revoked since the last request stops here."""
    try:
        token = agent_token_authenticate(secret=secret)
    except TokenRejected as exc:
        raise ActorGone(str(exc)) from None
    return Actor(user=token.user, token=token)


class Command(BaseCommand):
    help = (
        "Serve MemoryHub's agent tools over MCP on stdin/stdout, as the user of the agent "
        "token given with --token or in MEMORYHUB_TOKEN."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--token",
            default=os.environ.get("MEMORYHUB_TOKEN", ""),
            help="An agent token (default: $MEMORYHUB_TOKEN); create one under Agents.",
        )

    def handle(self, *args: object, **options: object) -> None:
        secret = str(options["token"] or "").strip()
        if not secret:
            raise CommandError("Give an agent token: --token <secret> or MEMORYHUB_TOKEN.")
        try:
            _actor(secret)
        except ActorGone as exc:
            raise CommandError(str(exc)) from None
        # Standard output carries the protocol: every log line goes to standard error.
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
                handler.setStream(sys.stderr)
        server = mcp_server(actor_of=lambda: _actor(secret), transport="mcp-stdio")

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
