"""Pages for per-job recommendations: submit, watch it rank, accept."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect
from django.views import View
from django.views.generic import DetailView, ListView

from allocation.grid import candidate_grid
from hxportal import hostlists, ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role
from hxportal.templatetags import hxformat
from hxportal.views import OwnedRowsMixin, RoleRequiredMixin, ServiceFormView
from recommendations import services as recommendations
from recommendations.charts import recommendation_curve
from recommendations.forms import RecommendationForm
from recommendations.models import Recommendation, RecommendationMethod, RecommendationStatus


class RecommendFormView(RoleRequiredMixin, ServiceFormView):
    required_role = Role.OPERATOR
    template_name = "recommendations/recommend_form.html"
    form_class = RecommendationForm
    refusals = (ValidationError,)

    def get_initial(self):
        return {"machine": self.request.GET.get("machine")}

    def perform(self, form: RecommendationForm) -> Recommendation:
        rec, _ = recommendations.request_recommendation(user=self.request.user,
                                                        **form.cleaned_data)
        return rec


class RecommendationListView(RoleRequiredMixin, OwnedRowsMixin, ListView):
    template_name = "recommendations/recommendation_list.html"
    context_object_name = "recommendations"
    paginate_by = 50
    queryset = Recommendation.objects.select_related("machine", "user", "job").order_by(
        "-created_at", "-id")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["accuracy"] = accuracy_rows(self.readable(Recommendation.objects.filter(
            Q(job__actual_runtime__isnull=False), status=RecommendationStatus.ACCEPTED)))
        return context


def accuracy_rows(accepted) -> list[dict]:
    """Predicted E[T] against the actual run time, per policy, over accepted jobs that
    reported their run time. A job without a prediction (no spare estimate when it
    was recommended) counts in ``jobs`` and the mean actual time only: it is left out
    of the predicted mean and of the error statistics, never taken as 0."""
    rows: dict[str, dict] = {}
    for rec in accepted.select_related("job").order_by("-created_at")[:500]:
        entry = next((e for e in rec.ranking if e.get("policy") == rec.job.policy), None)
        predicted = (entry or {}).get("expected_time")
        row = rows.setdefault(rec.job.policy, {"policy": rec.job.policy, "jobs": 0,
                                               "actual_sum": 0.0, "pairs": []})
        row["jobs"] += 1
        row["actual_sum"] += rec.job.actual_runtime
        if predicted:
            row["pairs"].append((predicted, rec.job.actual_runtime))
    out = []
    for row in rows.values():
        pairs = row.pop("pairs")
        predicted = [p for p, _ in pairs]
        row.update(
            actual=row.pop("actual_sum") / row["jobs"], predicted_jobs=len(pairs),
            unpredicted=row["jobs"] - len(pairs),
            predicted=sum(predicted) / len(pairs) if pairs else None,
            ratio=sum(a for _, a in pairs) / sum(predicted) if pairs else None,
            error=sum(abs(a - p) / p for p, a in pairs) / len(pairs) if pairs else None)
        out.append(row)
    return sorted(out, key=lambda r: r["policy"])


class RecommendationDetailView(RoleRequiredMixin, OwnedRowsMixin, DetailView):
    template_name = "recommendations/recommendation_detail.html"
    context_object_name = "rec"
    queryset = Recommendation.objects.select_related("machine", "user", "job")

    def get_object(self, queryset=None):
        return recommendations.refresh(super().get_object(queryset))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        rec = self.object
        context["can_accept"] = rec.status == RecommendationStatus.READY and \
            ownership.may_change(self.request.user, rec.user_id)
        progress = recommendations.prediction_progress(rec)
        context.update(progress=progress["done"], simulations=progress["simulations"],
                       calibrating=self._calibrating(rec))
        if rec.recommended:
            context.update(self._partition(rec), curve=recommendation_curve(rec),
                           **self._summary(rec))
        return context

    @staticmethod
    def _calibrating(rec: Recommendation):
        """The running calibration that an analytic answer waits for, if that is why
        it is analytic (the note says a calibration is running)."""
        if rec.method != RecommendationMethod.ANALYTIC or "calibration" not in rec.note:
            return None
        calibration = recommendations.current_calibration(rec.machine)
        return calibration if calibration and calibration.status == "running" else None

    @staticmethod
    def _summary(rec: Recommendation) -> dict:
        """The spare-model problem, if any, and the comparisons in words."""
        best = rec.recommended
        entry = next((e for e in rec.ranking if e.get("policy") == best["policy"]), {})
        spares_error = ((entry.get("spares") or {}).get("error")
                        if isinstance(entry.get("spares"), dict) else None)
        cost = best.get("expected_cost")
        as_is = best.get("saving_vs_as_is")
        default = best.get("saving_vs_default")
        return {
            "spares_error": spares_error,
            "no_estimate": bool(spares_error) and "has no estimate" in spares_error,
            "vs_as_is": hxformat.change(cost, cost * as_is) if cost and as_is else "",
            "vs_default": hxformat.change(cost, cost * default) if cost and default else "",
            "is_default": best.get("policy") == best.get("default_policy"),
        }

    def _partition(self, rec: Recommendation) -> dict:
        return {"grid": candidate_grid(
            rec.machine, hostlists.expand(rec.recommended.get("hostlist") or ""),
            hostlists.expand(rec.recommended.get("spares_hostlist") or ""),
            request=self.request, testid="recommendation-grid", label="recommended",
            own_job=rec.job_id)}


class RecommendationAcceptView(RoleRequiredMixin, View):
    required_role = Role.OPERATOR

    def post(self, request, pk: int):
        rec = get_object_or_404(ownership.writable(Recommendation.objects.all(), request.user,
                                                   "user"), pk=pk)
        try:
            job = recommendations.accept(rec, request.user, request.POST.get("policy") or None)
        except (ValidationError, ConflictError) as exc:
            messages.error(request, getattr(exc, "message", None) or "; ".join(exc.messages))
            return redirect(rec)
        messages.success(request, f"Allocated job {job.pk} with {job.policy}.")
        return redirect(job)
