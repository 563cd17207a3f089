from django.apps import AppConfig


class ConceptsConfig(AppConfig):
    name = "concepts"
    verbose_name = "Knowledge graph"

    def ready(self) -> None:
        """The graph follows the fact store: new or changed facts are queued for triple
        extraction, and entities that only deleted facts named go with them."""
        from concepts.services import concept_entities_prune
        from concepts.tasks import concept_facts_extract
        from memoryhub.engine.derived import facts_derived_follow
        from memoryhub.engine.tasks import enqueue_on_commit

        facts_derived_follow(
            written=lambda fact_ids: enqueue_on_commit(concept_facts_extract, fact_ids),
            deleted=concept_entities_prune,
        )
