"""Dashboard forms of the fact store. They parse what the browser sends; the services
decide what is allowed, so a rejected value comes back with the service's message."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator

from facts.models import Category, Layer, Source, Status
from facts.ranking import RecallTuning
from facts.selectors import SORTS, STATUS_ALL
from facts.services.config import SECRET_FIELDS
from memoryhub.engine.cleaning import MAX_TAG_LENGTH
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.search import SearchMode
from memoryhub.engine.unicode import UNSTORABLE
from teams.models import Visibility


def _any(choices: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    return [("", "any"), *choices]


def _refuse_lone_surrogates(form: forms.Form) -> None:
    """Text no index or database can encode: a message, not a server error."""
    for name, value in form.cleaned_data.items():
        if isinstance(value, str) and UNSTORABLE.search(value):
            form.add_error(name, "This is not storable text (a lone surrogate or a NUL character).")


class FactFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=1000,
        label="Search",
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": "A question, or words of the content"}
        ),
    )
    mode = forms.ChoiceField(
        required=False,
        label="Match",
        choices=[(SearchMode.HYBRID, "a sentence"), (SearchMode.EXACT, "every word")],
    )
    category = forms.ChoiceField(required=False, choices=_any(Category.choices))
    layer = forms.TypedChoiceField(
        required=False, choices=_any(Layer.choices), coerce=int, empty_value=""
    )
    visibility = forms.ChoiceField(required=False, choices=_any(Visibility.choices))
    # No choice (as in a link without it) means active, listed first to show so.
    status = forms.ChoiceField(
        required=False, choices=[*Status.choices, (STATUS_ALL, "any status")]
    )
    source = forms.ChoiceField(required=False, choices=_any(Source.choices))
    tag = forms.CharField(required=False, max_length=MAX_TAG_LENGTH)
    created_from = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    created_to = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )
    project = forms.CharField(required=False, max_length=200)
    team = forms.ChoiceField(required=False, choices=[("", "any")])
    sort = forms.ChoiceField(required=False, choices=[(s, s) for s in SORTS])

    FILTER_NAMES = (
        "category",
        "layer",
        "visibility",
        "team",
        "status",
        "source",
        "tag",
        "created_from",
        "created_to",
        "project",
    )

    def __init__(self, *args: Any, teams: list[tuple[int, str]] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The teams of the person: a person reads the team rows of every team of theirs.
        self.fields["team"].choices = [("", "any"), *((str(pk), name) for pk, name in teams)]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        _refuse_lone_surrogates(self)
        start, end = cleaned.get("created_from"), cleaned.get("created_to")
        if start and end and start > end:
            self.add_error("created_to", "The end of the date range comes before its start.")
        return cleaned

    def filters(self) -> dict[str, Any]:
        """The selector filters chosen (empty ones included; the selector skips them)."""
        return {name: self.cleaned_data.get(name) or "" for name in self.FILTER_NAMES}


class FactEditForm(forms.Form):
    """The inline edit of a fact. Ranges and choices are checked by ``fact_update``."""

    content = forms.CharField(strip=False, required=False, widget=forms.Textarea(attrs={"rows": 2}))
    category = forms.CharField(widget=forms.Select(choices=Category.choices))
    importance = forms.FloatField(
        widget=forms.NumberInput(attrs={"step": "0.05", "min": "0", "max": "1"})
    )
    visibility = forms.CharField(widget=forms.Select(choices=Visibility.choices))

    def changes(self, current: Any) -> dict[str, Any]:
        """Only the fields that differ from ``current``, so an untouched field is never
        re-validated against rules that changed since it was written."""
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if getattr(current, name) != value
        }


class FactCreateForm(forms.Form):
    """A fact written from the Memory manager through ``fact_create``, as an agent's
    POST /api/memories is. The service checks content, ranges, team and visibility."""

    content = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "What your agents should remember"}),
    )
    category = forms.ChoiceField(choices=Category.choices, initial=Category.FACT)
    importance = forms.FloatField(
        initial=0.5, widget=forms.NumberInput(attrs={"step": "0.05", "min": "0", "max": "1"})
    )
    tags = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Comma-separated",
        widget=forms.TextInput(attrs={"placeholder": "billing, owners"}),
    )
    visibility = forms.ChoiceField(
        required=False, choices=[("", "your default"), *Visibility.choices]
    )
    team = forms.CharField(required=False, widget=forms.Select())
    project = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, teams: list[tuple[int, str]] = (), **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "add-%s")
        super().__init__(*args, **kwargs)
        self.fields["team"].widget.choices = [("", "your active team"), *teams]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        _refuse_lone_surrogates(self)
        return cleaned

    def fact_data(self) -> dict[str, Any]:
        """The fields as ``fact_create`` takes them."""
        data = self.cleaned_data
        return {
            "content": data["content"],
            "category": data["category"],
            "importance": data["importance"],
            "tags": data["tags"].split(","),
            "visibility": data["visibility"] or None,
            "team": data["team"] or None,
            "project": data["project"],
        }


class FactIdsField(forms.Field):
    """Fact ids ticked in a list (one ``ids`` value per box)."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {"required": "Select at least one fact."}

    def to_python(self, value: Any) -> list[int]:
        if not value:
            return []
        values = value if isinstance(value, list | tuple) else [value]
        ids = []
        for item in values:
            text = str(item)
            if not (text.isascii() and text.isdigit() and len(text) < 19):
                raise ValidationError(f"Not a fact id: {text[:20]!r}.")
            ids.append(int(text))
        return ids


class BulkForm(forms.Form):
    """A change of the facts ticked in the Memory manager: delete, archive, or set a
    visibility or category (``facts_bulk_change`` checks who may change what)."""

    ids = FactIdsField()
    action = forms.ChoiceField(
        label="With the selected",
        choices=[
            ("", "choose a change"),
            ("delete", "Delete"),
            ("archive", "Archive"),
            ("Set visibility", [(f"visibility:{v}", label) for v, label in Visibility.choices]),
            ("Set category", [(f"category:{v}", label) for v, label in Category.choices]),
        ],
    )

    def change(self) -> tuple[str, str]:
        """(action, value) as ``facts_bulk_change`` takes them."""
        action, _, value = self.cleaned_data["action"].partition(":")
        return action, value


class FactTagsForm(forms.Form):
    """The inline edit of a fact's tags: comma-separated."""

    tags = forms.CharField(required=False, max_length=2000, strip=True)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        _refuse_lone_surrogates(self)
        return cleaned


class RecallForm(forms.Form):
    """A message to test recall with. Ids are prefixed: it shares a page with filters."""

    query = forms.CharField(
        label="Message",
        max_length=4000,
        strip=True,
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": "What the agent is about to answer"}
        ),
    )
    project = forms.CharField(required=False, max_length=200)


# The sections of Settings -> Memory; together they hold every setting.
SETTING_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Memory", ("memory_enabled", "max_content_length", "max_active_facts", "dedupe_similarity")),
    (
        "Embeddings",
        (
            "embeddings_enabled",
            "embeddings_provider",
            "embeddings_url",
            "embeddings_model",
            "embeddings_api_key",
        ),
    ),
    (
        "Recall",
        (
            "recall_max_items",
            "recall_char_budget",
            "recall_category_budget",
            "rrf_k",
            "weight_importance",
            "weight_recency",
            "weight_access",
            "recency_half_life_days",
            "recall_tuning",
        ),
    ),
    (
        "Distillation and chat model",
        (
            "distillation_enabled",
            "distillation_every_hours",
            "distillation_min_facts",
            "extraction_review_required",
            "llm_url",
            "llm_model",
            "llm_api_key",
        ),
    ),
    ("Features", ("codegraph_enabled", "wiki_enabled")),
)

# (min, max) of the numeric settings; None = unbounded. The recall bounds match what
# the recall service accepts, so a saved setting can never make every recall fail.
SETTING_RANGES: dict[str, tuple[float | None, float | None]] = {
    "recall_max_items": (1, 100),
    "recall_char_budget": (1, 100_000),
    "rrf_k": (1, None),
    "weight_importance": (0, None),
    "weight_recency": (0, None),
    "weight_access": (0, None),
    "recency_half_life_days": (0.1, None),
    "max_content_length": (1, None),
    "max_active_facts": (0, None),
    "dedupe_similarity": (0.8, 1),
    "distillation_every_hours": (1, None),
    "distillation_min_facts": (2, None),
}


class MemoryConfigForm(forms.ModelForm):
    """Every instance memory setting. Keys are write-only: never rendered back, and an
    empty key field keeps the stored key."""

    class Meta:
        model = MemoryConfig
        fields = [name for _, names in SETTING_GROUPS for name in names]
        widgets = {
            "embeddings_api_key": forms.PasswordInput(
                render_value=False, attrs={"autocomplete": "new-password"}
            ),
            "llm_api_key": forms.PasswordInput(
                render_value=False, attrs={"autocomplete": "new-password"}
            ),
            "embeddings_url": forms.URLInput(),
            "llm_url": forms.URLInput(attrs={"placeholder": "http://127.0.0.1:11434/v1"}),
            "recall_category_budget": forms.Textarea(attrs={"rows": 2}),
            "recall_tuning": forms.Textarea(attrs={"rows": 2}),
        }
        labels = {
            "max_content_length": "Max content length (characters)",
            "dedupe_similarity": "Merge similarity",
            "embeddings_url": "Embeddings URL",
            "embeddings_api_key": "Embeddings API key",
            "recall_char_budget": "Recall character budget",
            "recall_category_budget": "Per-category budget",
            "rrf_k": "RRF k",
            "recall_tuning": "Ranking stages",
            "weight_importance": "Importance weight",
            "weight_recency": "Recency weight",
            "weight_access": "Access weight",
            "recency_half_life_days": "Recency half-life (days)",
            "distillation_every_hours": "Distill every (hours)",
            "distillation_min_facts": "Distill a scope from (new facts)",
            "extraction_review_required": "Extracted facts wait for review",
            "llm_url": "Chat model URL",
            "llm_model": "Chat model",
            "llm_api_key": "Chat model API key",
            "codegraph_enabled": "CodeGraph",
            "wiki_enabled": "Wiki",
        }
        help_texts = {
            "codegraph_enabled": "Off: its tools leave the tool list and MCP, its API "
            "answers 404 and its pages say it is switched off. Indexes are kept.",
            "wiki_enabled": "Off: its tools leave the tool list and MCP, its API answers 404 "
            "and its pages say it is switched off. Pages are kept.",
            "recall_category_budget": 'JSON, e.g. {"preference": 2}: at most that many '
            "items of a category per recall.",
            "dedupe_similarity": (
                "0.8 to 1: the share of words two facts of one scope must have in common "
                "to merge (1 = the same words)."
            ),
            "rrf_k": "Reciprocal Rank Fusion constant (60 is the usual choice).",
            "recall_tuning": (
                'JSON overrides of the ranking stages, e.g. {"weight_time": 0.2}; {} keeps '
                "the measured defaults: "
                + ", ".join(f"{k} {v}" for k, v in RecallTuning().as_dict().items())
                + "."
            ),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, (low, high) in SETTING_RANGES.items():
            field = self.fields[name]
            if low is not None:
                field.validators.append(MinValueValidator(low))
                field.widget.attrs["min"] = low
            if high is not None:
                field.validators.append(MaxValueValidator(high))
                field.widget.attrs["max"] = high
        for name in SECRET_FIELDS:
            self.fields[name].required = False
            stored = bool(getattr(self.instance, name, ""))
            self.fields[name].help_text = (
                "A key is stored; leave empty to keep it." if stored else "No key stored."
            )

    def groups(self) -> list[dict[str, Any]]:
        """The fields in titled sections, as the page shows them."""
        return [
            {"title": title, "fields": [self[name] for name in names]}
            for title, names in SETTING_GROUPS
        ]

    def clean_recall_tuning(self) -> dict[str, Any]:
        try:
            return RecallTuning.clean(self.cleaned_data.get("recall_tuning") or {})
        except InvalidInput as exc:
            raise ValidationError(exc.message) from None

    def clean_recall_category_budget(self) -> dict[str, int]:
        budget = self.cleaned_data.get("recall_category_budget") or {}
        if not isinstance(budget, dict):
            raise ValidationError('Give an object such as {"preference": 2}.')
        unknown = sorted(set(budget) - set(Category.values))
        if unknown:
            raise ValidationError(f"Unknown category {', '.join(unknown)}.")
        for category, limit in budget.items():
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                raise ValidationError(f"The budget of {category} must be a whole number >= 0.")
        return budget

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("llm_url") and not (cleaned.get("llm_model") or "").strip():
            self.add_error(
                "llm_model",
                "Name the model the chat model URL serves (for example gpt-4o-mini or "
                "llama3.1:8b).",
            )
        return cleaned
