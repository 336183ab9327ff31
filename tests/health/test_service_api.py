"""``health.services`` is the app's service API: callers use the package, not its modules."""

from __future__ import annotations

import importlib
import types

from health import services as health


def test_every_exported_name_exists():
    assert [name for name in health.__all__ if not hasattr(health, name)] == []


def test_the_ingest_module_keeps_its_name():
    """The package re-exports ingest_payload and ingest_csv, not ``ingest``, so
    ``health.services.ingest`` stays the module."""
    module = importlib.import_module("health.services.ingest")
    assert isinstance(health.ingest, types.ModuleType) and health.ingest is module
    assert "ingest" not in health.__all__
