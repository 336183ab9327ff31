"""``make test`` runs a ``database_free`` test on one pass only, so the marker must
never land on a test that reaches the database (it would then never run on SQLite)
and must land on one that cannot; ``second_pass`` picks the zero-setup pass for
the simulation app's, and never for a test that pass leaves out."""

from __future__ import annotations

import pytest

from tests.conftest import runs_on_the_second_pass


def test_a_test_without_database_fixtures_is_marked_database_free(request):
    assert request.node.get_closest_marker("database_free") is not None


def test_a_test_with_the_db_fixture_is_not_marked(db, request):
    assert request.node.get_closest_marker("database_free") is None


def test_a_test_with_the_transactional_db_fixture_is_not_marked(transactional_db, request):
    assert request.node.get_closest_marker("database_free") is None


@pytest.mark.django_db
def test_a_test_marked_django_db_is_not_marked(request):
    assert request.node.get_closest_marker("database_free") is None


def test_a_test_reaching_the_database_through_a_fixture_is_not_marked(machine, request):
    assert request.node.get_closest_marker("database_free") is None


def test_a_database_free_test_outside_the_simulation_app_stays_on_the_first_pass(request):
    assert request.node.get_closest_marker("second_pass") is None


def test_the_simulation_apps_database_free_tests_run_on_the_second_pass():
    assert runs_on_the_second_pass("tests/simulation/engine/test_memory.py::test_x", set())
    assert runs_on_the_second_pass("tests/simulation/test_cli.py::test_y[a]", {"worker"})
    assert not runs_on_the_second_pass("tests/health/maths/test_cost.py::test_z", set())
    assert not runs_on_the_second_pass("simulation/engine/config.py::simulation.x", set())


def test_a_test_the_second_pass_leaves_out_is_never_sent_there():
    for marker in ("postgres", "browser"):
        assert not runs_on_the_second_pass("tests/simulation/test_a.py::test_b", {marker})
