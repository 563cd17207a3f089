import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Create the first admin user if no superuser exists yet. The password comes from "
        "MEMORYHUB_ADMIN_PASSWORD, or is generated and printed once."
    )

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            return
        username = settings.MEMORYHUB_ADMIN_USERNAME
        password = settings.MEMORYHUB_ADMIN_PASSWORD
        generated = not password
        if generated:
            password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        if generated:
            banner = "=" * 64
            self.stdout.write(
                f"{banner}\nCreated admin user '{username}' with password: {password}\n"
                f"It is shown only this once; change it after logging in.\n{banner}"
            )
        else:
            self.stdout.write(
                f"Created admin user '{username}' (password from MEMORYHUB_ADMIN_PASSWORD)."
            )
