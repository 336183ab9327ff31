"""Forms of the health and spares pages; they validate input, ``health.services`` acts."""

from __future__ import annotations

from django import forms

from allocation.forms import BoundedFloatField, preselect_only_machine
from allocation.models import Machine
from health.constants import DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS
from health.models import BENCHMARK_NAME_VALIDATOR
from health.services import MAX_N_NODE

WINDOW_ERRORS = {"min_value": f"Must be between 1 and {MAX_WINDOW_DAYS} days.",
                 "max_value": f"Must be between 1 and {MAX_WINDOW_DAYS} days."}


class HealthFilterForm(forms.Form):
    """What the health page shows: one benchmark over the last ``window`` days."""

    benchmark = forms.ChoiceField(required=False, choices=())
    window = forms.IntegerField(min_value=1, max_value=MAX_WINDOW_DAYS, required=False,
                                initial=DEFAULT_WINDOW_DAYS, label="Window (days)",
                                error_messages=WINDOW_ERRORS)
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
                                     initial=DEFAULT_WINDOW_DAYS, label="Window (days)",
                                     error_messages=WINDOW_ERRORS)
    benchmark = forms.CharField(max_length=64, required=False,
                                validators=[BENCHMARK_NAME_VALIDATOR],
                                help_text="blank for every benchmark")


class SparesForm(forms.Form):
    """The spare calculator: job size and times, parameters given or from an estimate."""

    n_node = forms.IntegerField(min_value=1, max_value=MAX_N_NODE, label="N_node",
                                help_text="nodes the job needs")
    t_cmpt = BoundedFloatField(min_value=0.0, required=False, label="t_cmpt (s)", unit="s",
                               help_text="time slowed by an abnormal node")
    t_comm = BoundedFloatField(min_value=0.0, required=False, label="t_comm (s)", unit="s",
                               help_text="time not slowed (default 0)")
    wall_time = BoundedFloatField(above=0.0, required=False, label="or wall time (s)",
                                  unit="s")
    compute_fraction = BoundedFloatField(above=0.0, max_value=1.0, required=False,
                                         label="compute fraction",
                                         help_text="t_cmpt = fraction x wall time "
                                                   "(default 0.5)")
    machine = forms.ModelChoiceField(queryset=Machine.objects.order_by("name"),
                                     to_field_name="name", required=False,
                                     empty_label="(none: give p_abn, alpha_abn, t_bench)",
                                     help_text="use its latest estimate for what is left blank")
    benchmark = forms.CharField(max_length=64, required=False)
    p_abn = BoundedFloatField(min_value=0.0, max_value=1.0, required=False, label="p_abn",
                              why="a probability")
    alpha_abn = BoundedFloatField(above=1.0, required=False, label="alpha_abn",
                                  why="an abnormal node is slower than a normal one")
    t_bench = BoundedFloatField(above=0.0, required=False, label="t_bench (s)", unit="s")
    per_node = forms.BooleanField(required=False, label="per-node p_abn",
                                  help_text="each free node of the machine gets its own p_abn "
                                            "from its history; names the nodes to use")
    hold_spares = forms.BooleanField(
        required=False, label="spares held for the whole job",
        help_text="tick when dropped spares stay with the job to its end; otherwise the "
                  "site's setting applies (HX_SPARES_RELEASED: back to Slurm after the "
                  "benchmark, costing only its time)")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        preselect_only_machine(self)


class BenchmarkUploadForm(forms.Form):
    """Benchmark times as a CSV file, or pasted CSV or JSON (the API's two formats)."""

    file = forms.FileField(required=False, label="CSV file",
                           help_text="Header job,benchmark,node,seconds[,measured_at] "
                                     "(machine instead of job: a health round); any number "
                                     "of jobs and benchmarks.")
    text = forms.CharField(
        required=False, label="Or paste CSV or JSON",
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false",
                                     "placeholder": "job,benchmark,node,seconds\n"
                                                    "42,stream,hx001,1.02"}),
        help_text='JSON: {"job": 42, "benchmark": "stream", "results": '
                  '[{"node": "hx001", "seconds": 1.02}]}. Re-uploading a job\'s '
                  "benchmark replaces it.")

    def clean(self):
        data = super().clean()
        if not data.get("file") and not (data.get("text") or "").strip():
            raise forms.ValidationError("Choose a CSV file or paste CSV or JSON.")
        if data.get("file") and (data.get("text") or "").strip():
            raise forms.ValidationError("Give a file or pasted text, not both.")
        return data


class SelectFastestForm(forms.Form):
    """Keep the N fastest nodes of a job after its benchmark."""

    benchmark = forms.ChoiceField(choices=())
    n_node = forms.IntegerField(min_value=1, label="Nodes to keep",
                                help_text="The job's node count by default; the rest are "
                                          "dropped.")
    abnormal_threshold = BoundedFloatField(
        required=False, min_value=1.0, unit="× the median",
        label="Abnormal above (× the median)",
        help_text="Blank: the portal's rule. Nodes slower than this are flagged abnormal.")

    def __init__(self, *args, benchmarks: list[str] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].choices = [(b, b) for b in benchmarks]


class RecordSelectionForm(SelectFastestForm):
    """Recording a previewed selection: the preview's choice travels with it and is
    recorded only if it still holds; keeping fewer nodes than the job needs takes the
    operator's explicit say-so."""

    keep = forms.CharField(required=False, widget=forms.HiddenInput, max_length=100_000)
    dropped = forms.CharField(required=False, widget=forms.HiddenInput, max_length=100_000)
    allow_fewer = forms.BooleanField(
        required=False, label="Record it although the job keeps fewer nodes than it needs")
