"""Build the book's notebook archive: every chapter, ready to run outside the repository.

    python tools/archive.py [--site _build/html]

writes ``self-attention-column-by-column-notebooks.zip`` into the built site (and into each Chinese edition's
folder there, so that every edition's home page links to a file beside it). The archive unpacks into one folder:

- ``chapters/NN_*.ipynb``: every chapter notebook, as stored (with its outputs);
- the data files a chapter reads by a relative path (``../benchmarks/results/...``), at the same place;
- ``attn-<version>-py3-none-any.whl``: the book's module, built from this checkout (offline, no build isolation);
- ``requirements.txt``: numpy, threadpoolctl, matplotlib, JupyterLab and jupyterlab-myst (which renders the chapters'
  MyST in JupyterLab) with everything they need, pinned at the versions of requirements.lock (a pin per line, with
  the Python versions it applies to where it does not apply to all); it
  includes ``requirements-kernel.txt``, the part a Jupyter kernel running the chapters needs (numpy, threadpoolctl, matplotlib,
  ipykernel), for a reader who brings a front end of their own;
- ``README.txt``: how to install and run it.

The archive is reproducible (fixed timestamps, sorted entries) and is checked before it is written: no test files,
no virtual environment or build folder, no absolute path of the machine that built it.
"""

import argparse
import io
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE_NAME = "self-attention-column-by-column-notebooks.zip"
FOLDER = "self-attention-column-by-column"  # the one folder the archive unpacks into
# What the notebooks need besides attn: the kernel that runs them and the figures (requirements-kernel.txt, for a
# reader who has a Jupyter front end already), then a front end, JupyterLab, with jupyterlab-myst, without which the
# chapters' MyST (maths, boxes) shows as raw text there (requirements.txt adds both).
KERNEL_ROOTS = ["numpy", "threadpoolctl", "matplotlib", "ipykernel"]
ROOTS = KERNEL_ROOTS + ["jupyterlab", "jupyterlab-myst"]
PYTHONS = ["3.11", "3.12", "3.13"]  # the ones requirements.lock's wheels install on (the Makefile's SUPPORTED)
# No archive member may have one of these as a folder name, nor hold an absolute path of a build machine.
FORBIDDEN_PARTS = {"tests", ".venv", "build", "_build", "dist", "__pycache__", ".ipynb_checkpoints", ".git"}
FORBIDDEN_SUFFIXES = (".egg-info",)
MACHINE_PATH = re.compile(r"(?<![\w.])(/work/|/root/|/home/|/tmp/|/Users/|[A-Za-z]:\\\\?Users)")
EPOCH = (1980, 1, 1, 0, 0, 0)  # the oldest date a zip entry can have: the same bytes from every build
SOURCE_DATE_EPOCH = "315532800"  # the same moment, for the wheel's own timestamps

README = """\
Self-attention, column by column: every chapter, to run on your own machine
===========================================================================

This folder holds the book's chapters as Jupyter notebooks (chapters/), the Python module they
import, attn, as a wheel ({wheel}), and requirements.txt, which pins numpy, threadpoolctl, matplotlib,
JupyterLab and jupyterlab-myst (which shows the chapters' maths and boxes formatted in JupyterLab), with
everything they need, at the versions the book was tested with.{data}

You need Python 3.11, 3.12 or 3.13. In a terminal, inside this folder:

    python3 -m venv .venv
    .venv/bin/python -m pip install -r requirements.txt {wheel}
    .venv/bin/jupyter lab chapters

On Windows, the same three steps read:

    py -m venv .venv
    .venv\\Scripts\\python -m pip install -r requirements.txt {wheel}
    .venv\\Scripts\\jupyter lab chapters

JupyterLab opens in your browser. Open a chapter and choose Run > Run All Cells; or run one
cell at a time with Shift+Enter, change a number and run it again. The exercises at the end of
each chapter name a checker from attn.exercises that says whether your answer is right.

Everything is installed into .venv inside this folder: deleting .venv undoes it. Running as
root (in a container, say), JupyterLab asks for --allow-root.

To use a Jupyter front end you have already (JupyterHub, VS Code...), install requirements-kernel.txt
instead of requirements.txt, with the wheel, into the environment of the kernel you run the chapters in.

A chapter notebook opened where attn is not installed says so in its first cell and runs no
further: install the wheel as above, restart the kernel and run the chapter again.
"""


def chapters(root=ROOT):
    """Every chapter notebook, chapters/NN_*.ipynb, in order."""
    return sorted((root / "chapters").glob("[0-9][0-9]_*.ipynb"))


def data_files(notebooks, root=ROOT):
    """The files the chapters read by a path relative to their folder ("../benchmarks/..."), as repository paths."""
    import json

    found = set()
    for nb_path in notebooks:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            for rel in re.findall(r"""["'](\.\./[^"'\s]+)["']""", "".join(cell["source"])):
                path = (nb_path.parent / rel).resolve()
                if not path.is_file() or root not in path.parents:
                    raise SystemExit(f"{nb_path.name} reads {rel}, which is not a file of the repository")
                found.add(path.relative_to(root))
    return sorted(found)


def build_wheel(out_dir, root=ROOT):
    """Build attn's wheel from a copy of the package (the checkout gets no build/ or .egg-info), offline."""
    import os

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "attn-src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, src / name)
        shutil.copytree(root / "attn", src / "attn", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--no-index", "--wheel-dir", str(out_dir), str(src)], check=True, env=env)
    wheels = sorted(Path(out_dir).glob("attn-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one attn wheel, pip wrote {[w.name for w in wheels]}")
    return wheels[0]


def read_lock(path=ROOT / "requirements.lock"):
    """requirements.lock as {canonical name: (name as written, version)}."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = (name.strip(), version.strip())
    return pins


def closure(roots=ROOTS, pythons=PYTHONS, lock=None):
    """Pins for ``roots`` and everything they require on Linux under each of ``pythons``.

    Returns {canonical name: (name, version, pythons it is needed on)}. The dependencies are read from the
    installed distributions' metadata, which must be the locked versions; a dependency that none of the locked
    environments holds (one needed only on another Python or system) is left to pip to resolve there.
    """
    lock = read_lock() if lock is None else lock
    needed = {}
    for py in pythons:
        env = {**default_environment(), "python_version": py, "python_full_version": f"{py}.0",
               "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
        todo = [(name, frozenset()) for name in roots]
        seen = set()
        while todo:
            name, extras = todo.pop()
            key = canonicalize_name(name)
            if (key, extras) in seen:
                continue
            seen.add((key, extras))
            if key not in lock:
                if key in map(canonicalize_name, roots):
                    raise SystemExit(f"{name} is not pinned in requirements.lock")
                continue
            installed = metadata.version(key)
            if installed != lock[key][1]:
                raise SystemExit(f"{name} {installed} is installed, requirements.lock pins {lock[key][1]}: "
                                 "build the archive in the project's environment (make book)")
            needed.setdefault(key, set()).add(py)
            for text in metadata.requires(key) or []:
                req = Requirement(text)
                wanted = [""] + sorted(extras)
                if req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in wanted):
                    todo.append((req.name, frozenset(req.extras)))
    return {key: (*lock[key], sorted(pys)) for key, pys in needed.items()}


def requirements_text(pins, pythons=PYTHONS, header="", include=None):
    lines = ["# " + line for line in header.splitlines()]
    if include:
        lines.append(f"-r {include}")
    for key in sorted(pins):
        name, version, pys = pins[key]
        marker = "" if pys == list(pythons) else " ; " + " or ".join(f'python_version == "{p}"' for p in pys)
        lines.append(f"{name}=={version}{marker}")
    return "\n".join(lines) + "\n"


#: The pinned requirements files the archive ships, kept in the repository: building the site needs no JupyterLab
#: installed (`make book` installs only the book extra). `python tools/archive.py --pins` rewrites them from the
#: installed metadata and requirements.lock, run in the Python 3.11 environment of `make test` (which installs
#: JupyterLab); run it after `make lock`.
PINS = ROOT / "tools" / "archive_pins"


def pinned_requirements():
    """{file name: text} as kept in PINS."""
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(PINS.glob("requirements*.txt"))}


def requirements_files():
    """{file name: text}: the kernel's pins, and everything (JupyterLab too) on top of them, from the metadata."""
    kernel = closure(KERNEL_ROOTS)
    everything = closure(ROOTS)
    rest = {k: v for k, v in everything.items() if k not in kernel or kernel[k] != v}
    return {
        "requirements-kernel.txt": requirements_text(kernel, header=(
            "What a Jupyter kernel running the chapters needs (numpy, threadpoolctl, matplotlib, ipykernel), pinned at the versions\n"
            "the book was checked with. To use a Jupyter front end you have already:\n"
            "    python -m pip install -r requirements-kernel.txt attn-*.whl")),
        "requirements.txt": requirements_text(rest, include="requirements-kernel.txt", header=(
            "The chapters' dependencies, JupyterLab and jupyterlab-myst (the chapters' MyST rendered there), pinned at the\n"
            "versions the book was checked with:\n"
            "    python -m pip install -r requirements.txt attn-*.whl")),
    }


def check_member(name, data):
    """Refuse a member the archive must not hold: tests, environments, build folders, machine paths."""
    parts = Path(name).parts
    bad = [p for p in parts if p in FORBIDDEN_PARTS or p.endswith(FORBIDDEN_SUFFIXES) or p.startswith("test_")]
    if bad:
        raise SystemExit(f"the archive would hold {name} ({bad[0]})")
    texts = []
    if name.endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            for inner in wheel.namelist():
                check_member(f"{name}/{inner}", b"")
                texts.append((f"{name}/{inner}", wheel.read(inner)))
    else:
        texts.append((name, data))
    for where, blob in texts:
        match = MACHINE_PATH.search(blob.decode("utf-8", errors="replace"))
        if match:
            raise SystemExit(f"{where} holds a machine path: ...{match.group(0)}...")


def build(out, root=ROOT):
    """Write the archive to ``out``; returns its members' names."""
    notebooks = chapters(root)
    if not notebooks:
        raise SystemExit("chapters/ holds no NN_*.ipynb")
    members = {}
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp), root)
        members[wheel.name] = wheel.read_bytes()
    data = data_files(notebooks, root)
    for nb in notebooks:
        members[f"chapters/{nb.name}"] = nb.read_bytes()
    for rel in data:
        members[rel.as_posix()] = (root / rel).read_bytes()
    members.update({name: text.encode() for name, text in pinned_requirements().items()})
    data_note = ""
    if data:
        data_note = ("\n\nIt also holds the data files the chapters read, beside chapters/:\n\n"
                     + "\n".join(f"    {rel.as_posix()}" for rel in data))
    members["README.txt"] = README.format(wheel=wheel.name, data=data_note).encode()
    for name, blob in members.items():
        check_member(name, blob)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in sorted(members):
            info = zipfile.ZipInfo(f"{FOLDER}/{name}", date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, members[name])
    partial.replace(out)
    return sorted(members)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html", help="the built site")
    parser.add_argument("--out", type=Path, help="write the archive here instead (no copies into the editions)")
    parser.add_argument("--pins", action="store_true", help="rewrite the pinned requirements files in tools/archive_pins")
    args = parser.parse_args(argv)
    if args.pins:
        PINS.mkdir(exist_ok=True)
        for name, text in requirements_files().items():
            (PINS / name).write_text(text, encoding="utf-8")
        print(f"wrote {sorted(pinned_requirements())} in {PINS.relative_to(ROOT)}")
        return 0
    if args.out:
        build(args.out)
        print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB")
        return 0
    if not (args.site / "index.html").exists():
        raise SystemExit(f"{args.site} holds no built site: build it first")
    target = args.site / ARCHIVE_NAME
    build(target)
    # Each Chinese edition's home page links to the archive beside it (the notebooks are the same).
    for edition in sorted(p.parent for p in args.site.glob("*/index.html")):
        if (edition / "_static").is_dir():
            shutil.copyfile(target, edition / ARCHIVE_NAME)
    print(f"{ARCHIVE_NAME}: {target.stat().st_size / 1e6:.1f} MB, in {args.site} and each edition there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
