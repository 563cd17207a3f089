from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.engine.errors import ApplicationError
from teams.services import Actor, agent_token_create


class Command(BaseCommand):
    help = "Create an agent token for a user and print its secret (shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="Username that owns the token.")
        parser.add_argument("--name", required=True, help="A name to tell the token apart.")
        parser.add_argument("--fleet", default="", help="Agent fleet the token belongs to.")
        parser.add_argument("--role", default="", help="Agent role, free text.")
        parser.add_argument(
            "--team",
            default=None,
            help="The one team of the user's whose team rows it reads (default: the "
            "user's active team at each call).",
        )
        parser.add_argument(
            "--scopes",
            default="read,write",
            help="Comma-separated scopes: read, write (default both).",
        )
        parser.add_argument(
            "--tools",
            default="",
            help="Comma-separated tools it may call (default: every tool its scopes allow).",
        )

    def handle(self, *args: object, **options: str) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["user"]})
        except User.DoesNotExist:
            raise CommandError(f"No user named '{options['user']}'.") from None
        try:
            token, secret = agent_token_create(
                actor=Actor(user=user),
                name=options["name"],
                fleet=options["fleet"],
                role=options["role"],
                team=options["team"],
                scopes=options["scopes"],
                tools=[t.strip() for t in options["tools"].split(",") if t.strip()] or None,
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        self.stderr.write(
            f"Created token '{token.name}' for {user.get_username()} "
            f"(scopes: {', '.join(token.scopes)}). The secret is shown only once:"
        )
        self.stdout.write(secret)
