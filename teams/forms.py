from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group

from teams.models import Role, Scope, Visibility


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
