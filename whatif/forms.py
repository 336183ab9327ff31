"""Forms of the what-if pages; they shape input, the service validates and writes."""

from __future__ import annotations

from django import forms

from allocation.models import Machine
from whatif import constants
from whatif.choices import WorkloadFormat
from whatif.services import POLICIES as ONLINE_POLICIES


class StudyForm(forms.Form):
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name")
    format = forms.ChoiceField(choices=WorkloadFormat.choices, initial=WorkloadFormat.SWF)
    workload = forms.FileField(required=False,
                               help_text="The log, for the swf and sacct formats.")
    policies = forms.MultipleChoiceField(choices=[(p, p) for p in ONLINE_POLICIES],
                                         initial=list(ONLINE_POLICIES),
                                         widget=forms.CheckboxSelectMultiple)
    spares = forms.CharField(initial="none, 2, recommended", max_length=128,
                             help_text="Spare rules separated by commas: none, a whole "
                                       "number N, recommended.")
    seeds = forms.IntegerField(initial=2, min_value=1, max_value=constants.MAX_SEEDS)
    held = forms.BooleanField(required=False, help_text="Dropped spares stay to the job's "
                                                        "end (default: released).")
    ideal = forms.BooleanField(required=False, help_text="Every adjustment off.")
    name = forms.CharField(required=False, max_length=128)

    def spare_rules(self) -> list[str]:
        return [s.strip() for s in self.cleaned_data["spares"].split(",") if s.strip()]


class DemoForm(forms.Form):
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name")
    format = forms.ChoiceField(choices=[(WorkloadFormat.SYNTHETIC, "synthetic month"),
                                        (WorkloadFormat.HISTORY, "synced history")],
                               initial=WorkloadFormat.SYNTHETIC)
