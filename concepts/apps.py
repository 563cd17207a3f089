from django.apps import AppConfig


class ConceptsConfig(AppConfig):
    name = "concepts"
    verbose_name = "Knowledge graph"
