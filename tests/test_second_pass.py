"""The README test command's second pass runs a test only when its result can depend on
the database or broker it is given (tests/conftest.py, ``HX_TEST_DATABASE_ONLY``)."""

from __future__ import annotations

import pytest

from tests.conftest import opens_database_or_processes


class FakeItem:
    def __init__(self, markers=(), fixtures=()):
        self.markers = {m: getattr(pytest.mark, m).mark for m in markers}
        self.fixturenames = list(fixtures)

    def get_closest_marker(self, name):
        return self.markers.get(name)


@pytest.mark.parametrize(("markers", "fixtures", "kept"), [
    ((), (), False),                                 # a pure core's test
    ((), ("tmp_path", "monkeypatch"), False),
    (("django_db",), (), True),                      # @pytest.mark.django_db
    ((), ("users", "db"), True),                     # a fixture that needs the database
    ((), ("transactional_db",), True),
    ((), ("live_server",), True),
    (("slurm",), (), True),                          # daemons and processes
    (("processes",), (), True),
    (("worker",), ("tmp_path",), True),
])
def test_the_second_pass_keeps_what_can_depend_on_its_database(markers, fixtures, kept):
    assert opens_database_or_processes(FakeItem(markers, fixtures)) is kept
