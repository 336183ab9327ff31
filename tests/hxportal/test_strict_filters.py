"""A filter value that cannot be understood is a 400 naming the field, never
ignored: ``?allocated=maybe`` must not list every node."""

from __future__ import annotations

import importlib

import pytest
from django import forms
from django.http import QueryDict
from django_filters import FilterSet, filters

from allocation.services import jobs
from hxportal.api.filters import HxFilterSet, StrictBooleanFilter

pytestmark = pytest.mark.django_db

APPS = ("allocation", "health", "recommendations", "simulation")


def project_filtersets() -> list[type[FilterSet]]:
    for app in APPS:
        importlib.import_module(f"{app}.filtersets")
    found, todo = [], list(FilterSet.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] in APPS:
            found.append(cls)
    return found


def closed_filters():
    """Every filter with a closed set of values (yes/no or choices), per filterset."""
    for filterset in project_filtersets():
        for name, flt in filterset.base_filters.items():
            if issubclass(flt.field_class, (forms.NullBooleanField, forms.ChoiceField)):
                yield pytest.param(filterset, name, id=f"{filterset.__name__}.{name}")


def test_every_filterset_uses_the_strict_base():
    sets = project_filtersets()
    assert len(sets) >= 9
    assert [s.__name__ for s in sets if not issubclass(s, HxFilterSet)] == []
    for filterset in sets:
        for name, flt in filterset.base_filters.items():
            if isinstance(flt, filters.BooleanFilter):
                assert isinstance(flt, StrictBooleanFilter), f"{filterset.__name__}.{name}"


@pytest.mark.parametrize(("filterset", "name"), list(closed_filters()))
def test_a_closed_filter_refuses_a_value_outside_its_set(filterset, name):
    bound = filterset(QueryDict(f"{name}=maybe"),
                      queryset=filterset._meta.model.objects.none())
    assert not bound.is_valid()
    assert name in bound.errors


@pytest.mark.parametrize(("url", "field"), [
    ("/api/v1/nodes/?allocated=maybe", "allocated"),
    ("/api/v1/nodes/?allocated=yes%20please", "allocated"),
    ("/api/v1/simulation-runs/?standalone=maybe", "standalone"),
    ("/api/v1/simulation-runs/?status=maybe", "status"),
    ("/api/v1/jobs/?status=maybe", "status"),
    ("/api/v1/recommendations/?status=maybe", "status"),
])
def test_api_answers_400_naming_the_filter(api, machine, url, field):
    response = api("viewer").get(url)
    assert response.status_code == 400, response.content
    body = response.json()
    assert field in body["errors"] and field in body["detail"], body


def test_boolean_filters_still_filter(api, machine, users):
    jobs.submit_job(owner=users["operator"], machine=machine, name="a", node_count=4,
                    pattern="uniform", policy="row")
    counts = {}
    for value in ("true", "True", "1", "false", "0", ""):
        response = api("viewer").get(f"/api/v1/nodes/?machine=m4&allocated={value}")
        assert response.status_code == 200, (value, response.content)
        counts[value] = response.json()["count"]
    assert counts == {"true": 4, "True": 4, "1": 4, "false": 60, "0": 60, "": 64}


def test_the_node_page_shows_the_filter_error(client_for, machine):
    response = client_for("viewer").get("/machines/m4/nodes/?allocated=maybe")
    assert response.status_code == 400  # a refused filter answers 400, with the page
    html = response.content.decode()
    assert "allocated:" in html and "true or false" in html
