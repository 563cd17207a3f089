from django import forms

from teams.models import Visibility


class FolderForm(forms.Form):
    name = forms.CharField(max_length=200)
    path = forms.CharField(
        max_length=1024,
        label="Folder",
        widget=forms.TextInput(attrs={"placeholder": "/home/me/src/app"}),
    )
    visibility = forms.ChoiceField(
        choices=[("", "Your default"), *Visibility.choices], required=False
    )
