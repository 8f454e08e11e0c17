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
