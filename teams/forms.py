from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group

from teams.models import AgentToken, Role, Scope, Visibility
from teams.selectors import agent_token_list_active


class TeamForm(forms.Form):
    name = forms.CharField(max_length=150)


class MemberAddForm(forms.Form):
    user = forms.ModelChoiceField(queryset=get_user_model().objects.none())
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)

    def __init__(self, *args: object, team: Group, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        from teams.selectors import user_list_not_in

        self.fields["user"].queryset = user_list_not_in(team=team)


class UserInviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    team = forms.ModelChoiceField(
        queryset=Group.objects.order_by("name"), required=False, empty_label="(no team)"
    )
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


def tool_choices() -> list[tuple[str, str]]:
    from memoryhub.engine.toolkit import tool_names

    return [(name, name) for name in tool_names()]


class AgentTokenForm(forms.Form):
    name = forms.CharField(max_length=100)
    team = forms.TypedChoiceField(
        label="Team rows of",
        required=False,
        coerce=int,
        empty_value=None,
        help_text="left blank: your active team at each call, or every team of yours when none is",
    )
    fleet = forms.CharField(max_length=100, required=False)
    role = forms.CharField(max_length=100, required=False)
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices,
        initial=[Scope.READ, Scope.WRITE],
        widget=forms.CheckboxSelectMultiple,
    )
    tools = forms.MultipleChoiceField(
        choices=tool_choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None checked: every tool its scopes allow.",
    )

    chat_url = forms.CharField(
        label="Chat model URL",
        max_length=200,
        required=False,
        help_text="Blank: the chat model of Settings → Memory.",
        widget=forms.TextInput(attrs={"placeholder": "http://127.0.0.1:11434/v1"}),
    )
    chat_model = forms.CharField(label="Model", max_length=200, required=False)
    chat_api_key = forms.CharField(
        label="API key",
        max_length=500,
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Kept on the server, never shown again.",
    )

    def __init__(self, *args: Any, user: AbstractBaseUser | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        teams = Group.objects.filter(memberships__user=user).order_by("name") if user else []
        self.fields["team"].choices = [("", "My active team")] + [(t.pk, t.name) for t in teams]

    def clean_tools(self) -> list[str] | None:
        return self.cleaned_data["tools"] or None


class AgentTokenToolsForm(forms.Form):
    tools = forms.MultipleChoiceField(
        choices=tool_choices, required=False, widget=forms.CheckboxSelectMultiple
    )

    def clean_tools(self) -> list[str] | None:
        return self.cleaned_data["tools"] or None


class MemorySettingsForm(forms.Form):
    active_team = forms.ModelChoiceField(
        queryset=Group.objects.none(), required=False, empty_label="(none)"
    )
    default_visibility = forms.ChoiceField(choices=Visibility.choices)

    def __init__(self, *args: object, user: AbstractBaseUser, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["active_team"].queryset = Group.objects.filter(memberships__user=user).order_by(
            "name"
        )


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False)
    action = forms.CharField(required=False)
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


class ChatPreviewForm(forms.Form):
    """A conversation to preview: the system message a token's agent would send with it
    through the OpenAI-compatible endpoint, as the chat model would receive it."""

    token = forms.ModelChoiceField(
        queryset=AgentToken.objects.none(), label="As the agent of", empty_label=None
    )
    system = forms.CharField(
        label="System message",
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "You are a helpful assistant."}),
    )
    message = forms.CharField(
        label="User message",
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "What the user says next"}),
    )
    project = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "preview-%s")
        super().__init__(*args, **kwargs)
        self.fields["token"].queryset = agent_token_list_active(user=user)
