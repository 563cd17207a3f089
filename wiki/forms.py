"""Dashboard forms of the wiki. They parse what the browser sends; the services decide
what is allowed, so a rejected value comes back with the service's message."""

from typing import Any

from django import forms

from memoryhub.engine.search import SearchMode
from teams.models import Visibility
from wiki.models import Kind


def _any(choices: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    return [("", "any"), *choices]


class PageFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=1000,
        label="Search",
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": "Search titles, text and tags"}
        ),
    )
    mode = forms.ChoiceField(
        required=False,
        label="Match",
        choices=[(SearchMode.HYBRID, "a sentence"), (SearchMode.EXACT, "every word")],
    )
    tag = forms.CharField(required=False, max_length=64)
    kind = forms.CharField(
        required=False, max_length=40, widget=forms.Select(choices=_any(Kind.choices))
    )
    project = forms.CharField(required=False, max_length=200)

    def filters(self) -> dict[str, Any]:
        return {name: self.cleaned_data.get(name, "") for name in ("tag", "kind", "project")}


class PageForm(forms.Form):
    """The editor. Length and emptiness are checked by ``wiki_page_upsert``."""

    title = forms.CharField(required=False, strip=False)
    content = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "true", "class": "wiki-source"}),
    )
    tags = forms.CharField(
        required=False,
        help_text="Comma-separated",
        widget=forms.TextInput(attrs={"placeholder": "ops, deploy"}),
    )
    kind = forms.CharField(initial=Kind.NOTE, widget=forms.Select(choices=Kind.choices))
    project = forms.CharField(
        required=False, max_length=200, help_text="Empty for an organisation page"
    )
    visibility = forms.CharField(
        required=False, widget=forms.Select(choices=[("", "your default"), *Visibility.choices])
    )

    def upsert_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "title": data["title"],
            "content": data["content"],
            "tags": [t for t in data["tags"].split(",") if t.strip()],
            "kind": data["kind"],
            "project": data["project"],
            "visibility": data["visibility"] or None,
        }
