"""What a live answer's engine seeds say about the order of the policies, and which
extra seeds would settle it when they split.

One engine seed draws the other jobs' background traffic, the same for every policy,
and on a loaded machine that draw alone moves a run by a third: two policies are
compared seed by seed (paired), and a policy faster than the fastest (on the mean) at
some seed is a *rival* while the paired interval of their difference holds zero. The
live answer then runs more seeds for the fastest and its rivals only, while the
deadline leaves time (``HX_PREDICTION_MAX_SEEDS``), and ranks on all of them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from typing import NamedTuple

from scipy import stats

from hxportal.models import RunStatus
from hxportal.text import join_words

#: Two-sided confidence of the paired interval that tells a rival from a slower policy.
CONFIDENCE = 0.95


class Difference(NamedTuple):
    """A policy's time against the fastest's over their common seeds, as a fraction of
    the fastest's mean there: the mean difference and its Student interval."""

    seeds: tuple[int, ...]
    mean: float
    low: float
    high: float

    def as_dict(self) -> dict:
        return {"seeds": list(self.seeds), "difference": round(self.mean, 4),
                "low": round(self.low, 4), "high": round(self.high, 4)}


def _completed(prediction) -> int | None:
    """The run's completion cycles, or None when it failed or did not complete."""
    result = prediction.result or {}
    if prediction.status == RunStatus.SUCCEEDED and result.get("completed"):
        return result["completion_cycles"]
    return None


def seed_cycles(predictions: Iterable, extra_seeds: Collection[int] = ()
                ) -> dict[str, dict[int, int]]:
    """Each policy's completion cycles per engine seed.

    Every policy asked runs the first seeds: a policy is simulated only when all of its
    runs there completed (one missing a seed would have another estimator than the
    others). ``extra_seeds`` ran only for a contest of close policies: such a seed
    counts only where every run at it completed, so the contest stays paired.
    """
    first: dict[str, list] = {}
    extra: dict[int, list] = {}
    for p in predictions:
        if p.seed in extra_seeds:
            extra.setdefault(p.seed, []).append(p)
        else:
            first.setdefault(p.policy, []).append(p)
    out = {}
    for policy, runs in first.items():
        done = {p.seed: _completed(p) for p in runs}
        if None not in done.values():
            out[policy] = done
    for seed, runs in sorted(extra.items()):
        done = {p.policy: _completed(p) for p in runs}
        if None not in done.values() and all(policy in out for policy in done):
            for policy, cycles in done.items():
                out[policy][seed] = cycles
    return out


class SeedScale(NamedTuple):
    """How a policy run at fewer seeds is weighed on the seeds of the one run at most."""

    reference: str
    seeds: tuple[int, ...]
    scale: float

    def as_dict(self) -> dict:
        return {"reference": self.reference, "seeds": list(self.seeds),
                "scale": round(self.scale, 4)}


def _plain_means(per_seed: dict[str, dict[int, int]]) -> dict[str, float]:
    return {p: sum(c.values()) / len(c) for p, c in per_seed.items()}


def seed_scales(per_seed: dict[str, dict[int, int]]) -> dict[str, SeedScale]:
    """The policies run at fewer seeds than the reference (the fastest of those run at
    most), each with the ratio of the reference's mean on all of its seeds to its mean
    on the policy's seeds (only where the policy's seeds are among the reference's).

    >>> seed_scales({"a": {0: 100, 1: 100, 2: 160}, "b": {0: 110, 1: 110}})
    {'b': SeedScale(reference='a', seeds=(0, 1, 2), scale=1.2)}
    """
    plain = _plain_means(per_seed)
    most = max(map(len, per_seed.values()), default=0)
    reference = min((p for p, c in per_seed.items() if len(c) == most),
                    key=lambda p: (plain[p], p), default=None)
    ref = per_seed.get(reference, {})
    out = {}
    for policy, cycles in per_seed.items():
        if len(cycles) < most and set(cycles) < set(ref):
            on_its_seeds = sum(ref[s] for s in cycles) / len(cycles)
            out[policy] = SeedScale(reference, tuple(sorted(ref)), plain[reference] / on_its_seeds)
    return out


def seed_means(per_seed: dict[str, dict[int, int]]) -> dict[str, float]:
    """Each policy's mean completion cycles, on the seeds of the policy run at most.

    Extra seeds run only for the contest, and seeds differ by a third on a loaded
    machine: a plain mean would set a policy's two lucky seeds against the contest's
    six. A policy run at fewer seeds has its mean scaled (:func:`seed_scales`): the
    paired ratio against the reference, whose seeds move every policy alike.

    >>> seed_means({"a": {0: 100, 1: 100, 2: 160}, "b": {0: 110, 1: 110}})
    {'a': 120.0, 'b': 132.0}
    """
    scales = seed_scales(per_seed)
    return {p: mean * (scales[p].scale if p in scales else 1.0)
            for p, mean in _plain_means(per_seed).items()}


def mean_cycles(per_seed: dict[str, dict[int, int]]) -> dict[str, int]:
    """Each policy's mean completion cycles (:func:`seed_means`), rounded."""
    return {policy: round(mean) for policy, mean in seed_means(per_seed).items()}


def paired_difference(per_seed: dict[str, dict[int, int]], policy: str, fastest: str
                      ) -> Difference | None:
    """``policy`` against ``fastest`` on their common seeds (None below two).

    >>> d = paired_difference({"a": {0: 100, 1: 110, 2: 90}, "b": {0: 110, 1: 121, 2: 99}},
    ...                       "b", "a")
    >>> round(d.mean, 3), round(d.low, 3), round(d.high, 3)
    (0.1, 0.075, 0.125)
    """
    seeds = tuple(sorted(set(per_seed[policy]) & set(per_seed[fastest])))
    if len(seeds) < 2:
        return None
    base = sum(per_seed[fastest][s] for s in seeds) / len(seeds)
    diffs = [(per_seed[policy][s] - per_seed[fastest][s]) / base for s in seeds]
    mean = sum(diffs) / len(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(diffs) - 1)) * sd / math.sqrt(len(diffs))
    return Difference(seeds, mean, mean - half, mean + half)


def seed_rivals(per_seed: dict[str, dict[int, int]]) -> tuple[str, dict[str, list[int]]]:
    """(the fastest policy on :func:`seed_means`, its rivals with the seeds where they
    beat it). A rival beat the fastest at some common seed and the paired interval of
    their difference holds zero: on two seeds every policy that beat it at one is a
    rival (the interval is wide), on more a policy clearly slower on the rest is not.

    >>> seed_rivals({"a": {0: 100, 1: 120}, "b": {0: 90, 1: 150}, "c": {0: 130, 1: 130}})
    ('a', {'b': [0]})
    >>> seed_rivals({"a": dict.fromkeys(range(6), 100),
    ...              "b": {0: 99, 1: 130, 2: 131, 3: 129, 4: 130, 5: 128}})
    ('a', {})
    """
    means = seed_means(per_seed)
    fastest = min(means, key=lambda p: (means[p], p))
    rivals = {}
    for policy, cycles in per_seed.items():
        if policy == fastest:
            continue
        beat = sorted(s for s, c in cycles.items()
                      if s in per_seed[fastest] and c < per_seed[fastest][s])
        difference = paired_difference(per_seed, policy, fastest)
        if beat and (difference is None or difference.low <= 0):
            rivals[policy] = beat
    return fastest, rivals


def _seed_list(seeds: Iterable[int]) -> str:
    return ", ".join(map(str, sorted(seeds)))


def _percent(fraction: float) -> str:
    return f"{fraction * 100:+.1f} %"


def describe_difference(difference: Difference, fastest: str) -> str:
    """The paired difference in words.

    >>> describe_difference(Difference((0, 1, 2), 0.1, 0.057, 0.143), "a")
    '+10.0 % against a on seeds 0, 1, 2 (95 % interval +5.7 % to +14.3 %)'
    """
    return (f"{_percent(difference.mean)} against {fastest} on seeds "
            f"{_seed_list(difference.seeds)} ({CONFIDENCE * 100:.0f} % interval "
            f"{_percent(difference.low)} to {_percent(difference.high)})")


def seed_caveat(per_seed: dict[str, dict[int, int]], extra_seeds: Collection[int] = (),
                asked_extra: Collection[int] = ()) -> str:
    """The note's words on what the seeds say: ``""`` when the first seeds agree; when
    they split, which policies beat the fastest where, and what the ``extra_seeds``
    (those that counted, of the ``asked_extra``) made of it."""
    if len(per_seed) < 2:
        return ""
    fastest, rivals = seed_rivals(per_seed)
    contest = sorted(p for p, c in per_seed.items() if set(c) & set(extra_seeds))
    missed = sorted(set(asked_extra) - set(extra_seeds))
    late = (f" (seed{'s' if len(missed) > 1 else ''} {_seed_list(missed)} gave no "
            "result)") if missed else ""
    if not rivals:
        if not contest:
            return ""
        differences = [f"{p} {describe_difference(d, fastest)}" for p in contest
                       if p != fastest and (d := paired_difference(per_seed, p, fastest))]
        return (f"the first seeds did not agree on the fastest; seeds {_seed_list(extra_seeds)}"
                f", run for {join_words(contest)}, settled it: {fastest} is the fastest"
                + "".join(f"; {d}" for d in differences) + late)
    seeds = sorted({s for c in per_seed.values() for s in c})
    beaten = [f"{p} at seed{'s' if len(s) > 1 else ''} {_seed_list(s)}"
              for p, s in sorted(rivals.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    text = (f"the seeds do not agree on the fastest: {fastest} is the fastest on the mean "
            f"of seeds {_seed_list(seeds)}, but {join_words(beaten)} "
            f"{'was' if len(beaten) == 1 else 'were'} faster (each seed draws the other "
            f"jobs' traffic anew; the policies are too close for {len(seeds)} seeds to order)")
    if contest:
        text += (f"; seeds {_seed_list(extra_seeds)}, run for {join_words(contest)}, did not "
                 "settle it")
    return text + late


def settling_round(per_seed: dict[str, dict[int, int]], asked: Collection[tuple[str, int]],
                   max_seeds: int, processes: int) -> dict[str, list[int]]:
    """The runs that would settle a split answer, as {policy: seeds}: the fastest and its
    rivals each run the seeds another of them counted and they lack, and new seeds
    (as many as fill ``processes`` with the contest's runs, at least one), up to
    ``max_seeds`` in all. Empty when the seeds agree or no seed is left. ``asked``
    holds every (policy, seed) run already made, counted or not, which never runs twice.

    >>> settling_round({"a": {0: 100, 1: 120}, "b": {0: 90, 1: 150}, "c": {0: 200, 1: 200}},
    ...                {(p, s) for p in "abc" for s in (0, 1)}, max_seeds=6, processes=2)
    {'a': [2], 'b': [2]}
    """
    if len(per_seed) < 2:
        return {}
    fastest, rivals = seed_rivals(per_seed)
    if not rivals:
        return {}
    contest = [fastest, *sorted(rivals)]
    counted = set().union(*(per_seed[p] for p in contest))
    room = max_seeds - len(counted | {s for p, s in asked if p in contest})  # failed ones too
    if room <= 0:
        return {}
    start = 1 + max(s for _, s in asked)
    new = set(range(start, start + min(room, max(1, processes // len(contest)))))
    runs = {p: sorted(s for s in (counted | new) - set(per_seed[p]) if (p, s) not in asked)
            for p in contest}
    return {p: seeds for p, seeds in runs.items() if seeds}
