import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_near_duplicate_keys_are_rebuilt_for_facts_stored_before_them(owner):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from facts.dedupe import KEY_FIELDS, stored_keys, stored_signature
    from facts.models import Fact, FactKey

    before = [("facts", "0003_vector_raw_table")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_fact = executor.loader.project_state(before).apps.get_model("facts", "Fact")
    stored = old_fact.objects.create(
        owner_id=owner.pk, content="The VPN gateway is vpn2", tags=["net"]
    )
    # Keys of an earlier layout: the latest re-keying replaces them.
    keyed = [("facts", "0006_subject_keys_without_tag_words")]
    executor = MigrationExecutor(connection)
    executor.migrate(keyed)
    old_key = executor.loader.project_state(keyed).apps.get_model("facts", "FactKey")
    old_key.objects.create(fact_id=stored.pk, key=12345)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    fact = Fact.objects.get()
    row = Fact.objects.values_list(*KEY_FIELDS).get()
    assert set(FactKey.objects.filter(fact=fact).values_list("key", flat=True)) == set(
        stored_keys(stored_signature(row))
    )
