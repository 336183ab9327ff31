"""Forms for the pages; they shape input, the service validates and writes."""

from __future__ import annotations

import json
import re

from django import forms

from allocation.hyperx.patterns import KERNEL_PATTERNS
from allocation.models import Machine
from simulation import services
from simulation.presets import MAX_SCALE

D = services.DEFAULTS
#: Switches per dimension as typed: whole numbers separated by commas (or "x", as in 8x8).
#: The same pattern is in static/simulation/simulation.js (live validation).
SIDES_TEXT = re.compile(r"^\s*\d+(?:\s*[,x]\s*\d+)*\s*$")


def _choices(name: str) -> list[tuple[str, str]]:
    return [(v, v) for v in services.CHOICES[name]]


class RunForm(forms.Form):
    """The common configuration keys; anything else goes in ``extra`` as JSON.

    ``data-config`` marks the inputs the live-validation script collects.
    """

    machine = forms.ModelChoiceField(
        queryset=Machine.objects.order_by("name"), required=False, to_field_name="name",
        empty_label="(none: sides and concentration below)",
        help_text="Use this machine's shape and partitions from its free nodes now.")
    sides = forms.CharField(initial="8,8", max_length=64, help_text="Switches per dimension.")
    concentration = forms.IntegerField(initial=D["concentration"], min_value=1,
                                       help_text="Endpoints per switch.")
    policy = forms.ChoiceField(choices=_choices("policy"), initial=D["policy"])
    scenario = forms.ChoiceField(choices=_choices("scenario"), initial=D["scenario"])
    pattern = forms.ChoiceField(choices=_choices("pattern"), initial=KERNEL_PATTERNS[0])
    ranks = forms.IntegerField(initial=D["ranks"], min_value=1)
    replicas = forms.IntegerField(initial=D["replicas"], min_value=1,
                                  help_text="Applications in the escalation scenario.")
    routing = forms.ChoiceField(choices=_choices("routing"), initial=D["routing"])
    vc_sets = forms.ChoiceField(choices=_choices("vc_sets"), initial=D["vc_sets"],
                                label="VC sets")
    rate = forms.FloatField(initial=D["rate"], help_text="Open-loop phits/cycle/endpoint.")
    message_packets = forms.IntegerField(
        initial=D["message_packets"], min_value=0,
        help_text="Packets per message; 0 = the study's volume for the kernel.")
    seed = forms.IntegerField(initial=D["seed"], min_value=0)
    max_cycles = forms.IntegerField(initial=D["max_cycles"], min_value=1)
    extra = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                            label="More keys (JSON)",
                            help_text='e.g. {"vcs": 8, "background_rate": 0.3}')

    CONFIG_KEYS = ("sides", "concentration", "policy", "scenario", "pattern", "ranks",
                   "replicas", "routing", "vc_sets", "rate", "message_packets", "seed",
                   "max_cycles")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            field.widget.attrs["data-config"] = name

    def clean_sides(self) -> list[int]:
        """Every part must be a whole number: ``8,x`` is refused, never read as ``8``."""
        raw = self.cleaned_data["sides"]
        if not SIDES_TEXT.match(raw):
            raise forms.ValidationError(
                f"{raw[:40]!r} is not a list of whole numbers: give the switches per "
                "dimension separated by commas, e.g. 8,8 (or 8x8)")
        return [int(p) for p in re.split(r"[,x]", raw)]

    def clean_extra(self) -> dict:
        raw = self.cleaned_data["extra"].strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise forms.ValidationError(f"not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise forms.ValidationError("must be a JSON object")
        return value

    def config(self) -> dict:
        data = self.cleaned_data
        config = {key: data[key] for key in self.CONFIG_KEYS if data.get(key) is not None}
        config.update(data.get("extra") or {})
        return config


def _list(raw: str, cast=str) -> list:
    return [cast(p.strip()) for p in raw.split(",") if p.strip()]


class SweepForm(forms.Form):
    """Parameter lists as comma-separated values over a base configuration."""

    name = forms.CharField(max_length=128)
    base = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False,
                           initial='{"pattern": "all2all", "ranks": 64, "max_cycles": 20000}',
                           help_text="Base configuration (JSON).")
    policy = forms.MultipleChoiceField(choices=_choices("policy"), required=False,
                                       widget=forms.CheckboxSelectMultiple, label="Policies")
    pattern = forms.CharField(required=False, label="Patterns",
                              help_text="Comma-separated, e.g. all2all, stencil4")
    replicas = forms.CharField(required=False, help_text="e.g. 1,2,4 (escalation)")
    routing = forms.MultipleChoiceField(choices=_choices("routing"), required=False,
                                        widget=forms.CheckboxSelectMultiple)
    vc_sets = forms.MultipleChoiceField(choices=_choices("vc_sets"), required=False,
                                        widget=forms.CheckboxSelectMultiple,
                                        label="VC sets")
    seed = forms.CharField(required=False, label="Seeds", help_text="e.g. 0,1,2")

    def clean_base(self) -> dict:
        raw = self.cleaned_data["base"].strip() or "{}"
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise forms.ValidationError(f"not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise forms.ValidationError("must be a JSON object")
        return value

    def _ints(self, name: str) -> list[int]:
        try:
            return _list(self.cleaned_data[name], int)
        except ValueError as exc:
            raise forms.ValidationError("use integers separated by commas") from exc

    def clean_replicas(self) -> list[int]:
        return self._ints("replicas")

    def clean_seed(self) -> list[int]:
        return self._ints("seed")

    def clean_pattern(self) -> list[str]:
        return _list(self.cleaned_data["pattern"])

    def parameters(self) -> dict:
        data = self.cleaned_data
        return {key: list(data[key]) for key in ("policy", "pattern", "replicas", "routing",
                                                 "vc_sets", "seed") if data.get(key)}


class StudyForm(forms.Form):
    scale = forms.IntegerField(min_value=1, max_value=MAX_SCALE, initial=1,
                               help_text="Multiple of the study's kernel volume "
                                         "(max_cycles grows with it).")
    name = forms.CharField(max_length=128, required=False)
