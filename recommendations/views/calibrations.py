"""Calibration pages: every calibration with its progress (operators start and cancel
one), and one calibration's grid, progress and what it answers, drawn per pattern."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views import View
from django.views.generic import DetailView, TemplateView

from hxportal.roles import Role
from hxportal.views import RoleRequiredMixin, ServiceFormView
from recommendations import constants
from recommendations import services as recommendations
from recommendations.charts import calibration_charts
from recommendations.forms import CalibrationStartForm
from recommendations.models import Calibration, CalibrationStatus


class CalibrationListView(RoleRequiredMixin, TemplateView):
    """Every calibration (newest first) with its progress; operators see the start form."""

    template_name = "recommendations/calibration_list.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        rows = []
        for calibration in Calibration.objects.select_related("machine", "sweep")[:100]:
            calibration = recommendations.refresh_calibration(calibration)
            rows.append({"calibration": calibration,
                         "progress": recommendations.calibration_progress(calibration)})
        context.update(rows=rows, form=CalibrationStartForm(),
                       deadline=constants.DEADLINE_SECONDS)
        return context


class CalibrationStartView(RoleRequiredMixin, ServiceFormView):
    """Start a calibration of a machine's shape (or be shown the one running)."""

    required_role = Role.OPERATOR
    template_name = "recommendations/calibration_start.html"
    form_class = CalibrationStartForm
    refusals = (ValidationError,)

    def get_initial(self):
        return {"machine": self.request.GET.get("machine")}

    def perform(self, form: CalibrationStartForm) -> Calibration:
        axes = {"patterns": form.cleaned_data["patterns"]} if form.cleaned_data["patterns"] \
            else None
        calibration, created = recommendations.start_calibration(
            form.cleaned_data["machine"], user=self.request.user, axes=axes)
        self.created = created
        return calibration

    def success_message(self, form, obj: Calibration) -> str:
        if self.created:
            return f"Calibration {obj.pk} started: {obj.run_count} runs."
        return f"Calibration {obj.pk} of this shape was already running: here it is."


class CalibrationDetailView(RoleRequiredMixin, DetailView):
    template_name = "recommendations/calibration_detail.html"
    context_object_name = "calibration"
    queryset = Calibration.objects.select_related("machine", "sweep")

    def get_object(self, queryset=None):
        return recommendations.refresh_calibration(super().get_object(queryset))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        calibration = self.object
        loads = [float(u) for u in calibration.grid.get("loads", [])]
        try:
            load = float(self.request.GET.get("load", ""))
        except ValueError:
            load = None
        load = load if load in loads else (0.5 if 0.5 in loads else (loads or [0.0])[0])
        context.update(progress=recommendations.calibration_progress(calibration),
                       loads=loads, load=load, charts=calibration_charts(calibration, load),
                       running=calibration.status == CalibrationStatus.RUNNING)
        return context


class CalibrationCancelView(RoleRequiredMixin, View):
    required_role = Role.OPERATOR

    def post(self, request, pk: int):
        calibration = recommendations.cancel_calibration(get_object_or_404(Calibration, pk=pk))
        messages.success(request, f"Calibration {calibration.pk} cancelled; "
                                  f"{calibration.points_done} finished runs stay in its table.")
        return redirect(calibration)
