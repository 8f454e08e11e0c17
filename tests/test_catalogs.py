"""`make catalogs` is stable: the same English sources give the same catalogs, byte for byte.

Sphinx writes each message's location relative to the folder it extracts into, and stamps every template with the
time; `sphinx-intl update` copies both into each catalog it rewrites. A one-word change in English once rewrote every
location comment of its catalogs (`#: ../../../` became `#: ../../../../`) and their headers. tools/editions.py's
`normalise_catalogs` writes each location from the project root behind a fixed `../../../` and keeps a catalog's
creation date; `make catalogs` runs it on the fresh templates and on the updated catalogs. These tests hold the
function, the committed catalogs and the Makefile's order of steps, without running the (slow) extraction.
"""

import shutil
import subprocess

import pytest

from conftest import ROOT
from tools.editions import LOCALES, normalise_catalogs

TEMPLATE = """\
# SOME DESCRIPTIVE TITLE.
#, fuzzy
msgid ""
msgstr ""
"Project-Id-Version: Project name not set \\n"
"POT-Creation-Date: {date}\\n"

#: {up}chapters/03_dot_product_attention.ipynb:10002
#: {up}chapters/03_dot_product_attention.ipynb:40005
msgid "The softmax of each column."
msgstr ""
"""


def _catalogs(tmp_path, up, date, kept_date):
    """A template extracted `up` folders below the root at `date`, and a zh_TW catalog of the same page."""
    pot = tmp_path / "gettext" / "chapters" / "03_dot_product_attention.pot"
    pot.parent.mkdir(parents=True)
    pot.write_text(TEMPLATE.format(up=up, date=date), encoding="utf-8")
    po = tmp_path / "locales" / "zh_TW" / "LC_MESSAGES" / "chapters" / "03_dot_product_attention.po"
    po.parent.mkdir(parents=True)
    po.write_text(TEMPLATE.format(up="../../../", date=kept_date), encoding="utf-8")
    return pot


@pytest.mark.parametrize("up", ["../../", "../../../", "../../../../", "../../../../../"])
def test_a_template_does_not_depend_on_the_build_folder_or_the_time(tmp_path, up):
    pot = _catalogs(tmp_path, up, "2031-05-06 07:08+0000", "2026-12-03 09:30+0000")
    normalise_catalogs(tmp_path / "gettext", locales=tmp_path / "locales")
    text = pot.read_text(encoding="utf-8")
    assert text == TEMPLATE.format(up="../../../", date="2026-12-03 09:30+0000"), text
    assert normalise_catalogs(tmp_path / "gettext", locales=tmp_path / "locales") == [], "a second pass changed it"


def test_several_locations_on_one_line_are_all_rewritten(tmp_path):
    po = tmp_path / "intro.po"
    po.write_text("#: ../../../../intro.md:1 ../../../../intro.md:12\nmsgid \"a\"\nmsgstr \"\"\n", encoding="utf-8")
    assert normalise_catalogs(tmp_path, locales=tmp_path) == [po]
    assert po.read_text(encoding="utf-8").startswith("#: ../../../intro.md:1 ../../../intro.md:12\n")


def test_a_new_page_keeps_its_extraction_date(tmp_path):
    pot = tmp_path / "glossary.pot"
    pot.write_text(TEMPLATE.format(up="../../../../", date="2031-05-06 07:08+0000"), encoding="utf-8")
    normalise_catalogs(tmp_path, locales=tmp_path / "no-locales")
    assert '"POT-Creation-Date: 2031-05-06 07:08+0000\\n"' in pot.read_text(encoding="utf-8")


def test_the_committed_catalogs_are_in_the_stable_form(tmp_path):
    copy = tmp_path / "locales"
    shutil.copytree(LOCALES, copy)
    changed = normalise_catalogs(copy, locales=copy)
    assert not changed, f"catalogs not in the stable form (run `make catalogs`): {[str(p.relative_to(copy)) for p in changed]}"


def test_make_catalogs_normalises_before_and_after_the_update():
    plan = subprocess.run(["make", "-n", "--no-print-directory", "catalogs", "VENV=.venv-plan", "PYTHON=python3"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    steps = [line for line in plan.stdout.splitlines() if "gettext" in line or "normalise" in line or "derive" in line
             or "sphinx-intl" in line or line.startswith("rm ")]
    kinds = ["rm" if s.startswith("rm ") else "extract" if "--custom-builder gettext" in s else "normalise"
             if "normalise-catalogs" in s else "update" if "sphinx-intl update" in s else "derive" for s in steps]
    assert kinds == ["rm", "extract", "normalise", "update", "normalise", "derive"], plan.stdout
