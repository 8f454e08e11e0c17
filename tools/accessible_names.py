"""A Sphinx extension: a folded code cell's toggle is named by the words it shows, in the page's language.

myst-nb writes each folded cell (``hide-input``, ``hide-output``, ...) as ``<details>`` whose ``<summary>`` shows
"Show code cell source" (or "Hide code cell source" once opened; the Chinese editions show their own words, from the
``nb_code_prompt_show`` / ``nb_code_prompt_hide`` settings) but carries ``aria-label="Toggle hidden content"``,
hard-coded in English. An aria-label replaces the text as the control's accessible name, so a screen reader says
words the page does not show, in English in every edition, and a speech-input user who says what they see names
nothing (WCAG 2.1, 2.5.3 "Label in Name").

Here the node's HTML visitor is replaced by one that writes the same ``<details>`` and ``<summary>`` without that
label: the summary is then named by its visible text, which is already in the page's language.
"""

from html import escape

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput


def summary_html(classes, prompt_show, prompt_hide):
    """The opening ``<details>`` and the whole ``<summary>`` of a folded cell, as myst-nb writes them but unlabelled.

    Parameters
    ----------
    classes : list of str
        The node's classes (``above-input``, ``below-input``, ...), which myst-nb's stylesheet places by.
    prompt_show, prompt_hide : str
        The words shown while the cell is folded and while it is open.

    Returns
    -------
    str
        HTML; the summary has no aria-label, so its name is the prompt the stylesheet shows.
    """
    return (
        f'<details class="admonition hide {" ".join(classes)}">\n'
        "<summary>\n"
        f'<p class="collapsed admonition-title">{escape(prompt_show)}</p>\n'
        f'<p class="expanded admonition-title">{escape(prompt_hide)}</p>\n'
        "</summary>\n"
    )


def visit_hide_code_cell(self, node):
    self.body.append(summary_html(node["classes"], node["prompt_show"], node["prompt_hide"]))


def setup(app):
    app.setup_extension("myst_nb")  # its node first, so that this visitor is the one that stays
    app.add_node(HideCodeCellNode, override=True, html=(visit_hide_code_cell, depart_HideCellInput))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
