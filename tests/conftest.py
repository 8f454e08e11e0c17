"""Shared test set-up.

Tests that need an optional tool (torch, chromium, the built site) skip with a reason on a
developer's machine. In CI (the environment variable CI is set, as `.ci/run` does) every
tool is installed, so a skip means something is missing: it is turned into a failure.
"""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent

# One Hypothesis profile for every file, whether it runs alone or in the suite: 60 examples, no deadline
# (a shared machine makes timings noisy). A test that needs fewer or more examples says so with @settings.
settings.register_profile("book", max_examples=60, deadline=None)
settings.load_profile("book")

#: Any seed of numpy's default_rng.
seeds = st.integers(0, 2**32 - 1)


@st.composite
def attention_case(draw, max_n=7, even_d=False):
    """Random (I, W_q, W_k, W_v, scale) of consistent shapes, values in a moderate range.

    With ``even_d`` the size d is even (a sinusoidal table of size d exists) and N >= 2 (a
    permutation other than the identity exists).
    """
    d = 2 * draw(st.integers(1, 3)) if even_d else draw(st.integers(1, 5))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    N = draw(st.integers(2 if even_d else 1, max_n))
    r = np.random.default_rng(draw(seeds))
    scale = draw(st.sampled_from([1.0, 1 / np.sqrt(d_k), 0.1, 3.0]))
    size = draw(st.sampled_from([0.1, 1.0, 5.0]))
    return (size * r.normal(size=(d, N)), r.normal(size=(d_k, d)), r.normal(size=(d_k, d)),
            r.normal(size=(d_v, d)), scale)


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


@pytest.fixture(scope="session")
def browser():
    """One headless Debian chromium per test process, shared by every browser test: Playwright's sync API runs one
    event loop per thread, so a second `sync_playwright()` in the same process would fail."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not installed (it is in the `test` extra)")
    from book_site import CHROMIUM_ARGS, find_chromium

    chromium_path = find_chromium()
    if not chromium_path:
        pytest.skip("chromium is not on the PATH: install Debian's chromium (`apt-get install chromium`)")
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
    except Exception as error:  # noqa: BLE001 - say why the browser did not start
        playwright.stop()
        pytest.fail(f"{chromium_path} did not start: {error}")
    yield chromium
    chromium.close()
    playwright.stop()
