"""An entity is named to its readers by its ref, a keyed hash of its name: the same
whether or not anyone else's facts name it. Its row id would tell: one row serves every
fact naming the name, numbered as names are first written, so a reader writing a name
that someone's private fact holds would get an older number than for a fresh name."""

import pytest

from concepts.models import Entity, EntityRefKey
from concepts.normalise import entity_ref

pytestmark = pytest.mark.django_db

API = "/api/concept-graph"


def test_an_entity_is_found_by_its_ref_and_never_by_its_row_id(
    owner, owner_client, outsider_client, remember
):
    remember(owner, "Kestrelvault runs on Ossory.", visibility="private")
    entity = Entity.objects.get(key="kestrelvault")
    assert entity.ref == entity_ref("kestrelvault", secret=EntityRefKey.current())

    assert owner_client.get(f"{API}/entities/{entity.ref}").json()["entity"]["mentions"] == 1
    assert owner_client.get(f"/graph/entities/{entity.ref}/").status_code == 200
    for path in (f"{API}/entities/{entity.pk}", f"/graph/entities/{entity.pk}/"):
        answer = owner_client.get(path)
        assert answer.status_code == 404, (path, answer.content)
    detail = owner_client.get(f"{API}/entities/{entity.pk}").json()["detail"]
    assert "ref" in detail
    # Another reader's ref of a name only her private facts hold names nothing.
    assert outsider_client.get(f"{API}/entities/{entity.ref}").status_code == 404
    assert outsider_client.get(f"/graph/entities/{entity.ref}/").status_code == 404
