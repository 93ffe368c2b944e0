"""The xlingua wheel holds the code and every data file the code reads (the page, the example,
the reference figures, the language-ID thresholds), and none of the models: they ship as model
packages of their own (packages/)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "xlingua"


def _link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


def _export(out: Path) -> Path:
    """What the wheel is built from, without a build/ or egg-info left by an earlier build (their
    stale files would end up in the wheel); the models are in it, as in a checkout."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, out / name)
    shutil.copytree(REPO / "src", out / "src", copy_function=_link_or_copy,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return out


def test_the_code_wheel_has_the_data_files_and_no_models(tmp_path):
    (tmp_path / "tree").mkdir()
    tree = _export(tmp_path / "tree")
    assert (tree / "src" / "xlingua" / "models").is_dir()  # the exclusion is what keeps them out
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "-w", str(tmp_path / "dist"), str(tree)], capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr
    wheel, = (tmp_path / "dist").glob("xlingua-*.whl")
    assert wheel.stat().st_size <= 5_000_000
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [n for n in names if n.startswith("xlingua/models/")]
    data = {f"xlingua/{p.relative_to(SOURCE).as_posix()}" for p in SOURCE.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
            and p.relative_to(SOURCE).parts[0] != "models"}
    assert {"xlingua/serve/static/index.html", "xlingua/serve/static/app.js", "xlingua/examples/parallel.tsv",
            "xlingua/references/laser.json", "xlingua/data/lid_thresholds.json"} <= data
    assert sorted(data - names) == []
    assert {f"xlingua/{p.relative_to(SOURCE).as_posix()}" for p in SOURCE.rglob("*.py")} <= names
