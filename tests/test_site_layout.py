"""The page header as a reader first sees it, on a desktop and on a phone: Debian's chromium through Playwright.

Every page's article header holds, at its start, the button that opens or folds the table of contents (☰) and the
bar naming the book's three editions; at its end, the download, theme, search and contents buttons. The tests open
the built site (served on 127.0.0.1, offline, as tests/test_browser.py does) at 1280 px and at 420 px and measure
where these land: the ☰ button lies wholly inside the window and inside its header, and nothing in the header
covers anything else. Skips without playwright, chromium or the built site (a failure in CI, see conftest.py).
"""

import pytest

from book_site import served
from test_browser import _offline_context

pytestmark = pytest.mark.browser

WIDTHS = (1280, 420)
# The home page, a chapter, a reference page, and a chapter of each Chinese edition (its bar names other links).
PAGES = ("intro.html", "chapters/03_dot_product_attention.html", "glossary.html",
         "zh_TW/chapters/03_dot_product_attention.html", "zh_CN/intro.html")

MEASURE_JS = """
() => {
  const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, top: r.top, right: r.right,
                                                                       bottom: r.bottom, width: r.width}; };
  const header = document.querySelector(".bd-header-article");
  const toggles = Array.from(document.querySelectorAll(".bd-header-article .primary-toggle"))
      .filter(el => el.checkVisibility());
  const parts = [".bd-header-article .primary-toggle", ".bd-header-article .edition-links",
                 ".bd-header-article .header-article-items__end"]
      .map(selector => document.querySelector(selector)).filter(el => el && el.checkVisibility());
  return {
    window: {width: document.documentElement.clientWidth, height: window.innerHeight},
    header: header ? box(header) : null,
    toggles: toggles.map(box),
    parts: parts.map(el => ({name: el.className, box: box(el)})),
  };
}
"""


@pytest.fixture(scope="module")
def base_url(site):
    with served(site) as url:
        yield url


@pytest.fixture(scope="module")
def measured(site, base_url, browser):
    """{(width, page): what MEASURE_JS reports}, for every width and page."""
    missing = [page for page in PAGES if not (site / page).exists()]
    if missing:
        pytest.skip(f"pages not built: {missing} (`make book` builds the site and both editions)")
    out, blocked = {}, []
    for width in WIDTHS:
        context = _offline_context(browser, base_url, blocked, viewport={"width": width, "height": 800})
        tab = context.new_page()
        for page in PAGES:
            tab.goto(base_url + page, wait_until="load")
            out[width, page] = tab.evaluate(MEASURE_JS)
        context.close()
    assert not blocked, f"the pages asked other hosts for {blocked}"
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sidebar_button_is_wholly_visible(measured, width):
    problems = []
    for (w, page), m in measured.items():
        if w != width:
            continue
        if len(m["toggles"]) != 1:
            problems.append(f"{page}: {len(m['toggles'])} visible ☰ buttons in the article header, not 1")
            continue
        button, header, window = m["toggles"][0], m["header"], m["window"]
        if button["top"] < 0 or button["left"] < 0 or button["right"] > window["width"] or button["bottom"] > window["height"]:
            problems.append(f"{page}: the ☰ button {button} sticks out of the {window['width']} px window")
        if button["top"] < header["top"] - 0.5 or button["bottom"] > header["bottom"] + 0.5:
            problems.append(f"{page}: the ☰ button (top {button['top']:.1f}, bottom {button['bottom']:.1f}) sticks out "
                            f"of its header (top {header['top']:.1f}, bottom {header['bottom']:.1f})")
    assert not problems, f"at {width} px:\n" + "\n".join(problems)


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_in_the_header_covers_anything_else(measured, width):
    problems = []
    for (w, page), m in measured.items():
        if w != width:
            continue
        parts = m["parts"]
        assert len(parts) == 3, f"{page}: the header shows {[p['name'] for p in parts]}"
        for i, a in enumerate(parts):
            for b in parts[i + 1:]:
                overlap_x = min(a["box"]["right"], b["box"]["right"]) - max(a["box"]["left"], b["box"]["left"])
                overlap_y = min(a["box"]["bottom"], b["box"]["bottom"]) - max(a["box"]["top"], b["box"]["top"])
                if overlap_x > 0.5 and overlap_y > 0.5:
                    problems.append(f"{page}: {a['name']!r} and {b['name']!r} overlap by {overlap_x:.1f} x {overlap_y:.1f} px")
            if a["box"]["right"] > m["window"]["width"] + 0.5:
                problems.append(f"{page}: {a['name']!r} ends at {a['box']['right']:.1f} px, past the window")
    assert not problems, f"at {width} px:\n" + "\n".join(problems)
