"""What the tools and the tests share about the built book: its editions, the PDF's name, serving and browsing it.

Importable as ``book_site`` from tools/ (the scripts here, Sphinx's local extensions) and as ``tools.book_site``
from the project's top folder (the tests). It needs only the standard library.
"""

import contextlib
import functools
import http.server
import re
import shutil
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"

#: The editions of the book: language folder -> its name, as the editions bar shows it. English is the source and
#: is built into _build/html/; each other edition into _build/html/<folder>/.
EDITIONS = {"en": "English", "zh_TW": "繁體中文", "zh_CN": "简体中文"}
#: The translated editions (every edition but English).
TRANSLATIONS = tuple(lang for lang in EDITIONS if lang != "en")

#: The printed book: `make pdf` writes _build/pdf/<PDF_NAME> and copies it into the site, where the home page links it.
PDF_NAME = "self-attention-column-by-column.pdf"

#: Debian's chromium, headless, offline, with nothing that calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # no update checks or other calls home
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium():
    """Debian's chromium on the PATH (never a downloaded browser), or None."""
    return shutil.which("chromium")


def edition_pdf(lang, out=None):
    """The PDF of edition ``lang``: the English one is ``out`` (by default _build/pdf/<PDF_NAME>), another
    edition's sits beside it as self-attention-column-by-column.<lang>.pdf."""
    out = ROOT / "_build" / "pdf" / PDF_NAME if out is None else Path(out)
    return out if lang == "en" else out.with_name(f"{out.stem}.{lang}{out.suffix}")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def served(directory):
    """Serve ``directory`` over HTTP on a free port of 127.0.0.1; yields the base URL, ending in "/"."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def off_site(base_url):
    """A pattern matching every URL that is not under ``base_url`` (data: and blob: URLs are on site): route
    it to a failure, and the browser stays offline."""
    return re.compile(f"^(?!{re.escape(base_url)}|data:|blob:)")


if __name__ == "__main__":  # `python tools/book_site.py translations`: the Makefile's list of editions to build
    import sys

    if sys.argv[1:] != ["translations"]:
        raise SystemExit("usage: python tools/book_site.py translations")
    print(" ".join(TRANSLATIONS))
