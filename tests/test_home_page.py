"""The home page tells what the stored outputs were produced with; those versions must be the true ones.

They are written in intro.md, so these tests hold them to their sources: each package's version to its pin in
requirements.lock, and the Python version to the one every chapter notebook records in its metadata (the
interpreter that executed and saved it).
"""

import json
import re

import pytest

PACKAGES = ("numpy", "matplotlib", "jupyter-book", "torch")


@pytest.fixture(scope="module")
def stated(root):
    """The sentence of intro.md that names the versions, as {name: version}."""
    text = re.sub(r"\s+", " ", (root / "intro.md").read_text(encoding="utf-8"))
    sentence = re.search(r"The outputs stored in the chapters.*?requirements\.lock", text)
    assert sentence, "intro.md no longer says what the stored outputs were produced with"
    versions = dict(re.findall(r"(Python|numpy|matplotlib|jupyter-book|torch) (\d+\.\d+(?:\.\w+)*)", sentence.group(0)))
    assert set(versions) == {"Python", *PACKAGES}, f"intro.md names versions of {sorted(versions)} only"
    return versions


def test_package_versions_are_the_pinned_ones(stated, root):
    pins = dict(
        line.split("==", 1) for line in (root / "requirements.lock").read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    )
    pins = {name.lower().replace("_", "-"): version.strip() for name, version in pins.items()}
    wrong = {name: (stated[name], pins.get(name)) for name in PACKAGES if stated[name] != pins.get(name)}
    assert not wrong, f"intro.md states other versions than requirements.lock pins (stated, pinned): {wrong}"


def test_python_version_is_the_one_the_notebooks_ran_on(stated, root):
    notebooks = sorted((root / "chapters").glob("*.ipynb"))
    assert notebooks, "no chapter notebooks"
    ran_on = {}
    for notebook in notebooks:
        metadata = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]
        ran_on.setdefault(metadata.get("language_info", {}).get("version"), []).append(notebook.name)
    assert set(ran_on) == {stated["Python"]}, (
        f"intro.md says Python {stated['Python']}; the notebooks were saved by: {ran_on}"
    )


def _chapter_table(root):
    text = (root / "intro.md").read_text(encoding="utf-8")
    section = text.split("## How the book maps to the lecture", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert len(rows) > 10, "intro.md's chapter table is missing"
    return rows


def test_the_chapter_table_writes_symbols_as_maths(root):
    """`b^1`, `e^i`, `W_q`, `N x N` outside $...$ show raw on the page; the chapters write them as maths."""
    raw = []
    for row in _chapter_table(root):
        prose = re.sub(r"\$[^$]+\$|`[^`]+`", "", row)
        raw += re.findall(r"\b\w+[\^_]\w+|\bN x N\b|->", prose)
    assert not raw, f"symbols outside maths in intro.md's chapter table: {raw}"
    assert sum(row.count("$") for row in _chapter_table(root)) >= 10, "the table has no maths at all"


@pytest.mark.parametrize("edition", ["", "zh_TW/", "zh_CN/"])
def test_the_pdf_link_is_live_or_says_when_it_will_be(site, edition):
    """After `make book` alone the PDF does not exist: the home page then says that `make pdf` prints it."""
    page = site / edition / "intro.html"
    if not page.exists():
        pytest.skip(f"{edition or 'the English edition'} is not built: run `make book`")
    html = page.read_text(encoding="utf-8")
    paragraph = re.search(r'<p class="pdf-download">(.*?)</p>', html, re.S)
    assert paragraph, f"{edition}intro.html offers no PDF"
    href = re.search(r'href="([^"]+\.pdf)"', paragraph.group(1)).group(1)
    if not (page.parent / href).exists():
        assert "make pdf" in paragraph.group(1), (
            f"{edition}intro.html links {href}, which is not there, without saying that `make pdf` prints it"
        )
