"""Every URL path and command operators' browsers and scripts use, pinned.

The list was taken before health and recommendations became apps and must not
change when code moves: a path that disappears breaks a bookmark or a script.
Adding a page or endpoint adds a line here (a deliberate act); removing one
needs a deprecation, not an edit. The admin's own paths are Django's.
"""

from __future__ import annotations

from django.core.management import get_commands
from django.urls import URLResolver, get_resolver

PATHS = [
    '',
    'api/docs/',
    'api/schema/',
    'api/v1/^benchmarks/$',
    'api/v1/^calibrations/$',
    'api/v1/^calibrations/(?P<pk>[^/.]+)/$',
    'api/v1/^calibrations/(?P<pk>[^/.]+)/cancel/$',
    'api/v1/^estimates/$',
    'api/v1/^estimates/(?P<pk>[^/.]+)/$',
    'api/v1/^estimation-runs/$',
    'api/v1/^estimation-runs/(?P<pk>[^/.]+)/$',
    'api/v1/^jobs/$',
    'api/v1/^jobs/(?P<pk>[^/.]+)/$',
    'api/v1/^jobs/(?P<pk>[^/.]+)/allocate/$',
    'api/v1/^jobs/(?P<pk>[^/.]+)/release/$',
    'api/v1/^jobs/(?P<pk>[^/.]+)/start/$',
    'api/v1/^jobs/(?P<pk>[^/.]+)/submitted/$',
    'api/v1/^machines/$',
    'api/v1/^machines/(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})/$',
    'api/v1/^machines/(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})/compare/$',
    'api/v1/^machines/(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})/preview/$',
    'api/v1/^machines/(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})/slurm-sync/$',
    'api/v1/^machines/(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})/topology/$',
    'api/v1/^nodes/$',
    'api/v1/^nodes/(?P<pk>[^/.]+)/$',
    'api/v1/^nodes/state/$',
    'api/v1/^recommendations/$',
    'api/v1/^recommendations/(?P<pk>[^/.]+)/$',
    'api/v1/^recommendations/(?P<pk>[^/.]+)/accept/$',
    'api/v1/^simulation-runs/$',
    'api/v1/^simulation-runs/(?P<pk>[^/.]+)/$',
    'api/v1/^simulation-runs/(?P<pk>[^/.]+)/cancel/$',
    'api/v1/^simulation-runs/validate/$',
    'api/v1/^sweeps/$',
    'api/v1/^sweeps/(?P<pk>[^/.]+)/$',
    'api/v1/^sweeps/(?P<pk>[^/.]+)/cancel/$',
    'api/v1/^sweeps/(?P<pk>[^/.]+)/results/$',
    'api/v1/^sweeps/study/$',
    'api/v1/^whatif/$',
    'api/v1/^whatif/(?P<pk>[^/.]+)/$',
    'api/v1/^whatif/(?P<pk>[^/.]+)/cancel/$',
    'api/v1/^whatif/(?P<pk>[^/.]+)/csv/$',
    'api/v1/^whatif/(?P<pk>[^/.]+)/progress/$',
    'api/v1/^whatif/(?P<pk>[^/.]+)/results/$',
    'api/v1/^whatif/demo/$',
    'api/v1/node-health/',
    'api/v1/partitions/properties/',
    'api/v1/select-fastest/',
    'api/v1/spares/',
    'api/v1/sweeps/<int:pk>/reproduction/',
    'api/v1/sweeps/reproduction/',
    'benchmarks/upload/',
    'estimation-runs/<int:pk>/',
    'favicon.ico',
    'glossary/',
    'health/',
    'jobs.csv',
    'jobs/',
    'jobs/<int:pk>/',
    'jobs/<int:pk>/release/',
    'jobs/<int:pk>/select-fastest/',
    'login/',
    'logout/',
    'machines/<str:name>/',
    'machines/<str:name>/compare/',
    'machines/<str:name>/health/',
    'machines/<str:name>/health/drain/',
    'machines/<str:name>/health/estimate/',
    'machines/<str:name>/health/nodes/<str:hostname>/',
    'machines/<str:name>/jobs/new/',
    'machines/<str:name>/nodes.csv',
    'machines/<str:name>/nodes/',
    'machines/<str:name>/nodes/state/',
    'machines/<str:name>/slurm-sync/',
    'machines/new/',
    'metrics',
    'recommend/',
    'recommendations/',
    'recommendations/<int:pk>/',
    'recommendations/<int:pk>/accept/',
    'recommendations/calibrations/',
    'recommendations/calibrations/<int:pk>/',
    'recommendations/calibrations/<int:pk>/cancel/',
    'recommendations/calibrations/start/',
    'search/',
    'settings/',
    'simulation/',
    'simulation/reproduction/',
    'simulation/reproduction/start/',
    'simulation/runs/<int:pk>/',
    'simulation/runs/<int:pk>/cancel/',
    'simulation/runs/<int:pk>/delete/',
    'simulation/runs/new/',
    'simulation/sweeps/',
    'simulation/sweeps/<int:pk>/',
    'simulation/sweeps/<int:pk>/cancel/',
    'simulation/sweeps/<int:pk>/delete/',
    'simulation/sweeps/<int:pk>/results.csv',
    'simulation/sweeps/<int:pk>/results.json',
    'simulation/sweeps/new/',
    'simulation/sweeps/study/',
    'spares/',
    'whatif/',
    'whatif/<int:pk>/',
    'whatif/<int:pk>/cancel/',
    'whatif/<int:pk>/delete/',
    'whatif/<int:pk>/results.csv',
    'whatif/<int:pk>/results.json',
    'whatif/demo/',
    'whatif/new/',
]


def _paths(resolver, prefix=""):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from _paths(pattern, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def test_url_paths_are_the_pinned_ones():
    paths = {p for p in _paths(get_resolver()) if not p.startswith("admin/")}
    assert sorted(paths) == PATHS


def test_the_commands_operators_script_are_all_there():
    """Slurm scripts and cron jobs call these by name, whichever app holds them."""
    commands = get_commands()
    for name in ("hx_demo", "hx_allocate", "hx_partition", "hx_spares", "hx_estimate",
                 "hx_simulate", "hx_user", "hx_whatif"):
        assert name in commands, name
