"""The built site against axe-core's WCAG 2.0 and 2.1 A and AA rules, in each edition, with no violation.

axe-core comes bundled in the `axe-playwright-python` package (the test extra) and runs in Debian's chromium,
driven by Playwright as in test_browser.py, offline: the site is served on 127.0.0.1 and any other request fails.
The rules are axe's tags wcag2a, wcag2aa, wcag21a and wcag21aa, plus `label-content-name-mismatch` (WCAG 2.5.3,
"Label in Name"), which axe files as experimental and so leaves out unless asked for by name: a control whose
visible text is not part of its accessible name (a speech-input user says what they see, and nothing happens).

Each page is checked as a reader finds it (after MathJax has typeset it) and, on a chapter, once more with a folded
code cell opened, so the "Hide code cell source" state is checked too. The Chinese editions are checked in their
own language: a control's name must hold the text the page shows, not the English one.
"""

import pytest

from book_site import served

pytestmark = pytest.mark.browser

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
EXTRA_RULES = ["label-content-name-mismatch"]
# The home page of each edition, and a chapter with folded code cells in English and in Chinese (the two Chinese
# editions share their templates and the accessible names' script, so one of them stands for both).
PAGES = ["intro.html", "zh_TW/intro.html", "zh_CN/intro.html",
         "chapters/02_sequence_labeling.html", "zh_TW/chapters/02_sequence_labeling.html"]
SETTLE_JS = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  // An opened cell fades in (myst-nb's 0.3 s animation): check the text as it ends up, not half-faded.
  await Promise.all(document.getAnimations()
    .filter(a => a.effect && a.effect.getTiming().iterations !== Infinity).map(a => a.finished.catch(() => null)));
}
"""


@pytest.fixture(scope="module")
def base_url(site):
    with served(site) as url:
        yield url


@pytest.fixture(scope="module")
def axe():
    module = pytest.importorskip("axe_playwright_python.sync_playwright",
                                 reason="axe-playwright-python (the test extra) is not installed")
    return module.Axe()


@pytest.fixture(scope="module")
def page(base_url, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.route(lambda url: not url.startswith(base_url), lambda route: route.abort("blockedbyclient"))
    yield context.new_page()
    context.close()


def _violations(axe, page, context=None):
    options = {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"],
               "rules": {rule: {"enabled": True} for rule in EXTRA_RULES}}
    results = axe.run(page, context=context, options=options).response
    return [f"{v['id']} ({v['impact']}): {v['help']}\n" + "\n".join(
        f"    {n['html'][:160]}\n      {n['failureSummary'].splitlines()[-1].strip()}" for n in v["nodes"][:4])
        for v in results["violations"]]


def test_axe_runs_the_label_in_name_rule(axe, page, base_url):
    """The extra rule really runs: on a page of our own where the name misses the visible text, it fails."""
    page.goto(base_url + "intro.html")
    page.evaluate("""() => { const b = document.createElement('button');
        b.textContent = 'Show code'; b.setAttribute('aria-label', 'Toggle'); document.body.prepend(b); }""")
    found = _violations(axe, page)
    assert any(v.startswith("label-content-name-mismatch") for v in found), found


@pytest.mark.parametrize("path", PAGES)
def test_page_has_no_wcag_violation(axe, page, base_url, path):
    page.goto(base_url + path)
    page.evaluate(SETTLE_JS)
    found = _violations(axe, page)
    assert not found, f"{path} as loaded:\n" + "\n".join(found)
    folded = page.locator("details.hide summary")
    if "chapters/" in path:
        assert folded.count() > 0, f"{path} has no folded code cell: choose a chapter that has one"
        folded.first.click()
        page.evaluate(SETTLE_JS)
        found = _violations(axe, page, context="details.hide[open]")  # the rest of the page was checked above
        assert not found, f"{path} with a folded cell opened:\n" + "\n".join(found)
