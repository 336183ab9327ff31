"""JSON errors that name the field and the problem, never an HTML 500 page.

Shape: ``{"detail": "...", "errors": {"field": ["problem", ...]}}``; non-field
problems appear under ``detail`` only.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from hxportal.errors import ConflictError


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


def _summary(errors) -> str:
    if isinstance(errors, dict):
        parts = []
        for field, problems in errors.items():
            text = problems if isinstance(problems, str) else "; ".join(
                str(p) for p in (problems if isinstance(problems, list) else [problems]))
            parts.append(text if field in ("non_field_errors", "detail") else f"{field}: {text}")
        return " | ".join(parts)
    if isinstance(errors, list):
        return "; ".join(str(e) for e in errors)
    return str(errors)


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        exc = ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, ConflictError):
        response = Response({"detail": exc.message,
                             "errors": {exc.field or "non_field_errors": [exc.message]}},
                            status=status.HTTP_409_CONFLICT)
        return response
    elif isinstance(exc, DataError):
        # Last line of defence: a value the database cannot store is the caller's error.
        # The database's own text names tables and values: never sent to clients.
        exc = ValidationError({"non_field_errors": ["a value is out of range for the database"]})
    elif isinstance(exc, IntegrityError):
        exc = Conflict("Conflicts with existing data (a unique value is already taken).")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        data = response.data
        errors = data if isinstance(data, dict) else {"non_field_errors": data}
        response.data = {"detail": _summary(errors), "errors": errors}
    return response
