"""Chapter 9 opened on its own, away from the benchmark's results file it reads.

A reader who downloads the chapter alone (with attn installed) has no ../benchmarks/results/attention_cpu.json. The
chapter then says once what is missing and where it comes from, skips the cells that read the file, and runs the
rest: no cell raises. The test runs a copy of the notebook in an empty folder through a real kernel.
"""

import json
import os
import re
import shutil

import nbclient
import nbformat
import pytest

from conftest import ROOT

CHAPTER = ROOT / "chapters" / "09_cost_of_attention.ipynb"
RESULTS = ROOT / "benchmarks" / "results" / "attention_cpu.json"
READS_RESULTS = re.compile(r"\b(results|sweep|setting|machine)\b")  # the names the chapter's skip rule looks for


def text_of(cell):
    """Everything a code cell printed, as one string."""
    return "".join("".join(out.get("text", "")) for out in cell["outputs"])


@pytest.fixture(scope="module")
def run_alone(tmp_path_factory):
    """The chapter executed in a folder chapters/ with nothing beside it: its code cells, after the run."""
    folder = tmp_path_factory.mktemp("alone") / "chapters"
    folder.mkdir()
    shutil.copy(CHAPTER, folder / CHAPTER.name)
    assert not (folder.parent / "benchmarks").exists()
    nb = nbformat.read(folder / CHAPTER.name, as_version=4)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([old] if old else []))  # this checkout's attn
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    return [c for c in nb.cells if c.cell_type == "code"]


def test_the_chapter_reads_the_results_file():
    """The premise: the stored chapter reads this file by a path relative to its folder, and the file exists."""
    code = "\n".join("".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "code")
    assert 'Path("../benchmarks/results/attention_cpu.json")' in code
    assert RESULTS.is_file()
    assert f'r"{READS_RESULTS.pattern}"' in code, "this test's skip rule is not the chapter's"


def test_no_cell_raises_and_the_message_comes_once(run_alone):
    for i, cell in enumerate(run_alone, start=1):
        errors = [out for out in cell.outputs if out.output_type == "error"]
        assert not errors, f"cell [{i}] raised {errors[0].ename}: {errors[0].evalue}"
    said = [i for i, cell in enumerate(run_alone, start=1) if "reads the benchmark's results" in text_of(cell)]
    assert len(said) == 1, f"the message should come once, it came in cells {said}"
    message = text_of(run_alone[said[0] - 1])
    assert "benchmarks/results/attention_cpu.json" in message.replace(os.sep, "/")
    assert "archive" in message and "python -m benchmarks.run" in message


def test_the_cells_that_read_the_results_are_skipped_and_the_others_run(run_alone):
    stored = [c for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    said = next(i for i, cell in enumerate(run_alone) if "reads the benchmark's results" in text_of(cell))
    skipped = ran = 0
    for i, (cell, kept) in enumerate(zip(run_alone, stored)):
        if i <= said:
            continue
        if READS_RESULTS.search(cell.source):
            assert not cell.outputs, f"cell [{i + 1}] reads the results but printed: {text_of(cell)[:200]}"
            skipped += 1
        elif kept["outputs"] and not cell.metadata.get("tags") and "stream" in {o["output_type"] for o in kept["outputs"]}:
            assert text_of(cell) == "".join("".join(o.get("text", "")) for o in kept["outputs"]), f"cell [{i + 1}]"
            ran += 1
    assert skipped >= 5 and ran >= 5, (skipped, ran)
