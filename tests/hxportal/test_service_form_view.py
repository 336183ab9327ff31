"""ServiceFormView: the one way a form page hands its form to a service."""

from __future__ import annotations

import pytest
from django import forms
from django.contrib.messages.storage.fallback import FallbackStorage
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.test import RequestFactory

from hxportal.errors import ConflictError
from hxportal.views import ServiceFormView


class NameForm(forms.Form):
    service_fields = {"label": "name"}
    name = forms.CharField()


class NameView(ServiceFormView):
    form_class = NameForm
    template_name = "inc/form.html"
    success_url = "/done/"

    def perform(self, form):
        name = form.cleaned_data["name"]
        if name == "taken":
            raise ConflictError("already taken", field="name")
        if name == "bad":
            raise ValidationError({"label": ["not a good name"]})
        if name == "boom":
            raise RuntimeError("not a refusal")
        if name == "preview":
            return HttpResponse("preview")
        return name

    def success_message(self, form, obj):
        return f"Saved {obj}."


def post(name: str):
    request = RequestFactory().post("/", {"name": name})
    request.session = {}
    request._messages = FallbackStorage(request)
    response = NameView.as_view()(request)
    return request, response


def test_success_flashes_and_redirects():
    request, response = post("ok")
    assert response.status_code == 302 and response["Location"] == "/done/"
    assert [str(m) for m in request._messages] == ["Saved ok."]


@pytest.mark.parametrize(("name", "message"), [("taken", "already taken"),
                                               ("bad", "not a good name")])
def test_refusals_land_on_the_field_and_render_again(name, message):
    _, response = post(name)
    assert response.status_code == 400
    assert response.context_data["form"].errors["name"] == [message]


def test_a_response_of_perform_is_sent_as_is_and_other_errors_propagate():
    request, response = post("preview")
    assert response.content == b"preview" and not list(request._messages)
    with pytest.raises(RuntimeError):
        post("boom")
