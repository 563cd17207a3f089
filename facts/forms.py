"""Dashboard forms of the fact store. They parse what the browser sends; the services
decide what is allowed, so a rejected value comes back with the service's message."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator

from facts.models import Category, Layer, MemoryConfig, Status
from facts.selectors import SORTS
from facts.services import SECRET_FIELDS
from teams.models import Visibility


def _any(choices: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    return [("", "any"), *choices]


class FactFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=1000,
        label="Search",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Search content and tags"}),
    )
    category = forms.ChoiceField(required=False, choices=_any(Category.choices))
    layer = forms.TypedChoiceField(
        required=False, choices=_any(Layer.choices), coerce=int, empty_value=""
    )
    visibility = forms.ChoiceField(required=False, choices=_any(Visibility.choices))
    status = forms.ChoiceField(required=False, choices=_any(Status.choices))
    project = forms.CharField(required=False, max_length=200)
    sort = forms.ChoiceField(required=False, choices=[(s, s) for s in SORTS])

    def filters(self) -> dict[str, Any]:
        """The selector filters chosen (empty ones included; the selector skips them)."""
        return {
            name: self.cleaned_data.get(name, "")
            for name in ("category", "layer", "visibility", "status", "project")
        }


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
        }
        labels = {
            "max_content_length": "Max content length (characters)",
            "dedupe_similarity": "Merge similarity",
            "embeddings_url": "Embeddings URL",
            "embeddings_api_key": "Embeddings API key",
            "recall_char_budget": "Recall character budget",
            "recall_category_budget": "Per-category budget",
            "rrf_k": "RRF k",
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
        }
        help_texts = {
            "recall_category_budget": 'JSON, e.g. {"preference": 2}: at most that many '
            "items of a category per recall.",
            "dedupe_similarity": (
                "0.8 to 1: the share of words two facts of one scope must have in common "
                "to merge (1 = the same words)."
            ),
            "rrf_k": "Reciprocal Rank Fusion constant (60 is the usual choice).",
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
