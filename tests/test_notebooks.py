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


# Exercises in JupyterLab. A solution is folded there by cell metadata JupyterLab honours: each of its cells is
# `"jupyter": {"source_hidden": true}` (code cells also `"outputs_hidden": true`), while the exercise and its starter
# cell stay open. "Run All" then leaves the exercise to the reader: the starter cell, run with its blanks (`...`),
# gets the checker's "Not yet" hint instead of an error that would stop the run, and it reads no name that only a
# solution defines, so the solution (run too, folded) never answers for the reader when the starter is run again.
# The stored outputs stay meaningful for nbval: the starter's hint and the solution's "Right".

def _exercises(nb):
    """Each exercise as {"label", "starters": [code cells], "solution": [cells], "end": index or None}."""
    found, current, part = [], None, None
    for i, cell in enumerate(nb["cells"]):
        text = "".join(cell["source"]) if cell["cell_type"] == "markdown" else ""
        if "{solution-end}" in text and current is not None:
            current["end"], part = i, None
        if "{exercise}" in text:
            label = re.search(r":label: (\S+)", text.split("{exercise}", 1)[1])
            current = {"label": label.group(1) if label else f"cell {i}", "starters": [], "solution": [], "end": None}
            found.append(current)
            part = "starters"
        if "{solution-start}" in text:
            part = "solution"
            current["solution"].append(i)
            continue
        if part == "starters" and cell["cell_type"] == "code":
            current["starters"].append(i)
        elif part == "solution" and "{solution-end}" not in text:
            current["solution"].append(i)
    return found


def _hidden(cell):
    return cell["metadata"].get("jupyter", {})


def _names(source):
    """(names read, names bound) anywhere in a cell's code; IPython magics are left out."""
    import ast
    import builtins

    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - set(dir(builtins)), bound


def _text(cell):
    return "".join("".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
                   for out in cell["outputs"])


def test_every_solution_is_folded_in_jupyterlab_and_nothing_else(chapter):
    nb = load(chapter)
    exercises = _exercises(nb)
    assert exercises, f"{chapter.name} has no exercise"
    folded = set()
    for ex in exercises:
        assert ex["solution"] and ex["end"] is not None, f"{chapter.name} {ex['label']}: no solution-start/-end"
        cells = list(ex["solution"])
        if "{exercise}" not in "".join(nb["cells"][ex["end"]]["source"]):
            cells.append(ex["end"])  # a closing cell that also opens the next exercise stays open
        for i in cells:
            cell, meta = nb["cells"][i], _hidden(nb["cells"][i])
            assert meta.get("source_hidden") is True, (
                f"{chapter.name} {ex['label']}: cell {i} of the solution is open in JupyterLab "
                "(its metadata needs \"jupyter\": {\"source_hidden\": true})"
            )
            if cell["cell_type"] == "code":
                assert meta.get("outputs_hidden") is True, f"{chapter.name} {ex['label']}: cell {i} shows its output"
        folded.update(cells)
    for i, cell in enumerate(nb["cells"]):
        if i not in folded:
            meta = _hidden(cell)
            assert not meta.get("source_hidden") and not meta.get("outputs_hidden"), (
                f"{chapter.name}: cell {i} is folded in JupyterLab but belongs to no solution"
            )


def test_run_all_leaves_every_exercise_to_the_reader(chapter):
    nb = load(chapter)
    in_solution = {i for ex in _exercises(nb) for i in ex["solution"]}
    for ex in _exercises(nb):
        assert ex["starters"], f"{chapter.name} {ex['label']}: no starter cell for the reader's answer"
        for i in ex["starters"]:
            starter = nb["cells"][i]
            assert _text(starter).lstrip().startswith("Not yet"), (
                f"{chapter.name} {ex['label']}: run as stored (blanks unfilled), the starter cell {i} prints "
                f"{_text(starter)[:120]!r}, not the checker's 'Not yet' hint"
            )
            read, bound = _names("".join(starter["source"]))
            visible_before = set()
            for j, cell in enumerate(nb["cells"][:i]):
                if cell["cell_type"] == "code" and j not in in_solution:
                    visible_before |= _names("".join(cell["source"]))[1]
            borrowed = sorted(read - bound - visible_before)
            assert not borrowed, (
                f"{chapter.name} {ex['label']}: the starter cell {i} reads {borrowed}, which no open cell above it "
                "defines: after Run All a folded solution would answer for the reader"
            )
        answers = [_text(nb["cells"][i]) for i in ex["solution"] if nb["cells"][i]["cell_type"] == "code"]
        assert any("Right" in text for text in answers), (
            f"{chapter.name} {ex['label']}: no solution cell stores the checker's 'Right'"
        )
