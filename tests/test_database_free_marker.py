"""``make test`` runs a ``database_free`` test on its zero-setup pass only, so the
marker must never land on a test that reaches the database (it would then never run
on PostgreSQL) and must land on one that cannot."""

from __future__ import annotations

import pytest


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
