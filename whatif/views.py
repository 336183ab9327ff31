"""Pages of what-if studies. Thin: the services read, write and gather; charts draw."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View
from django.views.generic import DetailView

from hxportal import ownership
from hxportal.roles import Role
from hxportal.views import OwnedRowActionView, OwnedRowsMixin, RoleRequiredMixin, ServiceFormView
from whatif import charts, services
from whatif.forms import DemoForm, StudyForm
from whatif.metrics_labels import ROWS
from whatif.models import WhatIfStudy

MAX_STUDIES = 50


def _readable(request, pk: int) -> WhatIfStudy:
    return get_object_or_404(ownership.readable(
        WhatIfStudy.objects.select_related("machine").defer("workload"), request.user,
        "user"), pk=pk)


def _list_context(request, form: StudyForm | None = None) -> dict:
    studies = services.with_counts(ownership.readable(
        WhatIfStudy.objects.select_related("machine", "user").defer("workload"),
        request.user, "user")).order_by("-created_at", "-id")[:MAX_STUDIES]
    return {"studies": studies, "form": form or StudyForm(initial={"machine": "hx"}),
            "demo_form": DemoForm(initial={"machine": "hx"}),
            "can_operate": request.user.has_role(Role.OPERATOR)}


class WhatIfListView(RoleRequiredMixin, View):
    """The studies, the upload form and the one-click synthetic month."""

    def get(self, request):
        return render(request, "whatif/study_list.html", _list_context(request))


class WhatIfCreateView(RoleRequiredMixin, ServiceFormView):
    """The upload form's target (the form is on the list page)."""

    required_role = Role.OPERATOR
    template_name = "whatif/study_list.html"
    form_class = StudyForm

    def get(self, request, *args, **kwargs):
        return redirect("whatif:study_list")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(_list_context(self.request, context["form"]))
        return context

    def perform(self, form: StudyForm) -> WhatIfStudy:
        data = form.cleaned_data
        return services.start_study(
            machine=data["machine"], fmt=data["format"], upload=data.get("workload"),
            policies=data["policies"], spares=form.spare_rules(), seeds=data["seeds"],
            ideal=data["ideal"], release=not data["held"], name=data["name"],
            user=self.request.user)

    def success_message(self, form, study: WhatIfStudy) -> str:
        return f"Started what-if study {study.pk}: {study.run_count} runs."


class WhatIfDemoStartView(RoleRequiredMixin, View):
    """One click: every policy x none / 2 / recommended spares on a synthetic month."""

    required_role = Role.OPERATOR

    def post(self, request):
        form = DemoForm(request.POST)
        if not form.is_valid():
            messages.error(request, "Choose a machine.")
            return redirect("whatif:study_list")
        try:
            study = services.start_demo(machine=form.cleaned_data["machine"], user=request.user,
                                        fmt=form.cleaned_data["format"])
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
            return redirect("whatif:study_list")
        messages.success(request, f"Started what-if study {study.pk}: {study.run_count} runs.")
        return redirect(study)


class WhatIfDetailView(RoleRequiredMixin, OwnedRowsMixin, DetailView):
    template_name = "whatif/study_detail.html"
    context_object_name = "study"
    queryset = WhatIfStudy.objects.select_related("machine", "user").defer("workload")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        data = services.results(self.object, with_jobs=False)
        best = data["best"]
        table = []
        for i, (entry, detail) in enumerate(zip(data["scenarios"], data["details"],
                                                strict=True)):
            cells = []
            for key, label, unit, scale in ROWS:
                iv = detail["intervals"][key]
                cells.append({"key": key, "mean": iv["mean"] * scale, "low": iv["low"] * scale,
                              "high": iv["high"] * scale, "best": i in best.get(key, []),
                              "label": label, "unit": unit})
            table.append({"policy": entry["policy"], "spares": entry["spares"],
                          "seeds": len(detail["seeds"]), "timeouts": detail["timeouts"],
                          "factor_source": detail["factor_source"], "cells": cells})
        running = data["progress"]["status"] in ("pending", "running")
        context.update(data=data, table=table, rows=ROWS, charts=charts.study_charts(data),
                       running=running,
                       can_change=ownership.may_change(self.request.user, self.object.user_id))
        return context


class WhatIfCancelView(OwnedRowActionView):
    model = WhatIfStudy
    service = staticmethod(services.cancel_study)
    done = "Cancelled {result} runs."


class WhatIfDeleteView(OwnedRowActionView):
    model = WhatIfStudy
    service = staticmethod(services.delete_study)
    done = "Deleted what-if study {pk}."
    success_url = "whatif:study_list"


class WhatIfCSVView(RoleRequiredMixin, View):
    def get(self, request, pk: int):
        study = _readable(request, pk)
        response = HttpResponse(services.export_csv(study), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="whatif-{study.pk}.csv"'
        return response


class WhatIfJSONView(RoleRequiredMixin, View):
    def get(self, request, pk: int):
        study = _readable(request, pk)
        response = JsonResponse(services.results(study))
        response["Content-Disposition"] = f'attachment; filename="whatif-{study.pk}.json"'
        return response
