"""Print the built site as one PDF book: every page of _toc.yml in order, with a table of contents.

    python tools/print_pdf.py [--site _build/html] [--out _build/pdf/self-attention-column-by-column.pdf]

The site (`make book`) is served on 127.0.0.1 and opened in Debian's chromium through Playwright; nothing is
downloaded and every request to another host is refused. In the browser, the article of each page of the
table of contents is fetched and appended, in order, to one document (ids get the page's name as a prefix so
that they stay unique, and links between pages become links inside the document). MathJax then typesets every
formula of it; the script stops with an error if any formula is left as TeX or typeset as an error. Chromium
prints the document with the site's print stylesheet (_static/print.css) and page numbers in the footer, and
keeps the links and an outline of the headings in the PDF; a second print writes the page on which each part of
the book starts into the table of contents.

A Chinese edition (_build/html/zh_TW, ...) prints the same way: --site _build/html/zh_TW; the contents' heading and
the footer's title come from the edition's own language and title.
"""

import argparse
import functools
import html
import http.server
import shutil
import sys
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PDF_NAME = "self-attention-column-by-column.pdf"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
TIMEOUT_MS = 120_000

# Runs in the root page: replaces its article by the articles of every page, typesets the maths, reports.
ASSEMBLE_JS = """
async ({pages, contentsTitles}) => {
  const lang = document.documentElement.lang || "en";
  const contentsTitle = contentsTitles[lang] || contentsTitles[lang.split("-")[0]] || contentsTitles.en;
  const keyOf = {};                                   // absolute page URL (no fragment) -> its key
  for (const page of pages) { keyOf[new URL(page.url, location.href).href] = page.key; }
  const local = (url, key) => {                      // a link into the book -> a fragment of this document
    const target = new URL(url);
    const page = keyOf[target.origin + target.pathname];
    if (page === undefined) { return null; }
    const fragment = decodeURIComponent(target.hash.slice(1));
    return "#" + (fragment ? page + "--" + fragment : page);
  };
  const book = document.createElement("div");
  const contents = document.createElement("section");
  contents.className = "print-book-contents";
  contents.id = "print-book-contents";
  contents.innerHTML = "<h1></h1><ol></ol>";
  contents.querySelector("h1").textContent = contentsTitle;
  const list = contents.querySelector("ol");
  let part = null;
  const titles = [];
  for (const page of pages) {
    const response = await fetch(page.url);
    if (!response.ok) { throw new Error(page.url + ": HTTP " + response.status); }
    const html = new DOMParser().parseFromString(await response.text(), "text/html");
    const article = html.querySelector("article.bd-article");
    if (!article) { throw new Error(page.url + ": no article.bd-article"); }
    const base = new URL(page.url, location.href).href;
    for (const el of article.querySelectorAll("[id]")) { el.id = page.key + "--" + el.id; }
    for (const el of article.querySelectorAll("img[src], source[src]")) {
      el.setAttribute("src", new URL(el.getAttribute("src"), base).href);
      el.removeAttribute("loading");
    }
    for (const el of article.querySelectorAll("a[href]")) {
      const href = el.getAttribute("href");
      const absolute = new URL(href, base).href;
      const inside = local(absolute);
      if (inside) { el.setAttribute("href", inside); }
      else if (absolute.startsWith(location.origin)) { el.removeAttribute("href"); }  // the print server is gone
      else { el.setAttribute("href", absolute); }
    }
    const section = document.createElement("section");
    section.className = "print-book-page";
    section.id = page.key;
    section.append(...article.childNodes);
    book.append(section);

    const h1 = section.querySelector("h1");
    const title = h1 ? h1.textContent.replace(/[#¶]\\s*$/, "").trim() : page.key;
    titles.push(title);
    if (page.part !== part && page.part) {
      const item = document.createElement("li");
      item.className = "print-book-part";
      item.textContent = page.part;
      list.append(item);
    }
    part = page.part;
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = "#" + page.key;
    if (h1) {  // the heading's own nodes, so that maths in a title is typeset there too
      const copy = h1.cloneNode(true);
      copy.querySelectorAll(".headerlink").forEach(el => el.remove());
      copy.querySelectorAll("[id]").forEach(el => el.removeAttribute("id"));
      link.append(...copy.childNodes);
    } else {
      link.textContent = title;
    }
    const number = document.createElement("span");  // the page number, filled in once the book is laid out
    number.className = "print-book-page-number";
    number.dataset.key = page.key;
    item.append(link, number);
    list.append(item);
  }
  const article = document.querySelector("article.bd-article");
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    MathJax.typesetClear();
  }
  article.replaceChildren(contents, ...book.childNodes);
  // The theme's print-only header (the root page's title and its own table of contents) is not the book's.
  document.querySelectorAll("#jb-print-docs-body").forEach(el => el.remove());
  document.title = document.querySelector("meta[property='og:site_name']")?.content || document.title;
  if (!window.MathJax || !MathJax.typesetPromise) { throw new Error("MathJax is not loaded on the root page"); }
  await MathJax.typesetPromise([article]);
  const images = Array.from(article.querySelectorAll("img"));
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  await document.fonts.ready;
  const maths = Array.from(article.querySelectorAll(".math"));
  // Each heading as plain text, for the PDF's outline: typeset maths as the text MathJax gives screen readers.
  const headings = Array.from(article.querySelectorAll("h1, h2, h3, h4, h5, h6")).filter(h => h.checkVisibility())
      .map(h => {
        const copy = h.cloneNode(true);
        copy.querySelectorAll(".headerlink").forEach(el => el.remove());
        copy.querySelectorAll("mjx-container").forEach(el => {
          const spoken = el.querySelector("mjx-assistive-mml");
          el.replaceWith(spoken ? spoken.textContent : "");
        });
        return copy.textContent.replace(/\\s+/g, " ").trim();
      });
  return {
    site_title: (document.querySelector(".logo__title") || {}).textContent?.trim() || "",
    titles,
    headings,
    math_total: maths.length,
    math_untypeset: maths.filter(el => !el.querySelector("mjx-container")).map(el => el.textContent.slice(0, 80)),
    math_errors: maths.filter(el => el.querySelector("mjx-merror")).map(el => el.textContent.slice(0, 80)),
    broken_images: images.filter(img => !(img.naturalWidth > 0)).map(img => img.src),
  };
}
"""

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


def book_title(root=ROOT):
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))["title"]


def find_chromium():
    """Debian's chromium on the PATH (never a downloaded browser)."""
    return shutil.which("chromium")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(directory):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def print_book(site, out, chromium):
    """Print the site at `site` into the PDF `out`; returns what the browser reported about the document."""
    from playwright.sync_api import sync_playwright

    pages = toc_pages()
    missing = [p["doc"] for p in pages if not (site / (p["doc"] + ".html")).exists()]
    if missing:
        raise SystemExit(f"{site} lacks pages of _toc.yml: {missing}; build the site first (make book)")
    server = _serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    refused = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
                context.set_default_timeout(TIMEOUT_MS)
                context.route(lambda url: not url.startswith(base) and not url.startswith(("data:", "blob:")),
                              lambda route: (refused.append(route.request.url), route.abort("blockedbyclient")))
                page = context.new_page()
                errors = []
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.goto(base + pages[0]["doc"] + ".html", wait_until="load")
                report = page.evaluate(ASSEMBLE_JS, {
                    "pages": [{"url": base + p["doc"] + ".html", "key": p["doc"].replace("/", "-"), "part": p["part"]}
                              for p in pages],
                    "contentsTitles": CONTENTS_TITLES,
                })
                problems = []
                if report["math_untypeset"] or report["math_errors"]:
                    problems.append(f"maths left as TeX: {report['math_untypeset']}, "
                                    f"typeset as errors: {report['math_errors']}")
                if report["broken_images"]:
                    problems.append(f"images that do not load: {report['broken_images']}")
                if refused:
                    problems.append(f"requests to other hosts (refused): {refused}")
                if errors:
                    problems.append(f"errors in the page: {errors}")
                if problems:
                    raise SystemExit("the book was not printed:\n  " + "\n  ".join(problems))
                options = dict(format="A4", scale=0.85, print_background=True, outline=True, tagged=True,
                               margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"},
                               display_header_footer=True, header_template="<span></span>",
                               footer_template=FOOTER.format(title=html.escape(report["site_title"] or book_title())))
                # Print, read where each page of the site starts, write those numbers into the contents, and
                # print again until they agree (the numbers take no extra lines, so the second print does).
                # The first print skips the tags and the outline (a quarter faster; the layout is the same).
                keys = [p["doc"].replace("/", "-") for p in pages]
                written = {}
                for attempt in range(3):
                    pdf = page.pdf(**dict(options, tagged=False, outline=False) if attempt == 0 else options)
                    starts = _start_pages(pdf, keys)
                    if starts == written:
                        break
                    page.evaluate(NUMBER_JS, starts)
                    written = starts
                else:
                    raise SystemExit(f"the contents' page numbers did not settle: {written} vs {starts}")
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(pdf)
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    _retitle_outline(out, report["headings"])
    return report


def _start_pages(pdf, keys):
    """{key: the page (from 1) where the element with that id is}, from the PDF's named destinations."""
    import io

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


def editions(site, root=ROOT):
    """The editions built inside the site (_build/html/zh_TW, ...): {language folder: its site}."""
    home = toc_pages(root)[0]["doc"] + ".html"
    return {sub.name: sub for sub in sorted(site.iterdir()) if sub.is_dir() and (sub / home).exists()}


def edition_pdf(out, lang):
    """Where edition `lang` of the PDF `out` goes: self-attention-column-by-column.zh_TW.pdf beside it."""
    return out.with_name(f"{out.stem}.{lang}{out.suffix}")


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
        books += [(site, edition_pdf(args.out, lang)) for lang, site in editions(args.site).items()]
    for site, out in books:
        start = time.perf_counter()
        report = print_book(site, out, chromium)
        seconds = time.perf_counter() - start
        shutil.copyfile(out, site / PDF_NAME)  # the file the home page's "Download the book as PDF" link names
        print(f"{out}: {len(report['titles'])} pages of the site, {report['math_total']} formulas typeset, "
              f"{out.stat().st_size / 1e6:.1f} MB, printed in {seconds:.0f} s; copied into {site}")


if __name__ == "__main__":
    sys.exit(main())
