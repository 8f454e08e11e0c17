"""The printed book, _build/pdf/<book_site.PDF_NAME> (`make pdf`, tools/print_pdf.py).

Read back with pypdf: it holds every page of _toc.yml (each title as a heading in the PDF's outline, so printed as a
heading, not only listed in the contents), the references the site lists, no TeX that MathJax left unconverted,
every Chinese term of the glossary, fonts that are all embedded, and a page count in proportion to the book.
Each Chinese edition built into the site (_build/html/zh_TW, ...) is printed too, beside it (book_site.edition_pdf),
and checked the same way (its titles are read from its own pages).
The pages' text comes from print_pdf.page_texts: read once when the book is printed and kept under the PDF's hash.
Skips when chromium (which prints it) or the PDF is missing; in CI, which builds it, a skip is a failure.
"""

import html
import json
import re
import unicodedata

import pytest

import print_pdf
from book_site import ROOT, SITE, edition_pdf, find_chromium

EDITIONS = ["en", *(print_pdf.editions(SITE) if SITE.is_dir() else {})]
# TeX that must have been typeset: the delimiters and the commands the book's formulas use.
RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\(frac|begin|end|mathrm|mathbf|top|sum|sqrt|alpha|cdots|operatorname)\b")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def squash(text):
    """Text for comparison: compatibility forms unified (PDF text maps some CJK glyphs to radicals), no spaces."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


MATH = "\x00"  # stands for a formula in a title: typeset in the PDF, where its text is not the TeX


def page_title(doc, edition="en"):
    """A page's title, each formula replaced by MATH: as its source writes it (the first `# ` heading), or for an
    edition as its page shows it."""
    if edition != "en":
        page = (SITE / edition / f"{doc}.html").read_text(encoding="utf-8")
        h1 = re.search(r"<article.*?<h1>(.*?)</h1>", page, re.S).group(1)
        h1 = re.sub(r'<span class="section-number">.*?</span>|<a class="headerlink".*?</a>', "", h1)
        h1 = re.sub(r'<span class="math[^"]*">.*?</span>', MATH, h1)
        return html.unescape(re.sub(r"<[^>]+>", "", h1)).strip()
    notebook = ROOT / f"{doc}.ipynb"
    if notebook.exists():
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        lines = [line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines()]
    else:
        lines = (ROOT / f"{doc}.md").read_text(encoding="utf-8").splitlines()
    title = next(line[2:].strip() for line in lines if line.startswith("# "))
    return re.sub(r"`|\*\*", "", re.sub(r"\$[^$]*\$", MATH, title))


def title_pattern(doc, edition="en"):
    """A regular expression for the title in squashed PDF text: its words in order, anything where a formula is."""
    return ".*?".join(re.escape(squash(part)) for part in page_title(doc, edition).split(MATH))


@pytest.fixture(scope="module", params=EDITIONS)
def edition(request):
    return request.param


@pytest.fixture(scope="module")
def pdf(edition):
    if not find_chromium():
        pytest.skip("chromium is not installed, so the book cannot be printed (apt-get install chromium fonts-noto-cjk)")
    path = edition_pdf(edition)
    if not path.exists():
        pytest.skip(f"{path.relative_to(ROOT)} is missing: run `make pdf`")
    pypdf = pytest.importorskip("pypdf", reason="pypdf (the `test` extra) reads the PDF back")
    return pypdf.PdfReader(path)


@pytest.fixture(scope="module")
def pages(pdf, edition):
    """Each page's text (kept beside the PDF by the printer, under the PDF's hash); the first, a middle and the last
    page are read afresh and must agree with it."""
    texts = print_pdf.page_texts(edition_pdf(edition))
    assert len(texts) == len(pdf.pages), f"the kept text has {len(texts)} pages, the PDF {len(pdf.pages)}"
    for number in sorted({0, len(texts) // 2, len(texts) - 1}):
        assert texts[number] == pdf.pages[number].extract_text(), f"the kept text of page {number + 1} is not the PDF's"
    return texts


@pytest.fixture(scope="module")
def text(pages):
    return "\n".join(pages)


def outline_titles(pdf):
    titles = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                titles.append(item.title)

    walk(pdf.outline)
    return titles


def test_every_page_of_the_toc_is_a_heading_in_toc_order(pdf, edition):
    pages = print_pdf.toc_pages()
    assert len(pages) >= 10, f"_toc.yml lists only {len(pages)} pages"
    outline = [squash(t) for t in outline_titles(pdf)]
    previous = -1
    for page in pages:
        title = title_pattern(page["doc"], edition)
        found = [i for i, entry in enumerate(outline) if re.fullmatch(r"(\d+\.)?" + title, entry)]
        assert found, f"{page['doc']}: its title {title!r} is not a heading of the PDF (outline: {outline})"
        later = [i for i in found if i > previous]
        assert later, f"{page['doc']}: its heading comes before the previous page's, not in the order of _toc.yml"
        previous = later[0]


def test_the_book_has_a_table_of_contents(pages, edition):
    first_pages = squash("".join(pages[:3]))
    heading = print_pdf.CONTENTS_TITLES.get(edition.replace("_", "-"), print_pdf.CONTENTS_TITLES["en"])
    assert squash(heading) in first_pages, f"no {heading!r} at the start of the book"
    for page in print_pdf.toc_pages():
        assert re.search(title_pattern(page["doc"], edition), first_pages), f"{page['doc']} is missing from the contents"


def test_contents_name_the_parts_in_the_editions_language(pages, edition):
    contents = squash(pages[0])
    parts = {page["part"] for page in print_pdf.toc_pages() if page["part"]}
    assert parts, "_toc.yml has no parts"
    if edition == "en":
        assert all(squash(part) in contents for part in parts), f"the contents lack a part of {parts}"
    else:
        translated = {page["part"] for page in print_pdf.translated_parts(print_pdf.toc_pages(), edition) if page["part"]}
        assert not translated & parts, f"{edition}: a part's caption is not translated: {translated & parts}"
        assert all(squash(part) in contents for part in translated), f"{edition}: the contents lack a part of {translated}"
        assert not any(squash(part) in contents for part in parts), f"{edition}: the contents show English captions"


def test_contents_give_the_page_each_part_starts_on(pages, edition):
    contents = [squash(line) for line in pages[0].splitlines()]
    for page in print_pdf.toc_pages():
        title = title_pattern(page["doc"], edition)
        found = [m for m in (re.fullmatch(r"(?:\d+\.)?(" + title + r")(\d+)", line) for line in contents) if m]
        assert found, f"{page['doc']} is not listed with a page number on the first page: {contents}"
        number = int(found[0].group(2))
        printed = squash(pages[number - 1])
        assert re.search(title, printed), f"the contents send {page['doc']} to page {number}, which does not show it"


def test_every_reference_of_the_site_is_printed(text, edition):
    site_page = SITE / ("" if edition == "en" else edition) / "references.html"
    if not site_page.exists():
        pytest.skip("the site is not built (make book)")
    labels = re.findall(r'<span class="label"><span class="fn-bracket">\[</span>([^<]+)<', site_page.read_text("utf-8"))
    assert labels, "the site's references page lists no references"
    flat = squash(text)
    missing = [label for label in labels if f"[{label}]" not in flat]
    assert not missing, f"references listed on the site but not in the PDF: {missing}"


def test_no_raw_tex(text):
    found = sorted(set(m.group(0) for m in RAW_TEX.finditer(text)))
    assert not found, f"TeX reached the PDF untypeset: {found}"


def test_chinese_terms_print(text, edition):
    if edition == "en":
        glossary = (ROOT / "glossary.md").read_text(encoding="utf-8")
    else:  # the terms as the edition's glossary page shows them
        page = (SITE / edition / "glossary.html").read_text(encoding="utf-8")
        glossary = html.unescape(" ".join(re.findall(r"<dt[^>]*>(.*?)</dt>", page, re.S)))
    terms = sorted(set(CJK.findall(glossary)))
    assert len(terms) >= 10, f"the glossary has only {len(terms)} Chinese terms"
    flat = squash(text)
    # Text extraction maps some glyphs the Noto CJK fonts share with a CJK radical back to the radical's code point
    # (長 printed, U+2ED1 extracted): such a code point stands for the ideograph printed there.
    missing = [term for term in terms
               if not re.search("".join(f"[{re.escape(ch)}\u2e80-\u2eff\u2f00-\u2fdf]" for ch in term), flat)]
    assert not missing, f"Chinese terms of the glossary missing from the PDF text: {missing}"


def _fonts(pdf):
    """Every font the pages use (also inside form XObjects): (name, subtype, embedded?)."""
    seen, found = set(), []

    def visit(resources):
        resources = resources.get_object() if resources is not None else {}
        for ref in (resources.get("/Font") or {}).values():
            font = ref.get_object()
            if id(font) in seen:
                continue
            seen.add(id(font))
            subtype = font.get("/Subtype")
            if subtype == "/Type3":
                embedded = "/CharProcs" in font  # the glyphs are drawn by content streams in the file itself
            else:
                target = font["/DescendantFonts"][0].get_object() if subtype == "/Type0" else font
                descriptor = target.get("/FontDescriptor")
                descriptor = descriptor.get_object() if descriptor is not None else {}
                embedded = any(key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3"))
            found.append((str(font.get("/BaseFont", "(Type3)")), subtype, embedded))
        for ref in (resources.get("/XObject") or {}).values():
            xobject = ref.get_object()
            if xobject.get("/Subtype") == "/Form" and "/Resources" in xobject:
                visit(xobject["/Resources"])

    for page in pdf.pages:
        visit(page.get("/Resources"))
    return found


def test_every_font_is_embedded(pdf):
    fonts = _fonts(pdf)
    assert fonts, "no fonts found in the PDF"
    missing = sorted({(name, subtype) for name, subtype, embedded in fonts if not embedded})
    assert not missing, f"fonts that are not embedded (a reader without them sees other glyphs): {missing}"


def test_page_count_is_sane(pdf):
    pages = print_pdf.toc_pages()
    count = len(pdf.pages)
    # Each page of the site takes at least one sheet (each starts a new one), a chapter rarely more than 40.
    assert len(pages) + 1 <= count <= 40 * len(pages), f"{count} pages for {len(pages)} pages of the site"
    sizes = {(round(float(page.mediabox.width)), round(float(page.mediabox.height))) for page in pdf.pages}
    assert all(abs(w - 595) <= 2 and abs(h - 842) <= 2 for w, h in sizes), f"not all pages are A4 portrait: {sizes}"


def test_pages_are_numbered(pages):
    count = len(pages)
    for number in sorted({1, count // 2, count}):
        assert f"{number} / {count}" in pages[number - 1], f"page {number} has no page number"


def test_links_between_chapters_survive(pdf):
    """The contents and the cross-references link inside the document (GoTo / named destinations)."""
    internal = 0
    for page in pdf.pages:
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot.get("/A")
            action = action.get_object() if action is not None else {}
            if "/Dest" in annot or action.get("/S") == "/GoTo":
                internal += 1
            uri = action.get("/URI", "")
            assert "127.0.0.1" not in str(uri), f"a link points at the print server: {uri}"
    assert internal >= len(print_pdf.toc_pages()), f"only {internal} internal links (the contents alone has more)"


def test_outline_titles_read_cleanly(pdf):
    """One outline entry per heading, each with its number once ("7.6. Exercises", not "7.6. 7.6. ExercisesExercises")."""
    titles = outline_titles(pdf)
    assert len(titles) > len(print_pdf.toc_pages()), f"the outline has only {len(titles)} entries"
    doubled = [t for t in titles if re.match(r"(\d+(?:\.\d+)*\.) \1", t)]
    assert not doubled, f"outline entries numbered twice: {doubled}"


def test_no_buttons_on_paper(text):
    """Prompts that only a screen can act on are left out of the print."""
    flat = squash(text)
    for prompt in ("Show code cell source", "Download the book as PDF", "Ctrl+K"):
        assert squash(prompt) not in flat, f"the PDF prints {prompt!r}"


def test_kept_page_text_is_read_again_when_the_pdf_changed(tmp_path):
    """The page text kept beside a PDF serves only the PDF it was read from: a stale hash means reading it again."""
    pypdf = pytest.importorskip("pypdf", reason="pypdf (the `test` extra) reads the PDF back")
    writer = pypdf.PdfWriter()
    for _ in range(2):
        writer.add_blank_page(width=595, height=842)
    path = tmp_path / "book.pdf"
    writer.write(path)
    assert print_pdf.page_texts(path) == ["", ""]
    kept = path.with_suffix(".pages.json")
    stored = json.loads(kept.read_text(encoding="utf-8"))
    kept.write_text(json.dumps(dict(stored, sha256="0" * 64, pages=["stale", "stale"])), encoding="utf-8")
    assert print_pdf.page_texts(path) == ["", ""], "a kept text whose hash is not the PDF's was used"
