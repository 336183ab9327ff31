"""Forms for the pages; they validate input, services do the writing."""

from __future__ import annotations

from django import forms

from allocation.jobs import ONLINE_POLICIES
from allocation.models import CommPattern, JobStatus, Machine, NodeState
from hxportal import hostlists


class NodeStateForm(forms.Form):
    hostlist = forms.CharField(max_length=hostlists.MAX_HOSTLIST_CHARS,
                               widget=forms.TextInput(attrs={"placeholder": "hx[001-008]"}))
    state = forms.ChoiceField(choices=NodeState.choices)
    reason = forms.CharField(max_length=255, required=False)


class MachineForm(forms.Form):
    name = forms.CharField(max_length=64)
    sides = forms.CharField(max_length=64, help_text="e.g. 8,8 or 16,16,16")
    concentration = forms.IntegerField(min_value=1, max_value=4096)
    hostname_pattern = forms.CharField(max_length=128, required=False,
                                       help_text="e.g. hx{n:03d}; blank for NAME{n}")
    hostlist = forms.CharField(max_length=hostlists.MAX_HOSTLIST_CHARS, required=False,
                               help_text="or a Slurm hostlist, e.g. hx[001-512]")
    description = forms.CharField(max_length=255, required=False)

    def clean_sides(self) -> list[int]:
        raw = self.cleaned_data["sides"]
        try:
            return [int(part) for part in raw.replace("x", ",").split(",") if part.strip()]
        except ValueError as exc:
            raise forms.ValidationError("use integers separated by commas, e.g. 8,8") from exc


POLICY_CHOICES = [(p, p.replace("_", " ")) for p in ONLINE_POLICIES]


class JobForm(forms.Form):
    name = forms.CharField(max_length=128)
    external_id = forms.CharField(max_length=64, required=False, label="External id (Slurm)")
    node_count = forms.IntegerField(min_value=1, max_value=1_048_576)
    pattern = forms.ChoiceField(choices=CommPattern.choices, initial=CommPattern.UNKNOWN)
    policy = forms.ChoiceField(choices=POLICY_CHOICES, initial="diagonal")
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, initial=0)
    t_cmpt = forms.FloatField(min_value=0.000001, required=False, label="Compute time (s)")
    t_comm = forms.FloatField(min_value=0, required=False, label="Communication time (s)")
    wall_time = forms.FloatField(min_value=0.000001, required=False, label="Wall time (s)")


class CompareForm(forms.Form):
    size = forms.IntegerField(min_value=1, max_value=1_048_576, label="Job size (nodes)")
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, initial=0, required=False)

    def clean_seed(self) -> int:
        return self.cleaned_data.get("seed") or 0


class ReleaseForm(forms.Form):
    status = forms.ChoiceField(choices=[(s, s) for s in sorted(JobStatus.terminal())],
                               initial=JobStatus.COMPLETED)


class RecommendationForm(forms.Form):
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name")
    name = forms.CharField(max_length=128, initial="job")
    external_id = forms.CharField(max_length=64, required=False, label="External id (Slurm)")
    node_count = forms.IntegerField(min_value=1, max_value=1_048_576, initial=64)
    pattern = forms.ChoiceField(choices=CommPattern.choices, initial=CommPattern.ALL_TO_ALL)
    t_cmpt = forms.FloatField(min_value=0.000001, required=False, label="Compute time (s)")
    t_comm = forms.FloatField(min_value=0, required=False,
                              label="Communication time (s, under the default policy)")
    wall_time = forms.FloatField(min_value=0.000001, required=False,
                                 label="or wall time (s)")
    compute_fraction = forms.FloatField(min_value=0.000001, max_value=1, required=False,
                                        label="compute fraction of the wall time")
    p_abn = forms.FloatField(min_value=0, max_value=1, required=False,
                             label="p_abn (blank: latest estimate)")
    alpha_abn = forms.FloatField(min_value=1.000001, required=False, label="alpha_abn")
    t_bench = forms.FloatField(min_value=0.000001, required=False, label="t_bench (s)")
    simulate = forms.BooleanField(required=False, initial=True,
                                  label="Simulate every policy (else analytic only)")
