"""The built site loads nothing from another host (`make test` builds it before these run)."""

import re

HTML_REF = re.compile(r"""<(script|link|img|iframe|source|video|audio)\b[^>]*?\b(src|href)=["']([^"']+)["']""", re.I)
CSS_URL = re.compile(r"""(url\(\s*["']?|@import\s+["'])((?:https?:)?//[^"')\s]+)""", re.I)
EXTERNAL = re.compile(r"^(https?:)?//", re.I)


def pages(site):
    return [p for p in site.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts]


def test_pages_load_nothing_from_other_hosts(site):
    found = []
    for page in pages(site):
        for tag, attr, url in HTML_REF.findall(page.read_text(encoding="utf-8")):
            if EXTERNAL.match(url):
                found.append(f"{page.relative_to(site)}: <{tag} {attr}={url}>")
    assert not found, "pages load resources from other hosts:\n" + "\n".join(found)


def test_styles_and_scripts_fetch_nothing_from_other_hosts(site):
    found = []
    for path in list(site.rglob("*.css")):
        for _, url in CSS_URL.findall(path.read_text(encoding="utf-8", errors="replace")):
            found.append(f"{path.relative_to(site)}: {url}")
    assert not found, "stylesheets import from other hosts:\n" + "\n".join(found)


def test_mathjax_is_served_by_the_site(site):
    math_pages = [p for p in pages(site) if "mathjax" in p.read_text(encoding="utf-8").lower()]
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()
    for page in math_pages:
        scripts = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', page.read_text(encoding="utf-8"))
        for src in scripts:
            assert not EXTERNAL.match(src), f"{page.name} loads MathJax from {src}"
