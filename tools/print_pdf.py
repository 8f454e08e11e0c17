"""Print the built site as one PDF book: every page of _toc.yml in order, with a table of contents.

    python tools/print_pdf.py [--site _build/html] [--out _build/pdf/self-attention-column-by-column.pdf]

The site (`make book`) is served on 127.0.0.1 and opened in Debian's chromium through Playwright; nothing is
downloaded and every request to another host is refused. In the browser, the article of each page of the
table of contents is fetched and appended, in order, to one document (ids get the page's name as a prefix so
that they stay unique, and links between pages become links inside the document). MathJax then typesets every
formula of it; the script stops with an error if any formula is left as TeX or typeset as an error. Chromium
prints the document with the site's print stylesheet (_static/print.css) and page numbers in the footer, and
keeps the links and an outline of the headings in the PDF; a second print writes the page on which each part of
the book starts into the table of contents. Each page's text is then read back and kept beside the PDF
(<name>.pages.json, see page_texts), for the tests that read the book.

A Chinese edition (_build/html/zh_TW, ...) prints the same way: --site _build/html/zh_TW; the contents' heading and
the footer's title come from the edition's own language and title.
"""

import argparse
import concurrent.futures
import hashlib
import html
import io
import json
import os
import shutil
import sys
import time
from pathlib import Path

import yaml
from book_site import CHROMIUM_ARGS, PDF_NAME, ROOT, TRANSLATIONS, edition_pdf, find_chromium, off_site, served

TIMEOUT_MS = 120_000

# Runs in the root page: replaces its article by the articles of every page, typesets the maths, reports.
ASSEMBLE_JS = (Path(__file__).parent / "print_pdf.js").read_text(encoding="utf-8")

# Runs in the assembled book: writes each page's number into the table of contents.
NUMBER_JS = """
(numbers) => {
  for (const el of document.querySelectorAll(".print-book-page-number")) {
    el.textContent = numbers[el.dataset.key] || "";
  }
}
"""

# The heading of the table of contents, by the language of the site (<html lang>): English and the Chinese editions.
CONTENTS_TITLES = {"en": "Contents", "zh-TW": "目錄", "zh-CN": "目录", "zh": "目錄"}

FOOTER = """
<div style="font-size: 8px; width: 100%; margin: 0 12mm; display: flex; justify-content: space-between;
            color: #555; font-family: sans-serif;">
  <span>{title}</span><span><span class="pageNumber"></span> / <span class="totalPages"></span></span>
</div>
"""


def toc_pages(root=ROOT):
    """The book's pages in reading order, from _toc.yml: dicts with the document name and its part's caption."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [{"doc": toc["root"], "part": None}]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            pages.append({"doc": chapter["file"], "part": part.get("caption")})
    for chapter in toc.get("chapters", []):
        pages.append({"doc": chapter["file"], "part": None})
    for page in pages:
        page["doc"] = str(Path(page["doc"]).with_suffix("")).replace("\\", "/")
    return pages


def translated_parts(pages, lang, root=ROOT):
    """``pages`` with each part's caption in edition ``lang`` (the root page's catalog translates the captions)."""
    from babel.messages.pofile import read_po

    catalog = root / "locales" / lang / "LC_MESSAGES" / (pages[0]["doc"] + ".po")
    with catalog.open("rb") as f:
        words = {m.id: m.string for m in read_po(f) if m.id and m.string}
    return [dict(page, part=words.get(page["part"], page["part"])) for page in pages]


def book_title(root=ROOT):
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))["title"]


def print_book(site, out, chromium):
    """Print the site at `site` into the PDF `out`; returns what the browser reported about the document."""
    from playwright.sync_api import sync_playwright

    pages = toc_pages()
    if site.name in TRANSLATIONS:  # a Chinese edition: its parts' captions in its own words
        pages = translated_parts(pages, site.name)
    missing = [p["doc"] for p in pages if not (site / (p["doc"] + ".html")).exists()]
    if missing:
        raise SystemExit(f"{site} lacks pages of _toc.yml: {missing}; build the site first (make book)")
    # Leaving these blocks stops the browser (Playwright closes what it launched) and then the server.
    with served(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page, report = _assemble(browser, base, pages)
        pdf = _print(page, pages, report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf)
    _retitle_outline(out, report["headings"])
    return report


def _assemble(browser, base, pages):
    """Open the root page, put the whole book into it, and stop if anything a book must not have was found."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    refused, errors = [], []
    context.route(off_site(base), lambda route: (refused.append(route.request.url), route.abort("blockedbyclient")))
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(base + pages[0]["doc"] + ".html", wait_until="load")
    report = page.evaluate(ASSEMBLE_JS, {
        "pages": [{"url": base + p["doc"] + ".html", "key": _key(p), "part": p["part"]} for p in pages],
        "contentsTitles": CONTENTS_TITLES,
    })
    problems = []
    if report["math_untypeset"] or report["math_errors"]:
        problems.append(f"maths left as TeX: {report['math_untypeset']}, typeset as errors: {report['math_errors']}")
    if report["broken_images"]:
        problems.append(f"images that do not load: {report['broken_images']}")
    if refused:
        problems.append(f"requests to other hosts (refused): {refused}")
    if errors:
        problems.append(f"errors in the page: {errors}")
    if problems:
        raise SystemExit("the book was not printed:\n  " + "\n  ".join(problems))
    return page, report


PRINTS = 6


def _print(page, pages, report):
    """The PDF's bytes, its contents numbered.

    Print, read where each page of the site starts, write those numbers into the contents, and print again until a
    print agrees with the numbers it shows. Chromium's print layout of the Chinese editions can alternate between
    two states from one print to the next with nothing in the page changed (a block moves to the next page and
    back), so numbers are replaced only when two prints in a row disagree with them: of two alternating prints, the
    one that matches is returned. The first print skips the tags and the outline (a quarter faster; the layout is
    the same).
    """
    options = dict(format="A4", scale=0.85, print_background=True, outline=True, tagged=True,
                   margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"},
                   display_header_footer=True, header_template="<span></span>",
                   footer_template=FOOTER.format(title=html.escape(report["site_title"] or book_title())))
    keys = [_key(p) for p in pages]
    written, misses, history = None, 0, []
    for attempt in range(PRINTS):
        pdf = page.pdf(**dict(options, tagged=False, outline=False) if attempt == 0 else options)
        starts = _start_pages(pdf, keys)
        if starts == written:
            return pdf
        history.append(starts)
        misses += 1
        if written is None or misses == 2:
            page.evaluate(NUMBER_JS, starts)
            written, misses = starts, 0
    changed = {k: [h[k] for h in history] for k in keys if len({h[k] for h in history}) > 1}
    raise SystemExit(f"the contents' page numbers did not settle in {PRINTS} prints: {changed}")


def _key(page):
    """The id of a page's section in the book: its document name, "/" made "-"."""
    return page["doc"].replace("/", "-")


def _start_pages(pdf, keys):
    """{key: the page (from 1) where the element with that id is}, from the PDF's named destinations."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    named = {name.lstrip("/"): dest for name, dest in reader.named_destinations.items()}
    missing = [key for key in keys if key not in named]
    if missing:
        raise SystemExit(f"the PDF has no destination for the pages {missing}")
    return {key: reader.get_destination_page_number(named[key]) + 1 for key in keys}


def _retitle_outline(pdf, headings):
    """Give the PDF's outline the headings' own text.

    Chromium builds the outline from the headings it printed, but repeats the first line of a heading that was
    moved to the next page ("7.6. 7.6. ExercisesExercises") and drops typeset maths. The outline has one entry per
    heading, in document order; if the counts differ, the outline is left as Chromium wrote it.
    """
    from pypdf import PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    writer = PdfWriter(str(pdf), incremental=True)  # appends the new titles; Chromium's bytes stay as they are
    entries = []

    def walk(node):
        while node is not None:
            node = node.get_object()
            entries.append(node)
            if "/First" in node:
                walk(node["/First"])
            node = node.get("/Next")

    outlines = writer.root_object.get("/Outlines")
    if outlines is not None and "/First" in outlines.get_object():
        walk(outlines.get_object()["/First"])
    if len(entries) != len(headings):
        print(f"the PDF's outline has {len(entries)} entries for {len(headings)} headings: left as printed")
        return
    for entry, heading in zip(entries, headings):
        entry[NameObject("/Title")] = TextStringObject(heading)
    writer.write(str(pdf))


def page_texts(pdf):
    """Each page's text, as pypdf extracts it: [page 1, page 2, ...].

    Reading the text of a Chinese edition (about 210 pages) takes pypdf about half a minute, so the text is kept
    beside the PDF (``<name>.pages.json``, written when the book is printed) under the PDF's SHA-256 and pypdf's
    version, and read from there while both still match; otherwise the pages are read again (spread over the
    machine's cores) and the file rewritten.
    """
    import pypdf

    pdf = Path(pdf)
    key = {"sha256": hashlib.sha256(pdf.read_bytes()).hexdigest(), "pypdf": pypdf.__version__}
    kept = pdf.with_suffix(".pages.json")
    if kept.exists():
        stored = json.loads(kept.read_text(encoding="utf-8"))
        if all(stored.get(k) == v for k, v in key.items()):
            return stored["pages"]
    count = len(pypdf.PdfReader(pdf).pages)
    workers = max(1, min(os.cpu_count() or 1, count // 20))
    chunks = [range(start, count, workers) for start in range(workers)]
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(_extract, [pdf] * workers, chunks))
    pages = [None] * count
    for chunk, texts in zip(chunks, parts):
        for number, text in zip(chunk, texts):
            pages[number] = text
    kept.write_text(json.dumps(dict(key, pages=pages), ensure_ascii=False), encoding="utf-8")
    return pages


def _extract(pdf, numbers):
    """The text of pages ``numbers`` (from 0) of the PDF at ``pdf``."""
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    return [reader.pages[n].extract_text() for n in numbers]


def editions(site, root=ROOT):
    """The editions built inside the site (_build/html/zh_TW, ...): {language folder: its site}."""
    home = toc_pages(root)[0]["doc"] + ".html"
    return {sub.name: sub for sub in sorted(site.iterdir()) if sub.is_dir() and (sub / home).exists()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html", help="the built site")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf" / PDF_NAME, help="the PDF to write")
    parser.add_argument("--no-editions", action="store_true",
                        help="print only the site itself, not the editions built inside it (zh_TW/, ...)")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if not chromium:
        raise SystemExit("chromium is not on the PATH: install Debian's chromium (apt-get install chromium "
                         "fonts-noto-cjk); the PDF is printed with it, offline")
    books = [(args.site, args.out)]
    if not args.no_editions:
        books += [(site, edition_pdf(lang, args.out)) for lang, site in editions(args.site).items()]
    for site, out in books:
        start = time.perf_counter()
        report = print_book(site, out, chromium)
        page_texts(out)  # read once here, so that the tests of the PDF need not
        seconds = time.perf_counter() - start
        shutil.copyfile(out, site / PDF_NAME)  # the file the home page's "Download the book as PDF" link names
        print(f"{out}: {len(report['titles'])} pages of the site, {report['math_total']} formulas typeset, "
              f"{out.stat().st_size / 1e6:.1f} MB, printed in {seconds:.0f} s; copied into {site}")


if __name__ == "__main__":
    sys.exit(main())
