import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_facts_stored_before_near_duplicate_keys_are_keyed_by_the_first_write(owner):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from facts.dedupe import KEY_FIELDS, stored_keys, stored_signature
    from facts.models import Fact, FactKey
    from facts.services import fact_create
    from teams.services import Actor

    before = [("facts", "0003_vector_raw_table")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_fact = executor.loader.project_state(before).apps.get_model("facts", "Fact")
    stored = old_fact.objects.create(
        owner_id=owner.pk, content="The VPN gateway is vpn2 in Frankfurt", tags=["net"]
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert not FactKey.objects.exists()

    result = fact_create(
        actor=Actor(user=owner), data={"content": "the VPN gateway is vpn2 in Frankfurt!"}
    )
    assert (result.created, result.fact.pk) == (False, stored.pk)
    row = Fact.objects.values_list(*KEY_FIELDS).get(pk=stored.pk)
    assert set(FactKey.objects.filter(fact_id=stored.pk).values_list("key", flat=True)) == set(
        stored_keys(stored_signature(row))
    )
