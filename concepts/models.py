"""The concept graph: entities, the facts that mention them, and the triples the facts
state about them.

Nothing here carries a visibility of its own: every mention and triple names the fact
it was extracted from, and a user sees a mention or triple only through a fact they
may read (``concepts.selectors``). So a private fact never makes a node or an edge
visible to anyone else, and the counts, weights, names and types a user sees are
computed from the facts visible to them. Deleting a fact deletes its rows (the foreign
keys cascade); an entity no fact mentions any more is pruned with them.

An entity row is shared by every fact naming it, so its id (numbered as names are first
written) would tell a reader whether a name occurred before in facts they cannot read.
Readers see its ``ref`` instead: a keyed hash of its key, the same whether or not anyone
else names it.
"""

import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.db import models
from django.utils import timezone

from teams.models import Membership, Role, ScopedModel, Visibility

# The entity types of the chat-model schemas (``memoryhub.engine.llm.schemas.EntityType``).
ENTITY_TYPES = ("person", "organisation", "project", "tool", "place", "concept", "other")
NAME_LENGTH = 200
RELATION_LENGTH = 64
REF_LENGTH = 26


class EntityRefKey(models.Model):
    """The secret entity refs are keyed with: random, one per install, kept in the
    database (not derived from SECRET_KEY, whose change would give the names written
    after it other refs than the names written before, and so tell them apart)."""

    secret = models.CharField(max_length=64)

    def __str__(self) -> str:
        return "entity ref key"

    @classmethod
    def current(cls) -> str:
        """The install's key, made on first use (the migration adding refs makes it; a
        flushed database needs it again)."""
        secret = cls.objects.filter(pk=1).values_list("secret", flat=True).first()
        if secret is None:
            # Of two processes making it at once, the first wins and both read its key.
            cls.objects.bulk_create(
                [cls(pk=1, secret=secrets.token_hex(32))], ignore_conflicts=True
            )
            secret = cls.objects.values_list("secret", flat=True).get(pk=1)
        return secret


class Entity(models.Model):
    """A node: one normalised name (``concepts.normalise.entity_key``), named to
    readers by its ``ref`` (``concepts.normalise.entity_ref``), never by its id."""

    key = models.CharField(max_length=NAME_LENGTH, unique=True)
    ref = models.CharField(max_length=REF_LENGTH, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "entities"

    def __str__(self) -> str:
        return f"entity {self.ref}"


class Mention(models.Model):
    """A fact names an entity: as written there, with the type it gives it."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    fact = models.ForeignKey("facts.Fact", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=NAME_LENGTH)
    type = models.CharField(max_length=16, default="other")
    # The key of the name before aliases applied: an alias added or removed later
    # re-points the mentions of this key without extracting again.
    raw_key = models.CharField(max_length=NAME_LENGTH, db_index=True)
    # A word capitalised only by its place in a sentence is a name when its writer writes
    # it as one in another fact every reader of this one may read: that fact, and its
    # version then. The mention is read only while that fact stands as it was (deleted,
    # changed or no longer current, it decides nothing: the catch-up writes the mention
    # again from what stands then).
    evidence = models.ForeignKey(
        "facts.Fact", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    evidence_version = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "fact"], name="mention_entity_fact")
        ]
        indexes = [models.Index(fields=["fact", "entity"], name="mention_fact_entity")]

    def __str__(self) -> str:
        return f"{self.name} in fact {self.fact_id}"


class Triple(models.Model):
    """subject -> relation -> object, as one fact states it. An edge of the graph is
    every triple of one (subject, relation, object); its weight is how many of the
    facts a user can see state it."""

    subject = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    relation = models.CharField(max_length=RELATION_LENGTH, db_index=True)
    object = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    fact = models.ForeignKey("facts.Fact", on_delete=models.CASCADE, related_name="+")
    confidence = models.FloatField(default=0.5)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "relation", "object", "fact"], name="triple_unique_per_fact"
            )
        ]
        indexes = [
            models.Index(fields=["subject", "fact"], name="triple_subject_fact"),
            models.Index(fields=["object", "fact"], name="triple_object_fact"),
            models.Index(fields=["fact"], name="triple_fact"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id} {self.relation} {self.object_id} (fact {self.fact_id})"


class FactExtraction(models.Model):
    """What extraction found in one fact, as the provider answered (names as written),
    and which version of the fact it read: a fact changed since is extracted again."""

    fact = models.OneToOneField(
        "facts.Fact", primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    fact_updated_at = models.DateTimeField()
    provider = models.CharField(max_length=200)
    triples = models.JSONField(default=list)
    extracted_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"extraction of fact {self.fact_id} by {self.provider}"


class Alias(ScopedModel):
    """Another name of an entity ("k8s" for "kubernetes"), merged into it for the facts
    of its own scope: a global alias for every fact, a team alias for that team's team
    facts, a private one for its owner's private facts. So an alias never changes what
    anyone outside its audience sees, and inside it only one its readers trust may be
    made (``may_be_added_by``)."""

    alias_key = models.CharField(max_length=NAME_LENGTH)
    alias_name = models.CharField(max_length=NAME_LENGTH)
    target_key = models.CharField(max_length=NAME_LENGTH)
    target_name = models.CharField(max_length=NAME_LENGTH)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["alias_key", "id"]
        verbose_name_plural = "aliases"
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "visibility", "team", "alias_key"], name="alias_unique_in_scope"
            )
        ]
        indexes = [models.Index(fields=["alias_key"], name="alias_key")]

    def __str__(self) -> str:
        return f"{self.alias_name} -> {self.target_name}"

    def may_be_added_by(self, user: AbstractBaseUser) -> bool:
        """Whether ``user`` may add this alias: an alias rewrites the graph of everyone
        it applies to, so each reader's graph follows only the aliases they chose to
        trust: their own private ones, their teams' made by an admin of the team, and
        global ones made by staff."""
        if self.visibility == Visibility.GLOBAL:
            return bool(user.is_staff)
        if self.visibility == Visibility.TEAM:
            return Membership.objects.filter(
                user_id=user.pk, team_id=self.team_id, role=Role.ADMIN
            ).exists()
        return True
