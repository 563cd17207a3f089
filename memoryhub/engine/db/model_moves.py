"""What a migration that moves a model from one app to another needs beside the state
change and the table rename."""

from typing import Any

from django.db import migrations


def content_types_moved(moves: list[tuple[str, str, str]]) -> migrations.RunPython:
    """Permissions hang on content types: the moved models keep theirs (and every grant
    made on them) under the new app label. ``moves``: (old label, new label, model)."""

    def forwards(apps: Any, schema_editor: Any, *, backwards: bool = False) -> None:
        ContentType = apps.get_model("contenttypes", "ContentType")
        for old, new, model in moves:
            old, new = (new, old) if backwards else (old, new)
            if not ContentType.objects.filter(app_label=new, model=model).exists():
                ContentType.objects.filter(app_label=old, model=model).update(app_label=new)

    def backwards(apps: Any, schema_editor: Any) -> None:
        forwards(apps, schema_editor, backwards=True)

    return migrations.RunPython(forwards, backwards)
