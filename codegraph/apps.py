from django.apps import AppConfig


class CodegraphConfig(AppConfig):
    name = "codegraph"
    verbose_name = "CodeGraph"
