"""Forms for the pages; they validate input, services do the writing."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from allocation.layout import MAX_CONCENTRATION, MAX_NODES
from allocation.models import CommPattern, JobStatus, NodeState
from allocation.models.machines import NAME_VALIDATOR
from allocation.pattern_fields import PatternFormField
from allocation.services.jobs import BASELINE_POLICY, MAX_SEED, ONLINE_POLICIES
from hxportal import hostlists


def _plain(number: float) -> str:
    """``1e-06`` -> ``0.000001``, ``1.0`` -> ``1``: bounds as people write them."""
    return f"{number:.12f}".rstrip("0").rstrip(".") if number != int(number) else str(int(number))


class BoundedFloatField(forms.FloatField):
    """A float with bounds said in words: "Must be more than 0 s", "between 0 and 1".

    ``above`` is an exclusive lower bound (a time must be more than 0, a slowdown
    more than 1); ``min_value``/``max_value`` are inclusive. Django's own message
    would read "Ensure this value is greater than or equal to 1e-06". The browser
    gets the inclusive ``min``/``max`` only, so the server's message is the one read.
    """

    def __init__(self, *, above: float | None = None, min_value: float | None = None,
                 max_value: float | None = None, unit: str = "", why: str = "",
                 **kwargs) -> None:
        self.above, self.low, self.high = above, min_value, max_value
        self.unit, self.why = unit, why
        super().__init__(**kwargs)

    def bound_text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.above is None and self.low is not None and self.high is not None:
            return f"must be between {_plain(self.low)} and {_plain(self.high)}{unit}"
        parts = []
        if self.above is not None:
            parts.append(f"more than {_plain(self.above)}{unit}")
        elif self.low is not None:
            parts.append(f"at least {_plain(self.low)}{unit}")
        if self.high is not None:
            parts.append(f"at most {_plain(self.high)}{unit}")
        return "must be " + " and ".join(parts)

    def validate(self, value) -> None:
        super().validate(value)
        if value in self.empty_values:
            return
        if ((self.above is not None and value <= self.above)
                or (self.low is not None and value < self.low)
                or (self.high is not None and value > self.high)):
            why = f" ({self.why})" if self.why else ""
            raise ValidationError(f"{self.bound_text().capitalize()}{why}.", code="bounds")

    def widget_attrs(self, widget):
        attrs = super().widget_attrs(widget)
        low = self.above if self.above is not None else self.low
        if low is not None:
            attrs["min"] = _plain(low)
        if self.high is not None:
            attrs["max"] = _plain(self.high)
        return attrs


def seconds_field(label: str, *, zero: bool = False, **kwargs) -> BoundedFloatField:
    """A time in seconds: more than 0 (or at least 0 with ``zero``)."""
    bounds = {"min_value": 0.0} if zero else {"above": 0.0}
    return BoundedFloatField(required=False, label=label, unit="s", **bounds, **kwargs)


def preselect_only_machine(form: forms.Form, name: str = "machine") -> None:
    """An unbound form whose machine select has exactly one machine starts on it
    (instead of "---------")."""
    field = form.fields.get(name)
    if form.is_bound or field is None or form.initial.get(name):
        return
    only = list(field.queryset[:2])
    if len(only) == 1:
        form.initial[name] = getattr(only[0], field.to_field_name or "pk")


class ServiceFieldsMixin:
    """``service_fields`` maps a service's error field to the form field showing it
    (see :func:`hxportal.views.add_form_errors`)."""

    service_fields: dict[str, str] = {}


class NodeStateForm(forms.Form):
    hostlist = forms.CharField(max_length=hostlists.MAX_HOSTLIST_CHARS,
                               widget=forms.TextInput(attrs={"placeholder": "hx[001-008]"}))
    state = forms.ChoiceField(choices=NodeState.choices)
    reason = forms.CharField(max_length=255, required=False)


class MachineForm(forms.Form):
    name = forms.CharField(max_length=64, validators=[NAME_VALIDATOR],
                           help_text="a letter first, then letters, digits, '_', '.' or '-'")
    sides = forms.CharField(max_length=64, help_text="e.g. 8,8 or 16,16,16")
    concentration = forms.IntegerField(min_value=1, max_value=MAX_CONCENTRATION,
                                       help_text="compute nodes per switch")
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
    node_count = forms.IntegerField(min_value=1, max_value=MAX_NODES)
    pattern = PatternFormField(choices=CommPattern.choices, initial=CommPattern.UNKNOWN)
    policy = forms.ChoiceField(choices=POLICY_CHOICES, initial=BASELINE_POLICY)
    seed = forms.IntegerField(min_value=0, max_value=MAX_SEED, initial=0)
    t_cmpt = seconds_field("Compute time (s)")
    t_comm = seconds_field("Communication time (s)", zero=True)
    wall_time = seconds_field("Wall time (s)")


class CompareForm(ServiceFieldsMixin, forms.Form):
    # The page's ?size= is a public name; the service calls it node_count.
    service_fields = {"node_count": "size"}

    size = forms.IntegerField(min_value=1, max_value=MAX_NODES, label="Job size (nodes)")
    seed = forms.IntegerField(min_value=0, max_value=MAX_SEED, initial=0, required=False)

    def clean_seed(self) -> int:
        return self.cleaned_data.get("seed") or 0


class ReleaseForm(forms.Form):
    status = forms.ChoiceField(choices=[(s, s) for s in sorted(JobStatus.terminal())],
                               initial=JobStatus.COMPLETED, label="Outcome")
    actual_runtime = seconds_field(
        "Actual run time (s)",
        help_text="How long the job really ran; compared with the recommendation's "
                  "predicted E[T] on the recommendations page. Blank if unknown.")


class SiteSettingsForm(forms.Form):
    default_policy = forms.ChoiceField(
        required=False, label="Default allocation policy",
        help_text="Recommendations compare against it and the job form starts on it. "
                  "Blank: the HX_DEFAULT_POLICY environment setting.")

    def __init__(self, *args, env_default: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["default_policy"].choices = [
            ("", f"— from the environment ({env_default}) —"), *POLICY_CHOICES]
