"""A Sphinx extension: the text Sphinx's own translation misses, translated from the same page catalogs.

Sphinx translates a page's paragraphs, headings and table cells from ``locales/<lang>/LC_MESSAGES/<page>.po`` in an
early transform (``Locale``, priority 20). Two kinds of text come later and stayed English in the Chinese editions
(and one side effect of that translation is undone here, see ``_own_document``):

- The parts' captions of the table of contents ("The lecture", ...): sphinx-external-toc inserts the root page's
  toctrees at priority 100, after the translation. Sphinx's gettext builder still extracts the captions into the
  root page's catalog, so here they are looked up in it, right after the toctrees are inserted.
- Each figure's alt text (what a screen reader says), from a notebook cell's ``mystnb.image.alt`` metadata:
  myst-nb renders outputs into images after every transform. The gettext builder (``make catalogs``) adds each alt
  text to its page's template as a message of its own; an edition's build replaces each alt text by its translation.

The words of the page frame that the themes and extensions leave English come from two catalogs of their own.
``sphinx.po`` holds what the templates in _templates/ ask (they override sphinx-book-theme's English-only buttons):
the gettext builder extracts those into ``sphinx.pot``, and Sphinx reads the catalog before the themes' own. ``ui.po``
holds the words that no extraction sees (the theme's "Color mode", sphinx-exercise's "Solution to", ...): it is
compiled here and answers, after the themes' and extensions' own catalogs, whatever they leave untranslated.
"""

import gettext
from os import path

from docutils import nodes
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain


def page_catalog(app, docname):
    """The gettext translations of page ``docname`` in the build's language (Sphinx's Locale transform's lookup)."""
    dirs = [path.join(app.srcdir, folder) for folder in app.config.locale_dirs]
    catalog, _ = init_locale(dirs, app.config.language, docname_to_domain(docname, app.config.gettext_compact))
    return catalog


def _translating(app):
    return bool(app.config.language) and app.config.language != "en" and app.builder.name != "gettext"


class TranslateTocCaptions(SphinxTransform):
    """The captions of the toctrees sphinx-external-toc inserts (its transform has priority 100)."""

    default_priority = 101

    def apply(self, **kwargs):
        if not _translating(self.app):
            return
        catalog = None
        for toctree in self.document.findall(lambda n: n.tagname == "toctree"):
            if toctree.get("caption"):
                catalog = catalog or page_catalog(self.app, self.env.docname)
                toctree["caption"] = catalog.gettext(toctree["caption"])


def alt_texts(doctree):
    """The image nodes of ``doctree`` that carry an alt text, in document order."""
    return [image for image in doctree.findall(nodes.image) if image.get("alt", "").strip()]


def notebook_alt_texts(source):
    """[(alt text, line)] of a notebook's cells (``mystnb.image.alt``); the line is myst-nb's (cell index * 10000)."""
    import json

    if not str(source).endswith(".ipynb"):
        return []
    with open(source, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    found = []
    for index, cell in enumerate(cells):
        alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
        if alt.strip():
            found.append((alt, index * 10000))
    return found


def _alt_text(app, doctree, docname):
    if app.builder.name == "gettext":  # make catalogs: each alt text is a message of its page
        # myst-nb renders a figure as its text/plain output for this builder, so the alt texts come from the
        # notebook's cell metadata, where myst-nb reads them for the HTML builder.
        from sphinx.builders.gettext import MsgOrigin

        catalog = app.builder.catalogs[docname_to_domain(docname, app.config.gettext_compact)]
        source = app.env.doc2path(docname)
        for alt, line in notebook_alt_texts(source):
            catalog.add(alt, MsgOrigin(str(source), line))
    elif _translating(app):
        catalog = page_catalog(app, docname)
        for image in alt_texts(doctree):
            image["alt"] = catalog.gettext(image["alt"])


def _add_ui_catalog(app, domain="ui"):
    """Make ``locales/<lang>/LC_MESSAGES/ui.po`` the first answer for the words of the page frame it holds.

    ui.po holds only the words to supply or correct, so every other word (the themes' "Light", "Dark") is still
    answered by the catalogs it has always come from. Sphinx's chain starts with the project's ``sphinx.po`` and
    sphinx-book-theme's ``booktheme`` chain with the theme's own catalog: ui.po's words go into that first catalog
    (so its 連結到此標題 wins over Sphinx's zh_TW 連結到這個標頭, its 上一頁 over pydata-sphinx-theme's Simplified
    上一页, its 打印 over the theme's zh_CN 列印). sphinx-exercise has no Chinese catalog: there ui.po answers last.
    """
    from sphinx import locale
    from sphinx.util.i18n import CatalogInfo

    if not app.config.language or app.config.language == "en":
        return
    for folder in app.config.locale_dirs:
        base = path.join(app.srcdir, folder)
        messages = path.join(base, app.config.language, "LC_MESSAGES")
        if not path.exists(path.join(messages, domain + ".po")):
            continue
        info = CatalogInfo(messages, domain, "utf-8")
        if info.is_outdated():
            info.write_mo(app.config.language)
        for catalog in ("sphinx", "booktheme", "exercise"):
            ui = gettext.translation(domain, localedir=base, languages=[app.config.language])
            translator = locale.translators.get(("general", catalog))
            if translator is None:
                translator, _ = locale.init([], app.config.language, catalog)
            if isinstance(translator, gettext.GNUTranslations):
                translator._catalog.update({msgid: text for msgid, text in ui._catalog.items() if msgid})  # "": header
            else:
                translator.add_fallback(ui)


def _own_document(app, doctree):
    """Point every node of a translated page at that page's document.

    Sphinx parses each translation as a small document of its own and moves the parsed nodes into the page; the
    nodes (a translated formula, say) keep pointing at that small document, whose settings hold the whole build
    environment. Pickled with the page, that made each edition's doctree about 20 times the English one's, and an
    edition build that had nothing to do spent most of its time unpickling them.
    """
    if not _translating(app):
        return
    for node in doctree.findall():  # text nodes too
        if node.document is not doctree:
            node.document = doctree


def setup(app):
    app.connect("doctree-read", _own_document)
    _add_ui_catalog(app)
    app.add_transform(TranslateTocCaptions)
    app.connect("doctree-resolved", _alt_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
