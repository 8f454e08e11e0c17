"""The built site in a real browser: Debian's chromium, driven by Playwright, offline.

`make test` builds _build/html first; these tests serve it on 127.0.0.1 and open every page once, in one
headless browser, with every request to another host routed to a failure. On each page they record what a
reader would notice: errors in the console, failed requests, maths MathJax did not typeset, images that do
not load or have no alt text, broken internal links, the page in dark mode and on a phone, where the article
header's parts lie on a desktop and on a phone, and, on chapter pages, the lecture position, the download-as-.ipynb
link, the folded plotting code and the numbered figures.
The tests below then assert on those records. The crawl waits for what it measures (MathJax, images, the
theme's switch to dark, the layout's transitions on a phone) explicitly; it takes no screenshots, since no test
looks at one.

Playwright never downloads a browser here: it drives Debian's chromium from the PATH (`apt-get install chromium`).
Without the playwright package or chromium the tests skip with the reason (a failure in CI, see conftest.py).
"""

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from book_site import CHROMIUM_ARGS, PDF_NAME, TRANSLATIONS, find_chromium, off_site, served

pytestmark = pytest.mark.browser

CHROMIUM = find_chromium()
# Every search control of the themes: the sidebar's search field, the header's magnifier, an inline form.
SEARCH_CONTROLS = ".search-button-field, .search-button, form.bd-search input"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}  # a small phone, portrait
HEADER_WIDTHS = (DESKTOP["width"], PHONE["width"])
TIMEOUT_MS = 20_000
FIG_NUMBER = re.compile(r"Fig\. \d+(\.\d+)*")

# Runs in each page once it has loaded: waits for MathJax and the images, then reports.
INSPECT_JS = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const images = Array.from(document.images);
  for (const img of images) { img.loading = "eager"; }
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  const maths = Array.from(document.querySelectorAll(".math"));
  const text = el => (el ? el.textContent : "").trim();
  const lecture = Array.from(document.querySelectorAll("article .admonition"))
      .find(el => text(el.querySelector(".admonition-title")) === "In the lecture");
  const firstSection = document.querySelector("article h2");
  const hidden = Array.from(document.querySelectorAll(".cell.tag_hide-input"));
  const download = document.querySelector("a.btn-download-source-button");
  const shown = el => el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const icon = document.querySelector("link[rel~='icon']");
  return {
    icon: icon ? icon.href : null,
    search_boxes: Array.from(document.querySelectorAll(SEARCH_CONTROLS)).filter(shown)
        .map(el => el.tagName.toLowerCase() + "." + Array.from(el.classList).join(".")),
    title: document.title,
    headings: Array.from(document.querySelectorAll("article.bd-article h1, nav.bd-docs-nav a.reference"))
        .map(el => el.innerText.trim()),
    ids: Array.from(document.querySelectorAll("[id], a[name]")).map(el => el.id || el.getAttribute("name")),
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
    math_total: maths.length,
    math_untypeset: maths.filter(el => !el.querySelector("mjx-container")).map(el => text(el).slice(0, 80)),
    math_errors: maths.filter(el => el.querySelector("mjx-merror")).map(el => text(el).slice(0, 80)),
    images: images.map(img => ({src: img.currentSrc || img.src, alt: (img.getAttribute("alt") || "").trim(),
                                ok: img.complete && img.naturalWidth > 0})),
    // chapter features
    lecture: lecture ? {text: lecture.innerText, visible: lecture.getBoundingClientRect().height > 0,
                        first: !firstSection ||
                               lecture.getBoundingClientRect().top < firstSection.getBoundingClientRect().top} : null,
    download: download ? download.getAttribute("href") : null,
    hidden_cells: hidden.length,
    hidden_code_shown: hidden.filter(el => {
        const pre = el.querySelector(".cell_input pre"); return pre && pre.checkVisibility();
    }).length,
    figures: Array.from(document.querySelectorAll("article figure")).map(fig => ({
        id: fig.id, number: text(fig.querySelector(".caption-number")), caption: text(fig.querySelector(".caption-text"))})),
    numrefs: Array.from(document.querySelectorAll("a.reference")).filter(a => a.querySelector(".std-numref"))
        .map(a => ({href: a.href, text: text(a)})),
  };
}
""".replace("SEARCH_CONTROLS", json.dumps(SEARCH_CONTROLS))

# Runs in a page after the system colour scheme changed: the theme's data-theme, once it has followed (<= 2 s).
DARK_JS = """
async () => {
  for (let i = 0; i < 40 && document.documentElement.dataset.theme !== "dark"; i++) {
    await new Promise(done => setTimeout(done, 50));
  }
  return document.documentElement.dataset.theme;
}
"""

# Runs in a page on the phone viewport: is the document wider than the screen, and what sticks out. It first waits
# for the new layout and for every transition it started (the sidebar slides out) to finish.
PHONE_JS = """
async () => {
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  await Promise.all(document.getAnimations().map(animation => animation.finished.catch(() => null)));
  const width = document.documentElement.clientWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  const wide = [];
  if (scrollWidth > width + 1) {
    for (const el of document.querySelectorAll("body *")) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 1) continue;
      let clipped = false;  // inside something that scrolls or clips sideways: fine
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(p).overflowX)) { clipped = true; break; }
      }
      if (!clipped) wide.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
                              (el.classList.length ? "." + el.classList[0] : ""));
      if (wide.length >= 5) break;
    }
  }
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  const titles = Array.from(document.querySelectorAll("article.bd-article h1")).filter(h => h.checkVisibility());
  const search = Array.from(document.querySelectorAll(SEARCH_CONTROLS))
      .filter(el => el.checkVisibility() && el.getBoundingClientRect().width > 0).length;
  const inside = h => { const box = h.getBoundingClientRect(); return box.left >= 0 && box.right <= width + 1; };
  return {width, scroll_width: scrollWidth, wide, search,
          article_width: article ? article.getBoundingClientRect().width : 0,
          title_shown: titles.length === 0 || titles.every(inside)};
}
""".replace("SEARCH_CONTROLS", json.dumps(SEARCH_CONTROLS))


# Runs in a page: where the article header's parts lie (the ☰ button that opens the table of contents, the bar of
# the three editions, the buttons at its end), in the window of the moment.
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


@dataclass
class PageReport:
    """What one page did in the browser."""

    path: str
    console_errors: list = field(default_factory=list)
    page_errors: list = field(default_factory=list)
    failed_requests: list = field(default_factory=list)
    other_hosts: list = field(default_factory=list)
    info: dict = field(default_factory=dict)
    dark_theme: str = ""
    phone: dict = field(default_factory=dict)
    download_visible: bool = False
    notebook: object = None  # the parsed .ipynb behind the download link, or an error message
    hidden_code_opens: bool = False
    header: dict = field(default_factory=dict)  # {window width: what MEASURE_JS reported}


def _site_pages(site):
    """Every HTML page a reader can reach, relative to the site (editions included); each index.html (the site's,
    an edition's) only redirects to its intro.html."""
    skip = {"_static", "_sources", "_images"}
    pages = sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if not skip.intersection(p.relative_to(site).parts)
    )
    return [p for p in pages if p.rsplit("/", 1)[-1] != "index.html"]


# The Chinese editions are the English pages with other words: the crawl opens every English page and, of each
# edition, the home page and a chapter (tests/test_editions_site.py reads every edition page as HTML).
EDITION_SAMPLES = ("intro.html", "chapters/03_dot_product_attention.html")


def _crawled_pages(site):
    """Every English page, and each edition's EDITION_SAMPLES."""
    editions = tuple(lang + "/" for lang in TRANSLATIONS)
    return [p for p in _site_pages(site) if not p.startswith(editions) or p.split("/", 1)[1] in EDITION_SAMPLES]


@pytest.fixture(scope="session")
def base_url(site):
    """The built site, served over HTTP on a free port of 127.0.0.1 for the whole session."""
    with served(site) as url:
        yield url


def _offline_context(browser, base_url, blocked, **options):
    """A browser context that may only talk to our server: any other request is failed and listed in `blocked`."""
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)

    def refuse(route):
        blocked.append(route.request.url)
        route.abort("blockedbyclient")

    context.route(off_site(base_url), refuse)  # only requests to other hosts reach Python, which fails them
    return context


def _watch(page, report, base_url):
    """Record console errors, uncaught exceptions and failed requests of one page into its report."""
    page.on("console", lambda m: m.type == "error" and report.console_errors.append(f"{m.text} ({m.location['url']})"))
    page.on("pageerror", lambda e: report.page_errors.append(str(e)))
    page.on("requestfailed", lambda r: r.url.startswith(base_url) and report.failed_requests.append(f"{r.url}: {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and report.failed_requests.append(f"{r.url}: HTTP {r.status}"))


@pytest.fixture(scope="session")
def crawl(site, base_url, browser):
    """Open every page once, check it as a reader would, and keep a report per page.

    Each page is loaded once on a desktop viewport; on chapter pages the download menu and one folded cell
    are then clicked open, and the same tab is switched to a dark system colour scheme and to a phone-sized
    viewport (no reload: the theme and the layout follow live).
    """
    blocked = []  # requests to other hosts made outside our tabs (by a worker, say): none are expected either
    context = _offline_context(browser, base_url, blocked, viewport=DESKTOP, color_scheme="light")
    reports = {path: PageReport(path) for path in _crawled_pages(site)}
    assert reports, "the built site has no pages"

    for path, report in reports.items():
        page = context.new_page()  # a fresh tab per page, so that each report gets only its own events
        _watch(page, report, base_url)
        page.route(off_site(base_url),
                   lambda route, r=report: (r.other_hosts.append(route.request.url), route.abort("blockedbyclient")))
        page.goto(base_url + path, wait_until="load")
        report.info = page.evaluate(INSPECT_JS)  # waits for MathJax and the images
        report.header[DESKTOP["width"]] = page.evaluate(MEASURE_JS)

        if report.info["download"]:
            page.locator(".dropdown-download-buttons button.dropdown-toggle").click()
            report.download_visible = page.locator("a.btn-download-source-button").is_visible()
            page.keyboard.press("Escape")  # close the menu again
            response = page.request.get(urllib.parse.urljoin(base_url + path, report.info["download"]))
            try:
                report.notebook = json.loads(response.body()) if response.ok else f"HTTP {response.status}"
            except ValueError as error:
                report.notebook = f"not JSON: {error}"
        if report.info["hidden_cells"]:
            cell = page.locator(".cell.tag_hide-input").first
            cell.locator("summary").first.click()
            report.hidden_code_opens = cell.locator(".cell_input pre").is_visible()
            page.evaluate("window.scrollTo(0, 0)")

        page.emulate_media(color_scheme="dark")  # the theme starts in "auto" mode: it follows the system
        report.dark_theme = page.evaluate(DARK_JS)  # waits (up to 2 s) for the theme to follow
        page.emulate_media(color_scheme="light")

        page.set_viewport_size(PHONE)
        report.phone = page.evaluate(PHONE_JS)  # waits for the sidebar's slide-out transition to end
        report.header[PHONE["width"]] = page.evaluate(MEASURE_JS)
        page.close()
    context.close()
    if blocked:
        next(iter(reports.values())).other_hosts.extend(f"{url} (outside any tab)" for url in blocked)
    return reports


def _fmt(found):
    return "\n".join(f"  {path}: {item}" for path, items in found.items() for item in items)


# Every page


def test_no_request_leaves_the_site(crawl):
    found = {p: r.other_hosts for p, r in crawl.items() if r.other_hosts}
    assert not found, "pages tried to load from other hosts (the requests were failed):\n" + _fmt(found)


def test_no_failed_request(crawl):
    found = {p: r.failed_requests for p, r in crawl.items() if r.failed_requests}
    assert not found, "requests to the site failed:\n" + _fmt(found)


def test_no_javascript_error(crawl):
    found = {p: r.page_errors + r.console_errors for p, r in crawl.items() if r.page_errors or r.console_errors}
    assert not found, "the browser reported errors:\n" + _fmt(found)


def test_every_math_element_is_typeset(crawl):
    found = {p: r.info["math_untypeset"] + r.info["math_errors"] for p, r in crawl.items()
             if r.info["math_untypeset"] or r.info["math_errors"]}
    assert not found, "maths MathJax did not typeset, or typeset as an error:\n" + _fmt(found)
    assert sum(r.info["math_total"] for r in crawl.values()) > 0, "no maths anywhere: is MathJax wired up?"


def test_every_image_loads_and_has_alt_text(crawl):
    found = {}
    for path, report in crawl.items():
        for img in report.info["images"]:
            problems = []
            if not img["ok"]:
                problems.append("does not load")
            if not img["alt"]:
                problems.append("has no alt text")
            elif re.search(r"\.(png|jpe?g|svg|gif)$", img["alt"], re.I):
                problems.append(f"has a file name for alt text ({img['alt']})")
            if problems:
                found.setdefault(path, []).append(f"{img['src']} " + ", ".join(problems))
    assert not found, "images:\n" + _fmt(found)


def test_every_internal_link_resolves(crawl, base_url, site):
    ids = {base_url + path: set(r.info["ids"]) for path, r in crawl.items()}
    # The home page (of each edition) links to the printed book, which `make pdf` copies in after the site is
    # built; until it has been printed that link has no file (test_home_page_offers_the_pdf checks it once it is).
    def unprinted(url):
        return url.endswith("/" + PDF_NAME) and not (site / url.removeprefix(base_url)).exists()

    status = {}
    found = {}
    for path, report in crawl.items():
        for href in report.info["links"]:
            if not href.startswith(base_url):
                continue
            url, _, fragment = href.partition("#")
            if url.endswith("/"):
                url += "index.html"
            if url not in status:
                try:
                    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as response:
                        status[url] = response.status
                except urllib.error.HTTPError as error:
                    status[url] = error.code
            if status[url] != 200 and not unprinted(url):
                found.setdefault(path, []).append(f"{href}: HTTP {status[url]}")
            elif fragment and url in ids and urllib.parse.unquote(fragment) not in ids[url]:
                found.setdefault(path, []).append(f"{href}: no element with id {fragment!r}")
    assert not found, "broken internal links:\n" + _fmt(found)


def test_titles_read_cleanly(crawl):
    """A chapter's number comes from _toc.yml, once ("3. Title", not "3. 3. Title"); a tab's title has no TeX."""
    problems = set()
    for path, report in crawl.items():
        if "\\(" in report.info["title"] or "$" in report.info["title"]:
            problems.add(f"{path}: TeX in the browser tab's title: {report.info['title']!r}")
        for heading in report.info["headings"]:  # the page's title and the table of contents in the sidebar
            if re.match(r"(\d+(\.\d+)*)\.? +\1\. ", heading):
                problems.add(f"numbered twice: {heading.removesuffix('#').strip()!r}")
    assert not problems, "titles:\n" + "\n".join(sorted(problems))


def test_every_page_has_the_books_icon(crawl, base_url):
    """A page without <link rel="icon"> makes the browser ask for /favicon.ico, which the site does not have."""
    icons = {r.info["icon"] for r in crawl.values()}
    missing = sorted(p for p, r in crawl.items() if not r.info["icon"])
    assert not missing, f"pages that declare no icon: {missing}"
    for icon in icons:
        with urllib.request.urlopen(icon, timeout=10) as response:
            kind, body = response.headers.get_content_type(), response.read()
        assert kind.startswith("image/") and body, f"{icon} is not an image: {kind}, {len(body)} bytes"


def test_one_search_box_on_a_wide_screen(crawl):
    found = {p: [f"{len(r.info['search_boxes'])} visible: {r.info['search_boxes']}"]
             for p, r in crawl.items() if len(r.info["search_boxes"]) != 1}
    assert not found, f"at {DESKTOP['width']} px a page should show exactly one search box:\n" + _fmt(found)


def test_search_is_reachable_on_a_phone(crawl):
    found = sorted(p for p, r in crawl.items() if r.phone["search"] < 1)
    assert not found, f"on a phone these pages show no search control: {found}"


def test_home_page_offers_the_pdf(browser, base_url, site, root):
    printed = root / "_build" / "pdf" / PDF_NAME
    blocked = []
    context = _offline_context(browser, base_url, blocked, viewport=DESKTOP)
    page = context.new_page()
    page.goto(base_url + "intro.html")
    link = page.get_by_role("link", name="Download the book as PDF")
    assert link.count() == 1 and link.is_visible(), "the home page has no visible 'Download the book as PDF' link"
    href = urllib.parse.urljoin(base_url + "intro.html", link.get_attribute("href"))
    context.close()
    assert href == base_url + PDF_NAME, f"the link points at {href}"
    if not printed.exists():
        pytest.skip(f"the book has not been printed ({printed.relative_to(root)} is missing): run `make pdf`")
    with urllib.request.urlopen(href, timeout=30) as response:
        kind, body = response.headers.get_content_type(), response.read()
    assert kind == "application/pdf", f"{href} is served as {kind}"
    assert body == printed.read_bytes(), f"the site's copy of the PDF differs from {printed.relative_to(root)}"


def test_dark_system_setting_gives_dark_pages(crawl):
    found = {p: [f"data-theme is {r.dark_theme!r}"] for p, r in crawl.items() if r.dark_theme != "dark"}
    assert not found, "with a dark system colour scheme these pages stayed light:\n" + _fmt(found)


def test_phone_viewport_shows_content_without_horizontal_scroll(crawl):
    found = {}
    for path, report in crawl.items():
        m = report.phone
        if m["scroll_width"] > m["width"] + 1:
            found.setdefault(path, []).append(
                f"the page is {m['scroll_width']}px wide on a {m['width']}px screen; sticking out: {m['wide']}")
        if m["article_width"] < 0.8 * m["width"] or not m["title_shown"]:
            found.setdefault(path, []).append(
                f"the content is not shown at full width ({m['article_width']:.0f}px) or its title is cut off")
    assert not found, "on a phone:\n" + _fmt(found)


# Site-wide features


# The page header as a reader first sees it: every article header holds, at its start, the button that opens or
# folds the table of contents (☰) and the bar naming the book's three editions; at its end, the download, theme,
# search and contents buttons. On a desktop and on a phone, the ☰ button lies wholly inside the window and inside its
# header, and nothing in the header covers anything else.


@pytest.mark.parametrize("width", HEADER_WIDTHS)
def test_the_sidebar_button_is_wholly_visible(crawl, width):
    problems = []
    for page, report in crawl.items():
        m = report.header[width]
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


@pytest.mark.parametrize("width", HEADER_WIDTHS)
def test_nothing_in_the_header_covers_anything_else(crawl, width):
    problems = []
    for page, report in crawl.items():
        m = report.header[width]
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


def test_search_finds_english_and_chinese_terms(browser, base_url):
    blocked = []
    context = _offline_context(browser, base_url, blocked, viewport=DESKTOP)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # As a reader does it: the search button in the header, type, Enter.
    page.goto(base_url + "intro.html")
    page.locator("button.search-button__button:visible").first.click()
    box = page.locator("#pst-search-dialog input[name=q]")
    box.fill("softmax")
    box.press("Enter")
    page.wait_for_url(re.compile(r"search\.html\?q=softmax"))
    results = {}
    for term in ("softmax", "注意力"):
        if term != "softmax":
            page.goto(base_url + "search.html?q=" + urllib.parse.quote(term))
        page.wait_for_function("(document.querySelector('#search-results .search-summary') || {}).textContent")
        results[term] = page.locator("#search-results ul.search > li a").all_inner_texts()
    context.close()
    assert not errors and not blocked, (errors, blocked)
    assert all(results.values()), f"search found nothing for some terms: {results}"


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_search_finds_chinese_terms_in_each_edition(browser, base_url, edition):
    blocked = []
    context = _offline_context(browser, base_url, blocked, viewport=DESKTOP)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    results = {}
    for term in ("注意力", "softmax"):
        page.goto(base_url + f"{edition}/search.html?q=" + urllib.parse.quote(term))
        page.wait_for_function("(document.querySelector('#search-results .search-summary') || {}).textContent")
        results[term] = page.locator("#search-results ul.search > li a").all_inner_texts()
    lang = page.evaluate("document.documentElement.lang")
    context.close()
    assert not errors and not blocked, (errors, blocked)
    assert lang == edition.replace("_", "-"), f"{edition}'s search page declares lang={lang!r}"
    assert all(results.values()), f"the {edition} search found nothing for some terms: {results}"


def test_edition_links_lead_to_the_same_page(browser, base_url):
    blocked = []
    context = _offline_context(browser, base_url, blocked, viewport=DESKTOP)
    page = context.new_page()
    visited = []
    page.goto(base_url + "run_it_yourself.html")  # a page with no maths: quick to load
    for name in ("繁體中文", "简体中文", "English"):
        page.locator("nav.edition-links a", has_text=name).first.click()
        page.wait_for_load_state()
        visited.append((page.url.removeprefix(base_url), page.evaluate("document.documentElement.lang"),
                        page.locator("h1").first.inner_text().rstrip("#¶ \n")))
    context.close()
    assert not blocked, blocked
    assert [(u, l) for u, l, _ in visited] == [
        ("zh_TW/run_it_yourself.html", "zh-TW"),
        ("zh_CN/run_it_yourself.html", "zh-CN"),
        ("run_it_yourself.html", "en"),
    ], visited
    assert [h for _, _, h in visited] == ["自己動手執行", "自己动手运行", "Run it yourself"], visited


def test_dark_mode_button_toggles_and_is_remembered(browser, base_url, crawl):
    blocked = []
    context = _offline_context(browser, base_url, blocked, viewport=DESKTOP, color_scheme="light")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base_url + "intro.html")
    html = page.locator("html")
    assert html.get_attribute("data-theme") == "light"
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    for _ in range(3):  # the button cycles through light, dark and auto
        if html.get_attribute("data-theme") == "dark":
            break
        page.locator("button.theme-switch-button:visible").first.click()
    assert html.get_attribute("data-theme") == "dark", "the colour-mode button never switched to dark"
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert _luminance(dark) < 0.2 < _luminance(light), f"background: light {light}, dark {dark}"
    chapter = next((p for p in crawl if p.startswith("chapters/")), "glossary.html")
    page.goto(base_url + chapter)  # the choice is remembered on the next page
    assert html.get_attribute("data-theme") == "dark", f"{chapter} forgot the dark mode"
    context.close()
    assert not errors and not blocked, (errors, blocked)


def _luminance(css_colour):
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css_colour)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_phone_menu_opens_the_table_of_contents(browser, base_url):
    blocked = []
    context = _offline_context(browser, base_url, blocked, viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(base_url + "intro.html")
    toc = page.locator("nav.bd-docs-nav a.reference:visible", has_text="Glossary")
    assert toc.count() == 0, "on a phone the table of contents should be folded away"
    page.locator("button.primary-toggle:visible").first.click()
    toc.first.wait_for(state="visible")
    context.close()
    assert not blocked, blocked


# Chapter pages


@pytest.fixture(scope="session")
def chapters(crawl, root):
    """The reports of the chapter pages: every page built from chapters/*.ipynb."""
    found = {p: r for p, r in crawl.items() if p.startswith("chapters/") and (root / p).with_suffix(".ipynb").exists()}
    if not found:
        pytest.fail("no chapter pages in the built site: chapters/*.ipynb should be listed in _toc.yml")
    return found


def test_chapters_download_as_their_notebook(chapters, root):
    problems = []
    for path, r in chapters.items():
        source = json.loads((root / path).with_suffix(".ipynb").read_text(encoding="utf-8"))
        if not (r.info["download"] or "").endswith(".ipynb"):
            problems.append(f"{path}: the download menu offers {r.info['download']!r}, not a .ipynb")
        elif not r.download_visible:
            problems.append(f"{path}: the .ipynb link does not show when the download menu is opened")
        elif not isinstance(r.notebook, dict):
            problems.append(f"{path}: {r.info['download']} is not a notebook: {r.notebook}")
        elif r.notebook.get("nbformat") != 4 or r.notebook.get("cells") != source["cells"]:
            problems.append(f"{path}: {r.info['download']} is not the chapter's notebook")
    assert not problems, "\n".join(problems)


def test_chapters_open_with_their_place_in_the_lecture(chapters):
    problems = []
    for path, r in chapters.items():
        box = r.info["lecture"]
        if not box or not box["visible"]:
            problems.append(f"{path}: no visible 'In the lecture' admonition")
        elif not box["first"]:
            problems.append(f"{path}: the 'In the lecture' admonition comes after the first section")
        elif not (re.search(r"[上下]", box["text"]) and re.search(r"slide", box["text"], re.I)) and not re.search(
            r"beyond", box["text"], re.I
        ):
            problems.append(f"{path}: the admonition names no lecture part (上/下) and slides: {box['text']!r}")
    assert not problems, "\n".join(problems)


def test_plotting_code_is_folded_one_click_away(chapters):
    problems = []
    for path, r in chapters.items():
        if r.info["hidden_code_shown"]:
            problems.append(f"{path}: {r.info['hidden_code_shown']} hide-input cells show their code before a click")
        if r.info["hidden_cells"] and not r.hidden_code_opens:
            problems.append(f"{path}: a hide-input cell does not show its code when clicked")
    assert not problems, "\n".join(problems)
    assert any(r.info["hidden_cells"] for r in chapters.values()), "no chapter folds its plotting code (hide-input)"


def test_figures_are_numbered_and_cross_referenced(chapters, base_url):
    numbers = {}  # figure URL -> "Fig. N" as its caption shows it
    problems = []
    for path, r in chapters.items():
        for fig in r.info["figures"]:
            if not FIG_NUMBER.fullmatch(fig["number"]):
                problems.append(f"{path}: figure {fig['id'] or '?'} is not numbered 'Fig. N': {fig['number']!r}")
            elif not fig["caption"]:
                problems.append(f"{path}: figure {fig['id']} has no caption")
            else:
                numbers[f"{base_url}{path}#{fig['id']}"] = fig["number"]
    refs = [(p, ref) for p, r in chapters.items() for ref in r.info["numrefs"] if ref["text"].startswith("Fig")]
    for path, ref in refs:
        if ref["href"] not in numbers:
            problems.append(f"{path}: {{numref}} {ref['text']!r} links to {ref['href']}, not a numbered figure")
        elif numbers[ref["href"]] not in ref["text"]:
            problems.append(f"{path}: {{numref}} says {ref['text']!r} but the figure is {numbers[ref['href']]!r}")
    assert not problems, "\n".join(problems)
    assert numbers, "no numbered figure in any chapter"
    assert refs, "no chapter refers to a figure with {numref}"
