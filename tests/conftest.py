"""Shared fixtures: the array backends every numeric test runs over."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# The fixture recorder imports torch and the peers: it is run by hand, never collected.
collect_ignore = ["fixtures/make_peer_fixtures.py", "fixtures/make_model_fixtures.py", "fixtures/make_timm_fixtures.py"]

settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True)
settings.load_profile(os.environ.get("PEMATH_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


def _cupy_or_skip():
    try:
        cp = importlib.import_module("cupy")
    except ImportError:
        pytest.skip("CuPy is not installed (pip install 'pemath[cuda12]' on a machine with an NVIDIA GPU)")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy is installed but no CUDA device is present")
    except Exception as exc:  # no driver
        pytest.skip(f"CuPy is installed but CUDA is unavailable: {exc}")
    return cp


BACKENDS = [
    "numpy",
    "array_api_strict",
    pytest.param("torch", marks=pytest.mark.torch),
    pytest.param("cupy", marks=pytest.mark.gpu),
]


@pytest.fixture(params=BACKENDS)
def xp(request):
    """An array namespace: NumPy, array-api-strict (the CuPy stand-in), torch, CuPy."""
    name = request.param
    if name == "cupy":
        return _cupy_or_skip()
    if name == "torch":
        torch = pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")
        from array_api_compat import torch as xp_torch

        del torch
        return xp_torch
    if name == "numpy":
        from array_api_compat import numpy as xp_numpy

        return xp_numpy
    return importlib.import_module(name)


def to_np(a) -> np.ndarray:
    """Any backend's array as NumPy (test helper)."""
    from pemath._compat import to_numpy

    return np.asarray(to_numpy(a))


@pytest.fixture
def no_shrink():
    """Hypothesis without shrinking: a wrong implementation fails at once, no minimal example needed."""
    from hypothesis import Phase

    saved = settings.default
    settings.register_profile("pemath-no-shrink", parent=saved, phases=[Phase.explicit, Phase.reuse, Phase.generate])
    settings.load_profile("pemath-no-shrink")
    yield
    settings.register_profile("pemath-restored", parent=saved)
    settings.load_profile("pemath-restored")
