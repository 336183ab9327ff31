"""The reproduction report over the API: start its sweep (operators) and read the
aggregation of a reproduction sweep (whoever may read the sweep)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from hxportal.api.mixins import validated
from hxportal.roles import Role
from hxportal.validators import no_control_characters
from simulation import reproduction_report, services
from simulation.api.serializers import SweepProgressSerializer, SweepSerializer
from simulation.reproduction_preset import DEFAULT_SEEDS, MAX_ORDERING_SEEDS, MAX_SEEDS

# --------------------------------------------------------------------------
# Request and response shapes (documentation and validation)


class ReproductionStartSerializer(serializers.Serializer):
    seeds = serializers.IntegerField(
        min_value=1, max_value=MAX_SEEDS, default=DEFAULT_SEEDS,
        help_text="Seeds (0, 1, ...) of Table 4, and of the two ordering parts unless "
                  "ordering_seeds is given: 70 runs a seed.")
    ordering_seeds = serializers.IntegerField(
        min_value=1, max_value=MAX_ORDERING_SEEDS, required=False, allow_null=True,
        default=None,
        help_text="Seeds of the two ordering parts (70 short runs a seed); default: seeds. "
                  "More seeds narrow the intervals that say whether a verdict could turn; "
                  "the stored reference has 32.")
    name = serializers.CharField(max_length=128, required=False, allow_blank=True,
                                 validators=[no_control_characters], default="")


class _Interval(serializers.Serializer):
    mean = serializers.FloatField()
    low = serializers.FloatField()
    high = serializers.FloatField()
    half_width = serializers.FloatField(help_text="Student-t 95 % half-width over seeds.")
    n = serializers.IntegerField(help_text="Seeds with every pair there.")


class _PatternValue(serializers.Serializer):
    pattern = serializers.CharField()
    mean = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField(help_text="Paired runs behind the mean.")


class _PatternSeed(serializers.Serializer):
    pattern = serializers.CharField()
    seed = serializers.IntegerField()


class _Table4Row(serializers.Serializer):
    policy = serializers.CharField()
    published = serializers.FloatField(allow_null=True)
    engine = serializers.FloatField(allow_null=True, help_text=(
        "Mean over the kernels of the per-kernel mean over seeds of T_diagonal / T_policy; "
        "null until every kernel has a paired run."))
    interval = _Interval(allow_null=True, help_text="null with fewer than 2 complete seeds.")
    difference = serializers.FloatField(allow_null=True, help_text="engine - published")
    within = serializers.BooleanField(allow_null=True)
    kernels = _PatternValue(many=True)
    seeds = serializers.IntegerField(help_text="Seeds with all five kernels paired.")
    missing_pairs = _PatternSeed(many=True, help_text="Kernel and seed without a pair.")
    engine_rank = serializers.IntegerField(allow_null=True)
    published_rank = serializers.IntegerField(allow_null=True)


class _Table4Ranks(serializers.Serializer):
    ranks = serializers.IntegerField()
    seeds = serializers.ListField(child=serializers.IntegerField())
    rows = _Table4Row(many=True)
    ranking = serializers.ListField(child=serializers.CharField(),
                                    help_text="Policies by engine value, best first.")
    published_ranking = serializers.ListField(child=serializers.CharField())


class _Table4(serializers.Serializer):
    kernels = serializers.ListField(child=serializers.CharField())
    baseline = serializers.CharField()
    tolerance = serializers.FloatField()
    description = serializers.CharField(allow_blank=True)
    source = serializers.CharField(allow_blank=True)
    ranks = _Table4Ranks(many=True)


class _PartRow(serializers.Serializer):
    policy = serializers.CharField()
    mean = serializers.FloatField(allow_null=True, help_text="Mean of T_policy / T_diagonal.")
    n = serializers.IntegerField()
    expected = serializers.IntegerField()
    by_seed = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Seed -> the mean of T_policy / T_diagonal over that seed's pairs (seeds "
                  "with every pair only).")
    interval = _Interval(allow_null=True, help_text="Over ``by_seed``; null with fewer "
                                                    "than 2 seeds.")
    by_pattern = _PatternValue(many=True)


class _Part(serializers.Serializer):
    description = serializers.CharField(allow_blank=True)
    metric = serializers.CharField(allow_blank=True)
    lower_is_better = serializers.BooleanField()
    patterns = serializers.ListField(child=serializers.CharField())
    replicas = serializers.ListField(child=serializers.IntegerField())
    seeds = serializers.ListField(child=serializers.IntegerField())
    rows = _PartRow(many=True)


class _Parts(serializers.Serializer):
    escalation_min = _Part()
    interference_static = _Part()


class _PolicyValue(serializers.Serializer):
    policy = serializers.CharField()
    value = serializers.FloatField(allow_null=True)


class _PatternVerdict(serializers.Serializer):
    pattern = serializers.CharField()
    holds = serializers.BooleanField(allow_null=True, help_text="null: runs missing.")
    detail = serializers.CharField()


class _Comparison(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    mean = serializers.FloatField(help_text="Mean over seeds of value_a - value_b.")
    half_width = serializers.FloatField(help_text="Student-t 95 % half-width over seeds.")
    bound = serializers.FloatField(allow_null=True,
                                   help_text="The bound the statement puts on the mean.")


class _Noise(serializers.Serializer):
    verdict = serializers.ChoiceField(
        choices=["holds", "fails", "open"],
        help_text="On the seeds' paired 95 % intervals: open when one straddles its bound, "
                  "so more seeds could turn the verdict.")
    seeds = serializers.IntegerField()
    closest = _Comparison(help_text="The comparison that decides.")


class _Ordering(serializers.Serializer):
    id = serializers.CharField()
    part = serializers.CharField()
    text = serializers.CharField()
    source = serializers.CharField(allow_blank=True)
    kind = serializers.CharField()
    holds = serializers.BooleanField(allow_null=True, help_text="null: runs missing.")
    detail = serializers.CharField()
    noise = _Noise(allow_null=True, help_text="null with fewer than 2 seeds or runs missing.")
    noise_detail = serializers.CharField(allow_blank=True)
    values = _PolicyValue(many=True)
    by_pattern = _PatternVerdict(
        many=True, help_text="The statement on each traffic pattern of its part alone "
                             "(the verdict above pools them).")


class _TargetRanks(serializers.Serializer):
    ranks = serializers.IntegerField()
    holds = serializers.BooleanField(allow_null=True)
    detail = serializers.CharField(allow_blank=True)


class _Target(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()
    kind = serializers.CharField()
    holds = serializers.BooleanField(allow_null=True)
    per_ranks = _TargetRanks(many=True)


class _Count(serializers.Serializer):
    agree = serializers.IntegerField()
    total = serializers.IntegerField()


class _Agreement(serializers.Serializer):
    agree = serializers.IntegerField()
    total = serializers.IntegerField()
    unknown = serializers.IntegerField()
    table4 = _Count()
    orderings = _Count()
    unsettled = serializers.ListField(
        child=serializers.CharField(),
        help_text="Orderings whose verdict the seeds' noise could turn.")
    sentence = serializers.CharField()


class _Point(serializers.Serializer):
    part = serializers.CharField()
    policy = serializers.CharField()
    pattern = serializers.CharField()
    ranks = serializers.IntegerField()
    replicas = serializers.IntegerField()
    seed = serializers.IntegerField()


class _Missing(serializers.Serializer):
    point = _Point()
    status = serializers.CharField(help_text="pending, running, failed, cancelled, "
                                             "unfinished or absent")
    reason = serializers.CharField()
    run = serializers.IntegerField(allow_null=True)


class _Source(serializers.Serializer):
    title = serializers.CharField()
    authors = serializers.ListField(child=serializers.CharField())
    arxiv = serializers.CharField()
    year = serializers.IntegerField()
    where = serializers.CharField()
    transcribed_by = serializers.CharField()


class _SweepInfo(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    seeds = serializers.IntegerField(allow_null=True, help_text="Table 4's seeds.")
    ordering_seeds = serializers.IntegerField(
        allow_null=True, help_text="The ordering parts' seeds (at most 2 in a sweep made "
                                   "before 2026-12-06).")
    run_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    user = serializers.CharField(allow_null=True)
    page = serializers.CharField()
    engine_versions = serializers.ListField(
        child=serializers.CharField(), help_text="Engine versions of the sweep's runs.")
    placement_versions = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Placement versions of the allocation core that placed the runs' jobs.")
    outdated_runs = serializers.IntegerField(
        help_text="Runs made by another engine or placement version than today's: their "
                  "figures are not today's model's (start a new sweep).")


class ReproductionReportSerializer(serializers.Serializer):
    """The engine's normalised results next to the published figures."""

    sweep = _SweepInfo()
    progress = SweepProgressSerializer()
    source = _Source()
    agreement = _Agreement()
    table4 = _Table4()
    parts = _Parts()
    orderings = _Ordering(many=True)
    targets = _Target(many=True)
    missing = _Missing(many=True, help_text="Points without a usable result; never dropped.")
    counts = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="Runs per status, plus 'ignored'.")


# --------------------------------------------------------------------------
# Views


class ReproductionStartView(APIView):
    """Start the reproduction sweep (preset ``reproduction``): 202 with the sweep."""

    read_role = Role.VIEWER
    write_role = Role.OPERATOR

    @extend_schema(request=ReproductionStartSerializer, responses={202: SweepSerializer},
                   operation_id="v1_sweeps_reproduction_start")
    def post(self, request):
        data = validated(ReproductionStartSerializer, request)
        sweep = services.start_reproduction(request.user, seeds=data["seeds"],
                                            ordering_seeds=data["ordering_seeds"],
                                            name=data["name"])
        body = SweepSerializer(sweep, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


class SweepReproductionView(APIView):
    """The reproduction report of one reproduction sweep (partial while it runs)."""

    read_role = Role.VIEWER

    @extend_schema(request=None, responses={
        200: ReproductionReportSerializer,
        404: OpenApiResponse(description="No readable sweep of preset 'reproduction' "
                                         "with this id.")},
        operation_id="v1_sweeps_reproduction_retrieve")
    def get(self, request, pk: int):
        sweep = reproduction_report.chosen_sweep(request.user, pk)
        return Response(reproduction_report.report(sweep))
