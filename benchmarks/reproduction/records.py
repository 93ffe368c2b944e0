"""Records: a comparison's results without the weights (each run's done.json, each evaluation's
result, each job's marker and output, the table), kept in a second folder and taken back from
it, so that a comparison goes on elsewhere without retraining what is already evaluated."""

import shutil
from pathlib import Path

from xlingua.io import atomic_path

from .bookkeeping import fill, job_marker
from .comparison import Comparison
from .settings import DONE

TABLE_FILES = ("table.json", "table.md", "claims.png")


def record_files(comp: Comparison, paper_dir: Path) -> list[Path]:
    """The small files that hold a comparison's results, relative to its directory: each run's
    done.json, each evaluation's result, each job's marker and output, the table. Weights, logs
    and recipes (which name local data paths) stay out."""
    rels = [Path(r.name) / DONE for r in comp.runs] + [Path("eval") / f"{e.name}.json" for e in comp.evals]
    for job in comp.jobs:
        rels.append(job_marker(job, Path())[0])
        out = Path(fill(job.output, {"dir": paper_dir})) if job.output else None
        if out and out.resolve().is_relative_to(Path(paper_dir).resolve()):
            rels.append(out.resolve().relative_to(Path(paper_dir).resolve()))
    return rels + [Path(f) for f in TABLE_FILES]


def _copy(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def restore_records(comp: Comparison, paper_dir: Path, records: Path) -> list[Path]:
    """Copy from `records` what `paper_dir` lacks: results, and the done.json of runs it has no
    directory for at all (a run begun here keeps its own state). Returns what was copied."""
    copied = []
    for rel in record_files(comp, paper_dir):
        src, dst = Path(records) / rel, Path(paper_dir) / rel
        if not src.exists() or dst.exists() or (rel.name == DONE and dst.parent.exists()):
            continue
        _copy(src, dst)
        copied.append(rel)
    return copied


def save_records(comp: Comparison, paper_dir: Path, records: Path) -> None:
    """Copy each result file of `paper_dir` that `records` lacks or holds in another version."""
    for rel in record_files(comp, paper_dir):
        src, dst = Path(paper_dir) / rel, Path(records) / rel
        if src.exists() and (not dst.exists() or dst.read_bytes() != src.read_bytes()):
            _copy(src, dst)
