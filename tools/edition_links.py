"""A Sphinx extension: every page links to the same page in the book's other editions.

The English edition is built into ``_build/html/``, the Chinese ones into ``_build/html/zh_TW/`` and
``_build/html/zh_CN/`` (see the Makefile's ``editions`` target). Each page's header names the three editions
(``_templates/edition-links.html``); the current one is plain text, the others link to the same page there.
"""

from html import escape

from book_site import EDITIONS


def edition_href(pagename, here, there):
    """The relative link from page ``pagename`` of edition ``here`` to the same page of edition ``there``."""
    up = "../" * pagename.count("/")
    root = up if here == "en" else up + "../"  # from this page to the English edition's root
    return f"{root}{'' if there == 'en' else there + '/'}{pagename}.html"


# The bar's accessible name in each edition.
BAR_NAMES = {"en": "Editions", "zh_TW": "版本", "zh_CN": "版本"}


def edition_bar(pagename, here):
    """The HTML of the bar for one page."""
    items = []
    for lang, name in EDITIONS.items():
        if lang == here:
            items.append(f'<span aria-current="true" lang="{lang.replace("_", "-")}">{name}</span>')
        else:
            href = escape(edition_href(pagename, here, lang))
            items.append(f'<a href="{href}" hreflang="{lang.replace("_", "-")}" lang="{lang.replace("_", "-")}">{name}</a>')
    name = BAR_NAMES.get(here, BAR_NAMES["en"])
    return f'<nav class="edition-links" aria-label="{name}">{" · ".join(items)}</nav>\n'


def _add_bar(app, pagename, templatename, context, doctree):
    here = app.config.language if app.config.language in EDITIONS else "en"
    context["edition_links"] = edition_bar(pagename, here)


def setup(app):
    app.connect("html-page-context", _add_bar)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
