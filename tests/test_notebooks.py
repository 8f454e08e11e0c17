"""The chapter notebooks as stored: executed in order, error-free, listed in the toc, well formed.

nbval (run by `make test` over chapters/) re-executes every notebook and compares each output
with the stored one. A notebook saved unexecuted has no outputs to compare and would pass
nbval silently; these tests catch that and the other ways a stored notebook can mislead.
"""

import json
import re

import pytest

from conftest import ROOT

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")


def toc_files():
    """Every `file:` entry of _toc.yml (without extension), and the root."""
    text = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    files = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)", text, flags=re.M)
    return [f.removesuffix(".ipynb").removesuffix(".md") for f in files]


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_every_toc_entry_exists():
    for entry in toc_files():
        assert any((ROOT / f"{entry}{ext}").exists() for ext in (".md", ".ipynb")), f"_toc.yml lists {entry}, missing"


@pytest.fixture(params=CHAPTERS, ids=[p.name for p in CHAPTERS])
def chapter(request):
    return request.param


def test_there_are_chapters():
    assert CHAPTERS, "chapters/ holds no notebook"


def test_chapter_is_named_and_listed(chapter):
    assert NAME.match(chapter.name), f"{chapter.name} is not named NN_topic.ipynb"
    assert f"chapters/{chapter.stem}" in toc_files(), f"{chapter.name} is missing from _toc.yml"


def test_chapter_is_executed_in_order(chapter):
    cells = code_cells(load(chapter))
    counts = [c["execution_count"] for c in cells]
    assert cells, f"{chapter.name} has no code cell"
    assert counts == list(range(1, len(cells) + 1)), (
        f"{chapter.name}: execution counts {counts} are not 1..{len(cells)}: run `make notebooks` and commit"
    )
    assert sum(len(c["outputs"]) for c in cells) >= len(cells) // 2, f"{chapter.name}: most code cells have no output"


def test_chapter_has_no_error_output(chapter):
    for i, cell in enumerate(code_cells(load(chapter)), start=1):
        for out in cell["outputs"]:
            assert out["output_type"] != "error", f"{chapter.name} cell [{i}] stores an error: {out.get('ename')}"
            if out["output_type"] == "stream":
                assert out["name"] != "stderr" or not "".join(out["text"]).strip(), (
                    f"{chapter.name} cell [{i}] writes to stderr: {''.join(out['text'])[:200]}"
                )


def test_chapter_outputs_hold_no_addresses_or_timings(chapter):
    for i, cell in enumerate(code_cells(load(chapter)), start=1):
        for out in cell["outputs"]:
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            assert not re.search(r" at 0x[0-9a-f]{6,}", text), f"{chapter.name} cell [{i}] prints a memory address"


def test_chapter_uses_the_python3_kernel(chapter):
    assert load(chapter)["metadata"]["kernelspec"]["name"] == "python3"


def test_chapter_opens_with_its_place_in_the_lecture(chapter):
    first = "".join(load(chapter)["cells"][0]["source"])
    assert first.startswith("# "), f"{chapter.name} must open with its title"
    assert "In the lecture" in first, f"{chapter.name} must say where it sits in the lecture"


def test_chapter_closes_with_summary_and_exercises(chapter):
    text = "\n".join("".join(c["source"]) for c in load(chapter)["cells"] if c["cell_type"] == "markdown")
    assert "## Summary" in text
    assert 2 <= text.count("{exercise}") <= 4, f"{chapter.name} needs 2-3 exercises"
    assert text.count("{solution-start}") == text.count("{exercise}"), f"{chapter.name}: every exercise needs a solution"
    assert text.count(":class: dropdown") >= text.count("{solution-start}"), f"{chapter.name}: fold every solution"


def test_chapter_stores_its_figures(chapter):
    """Figures saved with a non-inline backend leave no image behind: nbval would not notice."""
    images = sum("image/png" in out.get("data", {}) for c in code_cells(load(chapter)) for out in c["outputs"])
    assert images >= 2, f"{chapter.name} stores {images} figure(s); every chapter has at least 2"


def test_every_figure_has_caption_and_alt_text(chapter):
    for i, cell in enumerate(code_cells(load(chapter)), start=1):
        if any("image/png" in out.get("data", {}) for out in cell["outputs"]):
            meta = cell["metadata"].get("mystnb", {})
            assert meta.get("figure", {}).get("caption"), f"{chapter.name} cell [{i}]: a figure without a caption"
            assert meta.get("figure", {}).get("name"), f"{chapter.name} cell [{i}]: a figure without a name"
            assert meta.get("image", {}).get("alt"), f"{chapter.name} cell [{i}]: a figure without alt text"
