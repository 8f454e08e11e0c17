"""Shared test set-up.

Tests that need an optional tool (torch, chromium, the built site) skip with a reason on a
developer's machine. In CI (the environment variable CI is set, as `.ci/run` does) every
tool is installed, so a skip means something is missing: it is turned into a failure.
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def in_ci():
    """True when running under `.ci/run` (CI=true), where skips are failures."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config, items):
    """Mark every test that uses the torch fixture `torch`, so a run without torch can deselect them by name."""
    for item in items:
        if "torch" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.torch)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every optional tool must be installed: {reason}"


@pytest.fixture(scope="session")
def root():
    """The project's top folder."""
    return ROOT


@pytest.fixture(scope="session")
def site(root):
    """The built site, _build/html (`make test` builds it before pytest runs)."""
    html = root / "_build" / "html"
    if not (html / "index.html").exists():
        pytest.skip("the site is not built: run `make book` (or `make test`, which builds it first)")
    return html


@pytest.fixture(scope="module")
def torch():
    """PyTorch, seeded; skips (a failure in CI) when the test extra is not installed."""
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed (the torch extra: make test TORCH=1)")
    torch.manual_seed(0)
    return torch
