"""The three built editions (`make test` builds them before these run): each complete, in its own language, every
page linked to itself in the other two, and the terms that differ across the strait in the right form."""

import re

import pytest
from book_site import TRANSLATIONS

EDITIONS = {"en": "", **{lang: lang + "/" for lang in TRANSLATIONS}}  # edition -> its folder in the site
LANG = re.compile(r"<html[^>]*\blang=\"([^\"]+)\"")
BAR = re.compile(r'<nav class="edition-links"[^>]*>(.*?)</nav>', re.S)
HREF = re.compile(r'href="([^"]+)"')


def edition_pages(site, edition):
    folder = site / EDITIONS[edition] if EDITIONS[edition] else site
    skip = {"_static", "_sources", "_images", *TRANSLATIONS}
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html")
                  if not skip.intersection(p.relative_to(folder).parts[:-1]) and p.name != "index.html")


@pytest.fixture(scope="module")
def english_pages(site):
    pages = edition_pages(site, "en")
    assert "chapters/01_inputs_and_outputs.html" in pages
    return pages


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_each_edition_has_every_page(site, english_pages, edition):
    missing = sorted(set(english_pages) - set(edition_pages(site, edition)))
    assert not missing, f"the {edition} edition lacks {missing}"


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_every_page_declares_its_language_and_links_the_others(site, english_pages, edition):
    folder = site / EDITIONS[edition]
    for page in english_pages:
        html = (folder / page).read_text(encoding="utf-8")
        assert LANG.search(html).group(1) == edition.replace("_", "-"), f"{edition}/{page}: wrong <html lang>"
        bar = BAR.search(html)
        assert bar, f"{edition}/{page} has no links to the other editions"
        links = HREF.findall(bar.group(1))
        assert len(links) == 2, f"{edition}/{page}: {links}"
        for link in links:
            target = (folder / page).parent / link
            assert target.resolve().is_file(), f"{edition}/{page} links to {link}, which does not exist"
            assert target.resolve().as_posix().endswith("/" + page), f"{edition}/{page}: {link} is another page"


def visible_text(html):
    """The page's prose: scripts, styles, code and outputs (shared by the editions) and the editions bar left out."""
    body = re.sub(r"<(script|style|pre|nav)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


@pytest.mark.parametrize("edition, row, column", [("zh_TW", "列向量", "行向量"), ("zh_CN", "行向量", "列向量")])
def test_row_and_column_vectors_are_named_as_each_side_of_the_strait_does(site, edition, row, column):
    text = re.sub(r"\s+", " ", visible_text((site / edition / "glossary.html").read_text(encoding="utf-8")))
    assert re.search(rf"{row}\s*[#¶]?\s*· row vector", text), f"{edition}: the row vector is not {row}"
    assert re.search(rf"{column}\s*[#¶]?\s*· column vector", text), f"{edition}: the column vector is not {column}"


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_chapters_read_in_chinese(site, edition):
    for page in sorted((site / edition / "chapters").glob("*.html")):
        text = visible_text(page.read_text(encoding="utf-8"))
        han = len(re.findall(r"[\u4e00-\u9fff]", text))
        assert han > 1000, f"{edition}/chapters/{page.name} has only {han} Chinese characters: not translated?"


def test_simplified_edition_shows_no_traditional_only_characters(site):
    opencc = pytest.importorskip("opencc")
    t2s = opencc.OpenCC("t2s")
    for page in ["intro.html", "glossary.html", "chapters/04_matrix_form.html"]:
        text = visible_text((site / "zh_CN" / page).read_text(encoding="utf-8"))
        chinese = "".join(re.findall(r"[\u4e00-\u9fff]+", text))
        changed = sorted({a for a, b in zip(chinese, t2s.convert(chinese)) if a != b})
        assert not changed, f"zh_CN/{page} shows Traditional characters: {changed[:20]}"


def _html_without_scripts(page):
    return re.sub(r"<(script|style)\b.*?</\1>", " ", page.read_text(encoding="utf-8"), flags=re.S)


def _pages(site, edition):
    return [site / edition / page for page in edition_pages(site, edition)]


# The words of the page frame (the themes', the extensions' and the book's own) that an edition must show in its
# language. The printed contents' <nav aria-label="Page"> is not here: _static/accessible-names.js names it in the
# page's language in the browser.
UI_WORDS = [
    'aria-label="Color mode"', 'title="System Settings"', 'title="Toggle primary sidebar"',
    'title="Toggle secondary sidebar"', 'aria-label="Main"', 'aria-label="Editions"', "Show code cell source",
    "Hide code cell source", "Solution to", ">Exercise ", "Link to this heading", "Download the book as PDF",
    "Download every chapter", ">The lecture<", ">Beyond the lecture<", ">Reference<", "companion authors",
    "Copyright", "Search this book", "previous page", "next page", "Skip to main content", "Back to top",
    "Link to this image", 'title="Print to PDF"', 'subtitle">previous<', 'subtitle">next<', "Toggle hidden content",
]
# Words of the page frame that a theme's catalog gives in the other Chinese (pydata-sphinx-theme's zh_TW falls back
# to its Simplified catalog; sphinx-book-theme's zh_CN has Taiwan's 列印; Sphinx's zh_TW calls a heading a 標頭, a
# page header), which ui.po corrects: {edition: words}.
OTHER_CHINESE_FRAME_WORDS = {"zh_TW": ["上一页", "下一页", "連結到這個標頭"], "zh_CN": ["列印"]}


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_no_english_words_in_the_page_frame(site, edition):
    found = {}
    for page in _pages(site, edition):
        html = _html_without_scripts(page)
        for word in UI_WORDS:
            if word in html:
                found.setdefault(word, page.name)
    assert not found, f"{edition}: English words of the page frame (word: first page): {found}"


SUMMARY = re.compile(r"<details class=\"admonition hide[^\"]*\">\s*<summary([^>]*)>(.*?)</summary>", re.S)


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_folded_cells_are_named_by_the_words_they_show(site, edition):
    """A folded code cell's toggle (myst-nb's <summary>) carries no aria-label as served (tools/accessible_names.py):
    its name is the prompt it shows, in the edition's language. myst-nb's own label, "Toggle hidden content", was
    English in every edition and not the text shown (WCAG 2.1, 2.5.3 "Label in Name")."""
    toggles, labelled, english = 0, {}, {}
    folder = site / EDITIONS[edition]
    for page in [folder / name for name in edition_pages(site, edition)]:
        html = page.read_text(encoding="utf-8")
        if "Toggle hidden content" in html:
            english.setdefault(page.name, html.count("Toggle hidden content"))
        for attributes, content in SUMMARY.findall(html):
            toggles += 1
            shown = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content)).strip()
            assert shown, f"{edition}/{page.name}: a folded cell's toggle shows no text"
            if "aria-label" in attributes:
                labelled.setdefault(page.name, attributes.strip())
    assert toggles > 0, f"{edition}: no folded code cell found: the pattern no longer matches myst-nb's HTML"
    assert not english, f"{edition}: pages that still say 'Toggle hidden content' (page: count): {english}"
    assert not labelled, f"{edition}: folded cells' toggles with an aria-label (page: its attributes): {labelled}"


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_the_page_frame_speaks_the_editions_chinese(site, edition):
    found = {}
    for page in _pages(site, edition):
        html = _html_without_scripts(page)
        for word in OTHER_CHINESE_FRAME_WORDS.get(edition, []):
            if word in html:
                found.setdefault(word, page.name)
    assert not found, f"{edition}: the page frame uses the other side's words (word: first page): {found}"


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_a_prime_stays_a_prime(site, edition):
    # Smartquotes would turn the ' of N' and A' into a closing quote: 』 in a zh_TW font, ’ in zh_CN.
    for page in _pages(site, edition):
        bad = re.findall(r"\w[』’]", _html_without_scripts(page))
        assert not bad, f"{edition}/{page.name}: a prime drawn as a quote: {bad[:5]}"


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_every_figure_is_described_in_the_edition_language(site, edition):
    count = 0
    for page in _pages(site, edition):
        for img in re.findall(r"<img\b[^>]*>", _html_without_scripts(page)):
            alt = re.search(r'\balt="([^"]*)"', img)
            assert alt and re.search(r"[\u4e00-\u9fff]", alt.group(1)), f"{edition}/{page.name}: {img[:120]}"
            count += 1
    assert count >= 30, f"{edition}: only {count} figures"


@pytest.mark.parametrize("edition", TRANSLATIONS)
def test_captions_and_chapter_table_are_translated(site, edition):
    html = (site / edition / "intro.html").read_text(encoding="utf-8")
    captions = re.findall(r'class="caption-text">([^<]*)<', html)
    assert len(captions) >= 3 and all(re.search(r"[\u4e00-\u9fff]", c) for c in captions), captions
    chapters = re.findall(r"<td><p>(\d+\. [^<]*)</p>", html)
    assert len(chapters) >= 10 and all(re.search(r"[\u4e00-\u9fff]", c) for c in chapters), chapters
