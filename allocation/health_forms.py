"""Forms of the health and spares pages; they validate input, ``allocation.health`` acts."""

from __future__ import annotations

from django import forms

from allocation.models import Machine
from allocation.models.benchmarks import (
    BENCHMARK_NAME_VALIDATOR,
    DEFAULT_WINDOW_DAYS,
    MAX_WINDOW_DAYS,
)


class HealthFilterForm(forms.Form):
    """What the health page shows: one benchmark over the last ``window`` days."""

    benchmark = forms.ChoiceField(required=False, choices=())
    window = forms.IntegerField(min_value=1, max_value=MAX_WINDOW_DAYS, required=False,
                                initial=DEFAULT_WINDOW_DAYS, label="Window (days)")
    plane = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)

    def __init__(self, *args, benchmarks: list[str] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].choices = [("", "latest")] + [(b, b) for b in benchmarks]


class DrainForm(forms.Form):
    hostname = forms.CharField(max_length=63, widget=forms.HiddenInput)
    benchmark = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)
    window = forms.IntegerField(min_value=1, max_value=MAX_WINDOW_DAYS, required=False,
                                widget=forms.HiddenInput)


class EstimationForm(forms.Form):
    window_days = forms.IntegerField(min_value=1, max_value=MAX_WINDOW_DAYS,
                                     initial=DEFAULT_WINDOW_DAYS, label="Window (days)")
    benchmark = forms.CharField(max_length=64, required=False,
                                validators=[BENCHMARK_NAME_VALIDATOR],
                                help_text="blank for every benchmark")


class SparesForm(forms.Form):
    """The spare calculator: job size and times, parameters given or from an estimate."""

    n_node = forms.IntegerField(min_value=1, max_value=1_048_576, label="N_node",
                                help_text="nodes the job needs")
    t_cmpt = forms.FloatField(min_value=0, required=False, label="t_cmpt (s)",
                              help_text="time slowed by an abnormal node")
    t_comm = forms.FloatField(min_value=0, required=False, label="t_comm (s)",
                              help_text="time not slowed (default 0)")
    wall_time = forms.FloatField(min_value=0, required=False, label="or wall time (s)")
    compute_fraction = forms.FloatField(required=False, label="compute fraction",
                                        help_text="t_cmpt = fraction x wall time (default 0.5)")
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name", required=False,
                                     help_text="use its latest estimate for what is left blank")
    benchmark = forms.CharField(max_length=64, required=False)
    p_abn = forms.FloatField(required=False, label="p_abn")
    alpha_abn = forms.FloatField(required=False, label="alpha_abn")
    t_bench = forms.FloatField(required=False, label="t_bench (s)")
    per_node = forms.BooleanField(required=False, label="per-node p_abn",
                                  help_text="each free node of the machine gets its own p_abn "
                                            "from its history; names the nodes to use")
