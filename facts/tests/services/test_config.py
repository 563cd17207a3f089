"""Settings -> Memory: only staff change the instance settings."""

import pytest

from facts.services.config import memory_config_update
from memoryhub.engine.errors import Forbidden
from teams.services import Actor

pytestmark = pytest.mark.django_db


def test_only_staff_change_instance_settings(owner):
    with pytest.raises(Forbidden):
        memory_config_update(actor=Actor(user=owner), changes={"recall_max_items": 3})
