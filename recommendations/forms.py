"""The recommendation request form (the page's twin of the API serializer)."""

from __future__ import annotations

from django import forms

from allocation.forms import (
    BoundedFloatField,
    preselect_only_machine,
    seconds_field,
)
from allocation.layout import MAX_NODES
from allocation.models import CommPattern, Machine
from allocation.pattern_fields import PatternFormField


class RecommendationForm(forms.Form):
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name")
    name = forms.CharField(max_length=128, initial="job")
    external_id = forms.CharField(max_length=64, required=False, label="External id (Slurm)")
    node_count = forms.IntegerField(min_value=1, max_value=MAX_NODES, initial=64)
    pattern = PatternFormField(choices=CommPattern.choices, initial=CommPattern.ALL_TO_ALL)
    t_cmpt = seconds_field("Compute time (s)")
    t_comm = seconds_field("Communication time (s, under the default policy)", zero=True)
    wall_time = seconds_field("or wall time (s)")
    compute_fraction = BoundedFloatField(above=0.0, max_value=1.0, required=False,
                                         label="compute fraction of the wall time")
    p_abn = BoundedFloatField(min_value=0.0, max_value=1.0, required=False,
                              label="p_abn (blank: latest estimate)", why="a probability")
    alpha_abn = BoundedFloatField(above=1.0, required=False, label="alpha_abn",
                                  why="an abnormal node is slower than a normal one")
    t_bench = seconds_field("t_bench (s)")
    simulate = forms.BooleanField(required=False, initial=True,
                                  label="Simulate every policy (else analytic only)")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        preselect_only_machine(self)


PATTERN_CHOICES = [(p, label) for p, label in CommPattern.choices if p != CommPattern.UNKNOWN]


class CalibrationStartForm(forms.Form):
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name")
    patterns = forms.MultipleChoiceField(
        choices=PATTERN_CHOICES, required=False, widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every pattern (the all-to-all is calibrated first).")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        preselect_only_machine(self)
