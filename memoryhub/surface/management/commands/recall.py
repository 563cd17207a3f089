"""Tiered recall from the command line, as a person or as an agent token's user."""

import json
import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.engine.errors import ApplicationError
from memoryhub.surface.recall import DEFAULT_LIMIT, TIERS, tiered_recall
from teams.services import Actor, TokenRejected, agent_token_authenticate


class Command(BaseCommand):
    help = (
        "Tiered recall: 'recall project --candidate CAND-1 --include pdd,adr', "
        "'recall org --query \"...\" --limit 5', 'recall skill --skill NAME --since 7d', "
        "'recall --role diagnostician'."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tier", nargs="?", choices=TIERS)
        parser.add_argument(
            "--role",
            help="Read what this role's preset reads (with --token: the token's own role, "
            "read by default when no tier is named)",
        )
        parser.add_argument("--fingerprint", help="Skill tier: this cluster (* for any)")
        parser.add_argument("--candidate", "--project", dest="project", help="The project")
        parser.add_argument("--include", default="", help="Page kinds, comma-separated")
        parser.add_argument("--query", default="")
        parser.add_argument("--skill")
        parser.add_argument("--since", help="Learnings this recent: 7d, 12h, 2w")
        parser.add_argument("--fleet", help="Whose learnings (default: the token's fleet)")
        parser.add_argument("--cross", action="store_true", help="Read other fleets too")
        parser.add_argument("--justification", default="", help="Why (for --cross; audited)")
        parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
        parser.add_argument("--json", action="store_true", help="Answer JSON")
        parser.add_argument("--user", help="Read as this person")
        parser.add_argument(
            "--token",
            default=os.environ.get("MEMORYHUB_TOKEN", ""),
            help="Or as an agent token's user (default: $MEMORYHUB_TOKEN)",
        )

    def _actor(self, options: dict) -> Actor:
        if options["user"]:
            users = get_user_model().objects
            user = users.filter(**{users.model.USERNAME_FIELD: options["user"]}).first()
            if user is None or not user.is_active:
                raise CommandError(f"No active user named '{options['user']}'.")
            return Actor(user=user)
        if options["token"]:
            try:
                token = agent_token_authenticate(secret=options["token"])
            except TokenRejected as exc:
                raise CommandError(str(exc)) from None
            return Actor(user=token.user, token=token)
        raise CommandError("Say as whom: --user NAME, or --token (or MEMORYHUB_TOKEN).")

    def handle(self, *args: object, **options: object) -> None:
        actor = self._actor(options)
        try:
            items = tiered_recall(
                actor=actor,
                tier=options["tier"],
                query=str(options["query"]),
                fleet=options["fleet"],
                limit=int(options["limit"]),
                scope="cross" if options["cross"] else "own",
                justification=str(options["justification"]),
                project=options["project"],
                kinds=[k.strip() for k in str(options["include"]).split(",") if k.strip()],
                skill=options["skill"],
                since=options["since"],
                fingerprint=options["fingerprint"],
                role=options["role"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        if options["json"]:
            self.stdout.write(json.dumps(items, indent=2, ensure_ascii=False))
            return
        if not items:
            self.stdout.write("Nothing found.")
        for item in items:
            self.stdout.write(f"{item['score']:.3f}  {item['path']}  ({item['ts'][:10]})")
            self.stdout.write(f"       {item['snippet']}")
