"""Work directories written by the pipeline before its steps shared one contract
(tests/mining/legacy, see mining_legacy) resume: every step is found under the key it was
written with, none is computed again, and the pairs are the same bytes."""
import tarfile
from pathlib import Path

import pytest
from mining_legacy import run, runs, write_inputs

ARCHIVE = Path(__file__).parent / "legacy" / "workdirs.tar.gz"
RECOMPUTED = {"select", "write", "prepare_write_src", "prepare_write_tgt"}  # outside the steps: every run
# steps whose method changed since, and the steps below them: computed again under a new key,
# their pairs new. Exact search is the blocked multiply (a, c: Flat); b's IVF4,Flat index is
# index.ivf's (its own k-means, searched as multiplies) and its second stage a margin over
# re-embedded neighbours; as a two-stage run it now identifies every line's language before
# embedding (mining.lid), so every step from the embedding on has new rows.
CHANGED = {"a": {"knn", "score"},
           "b": {"lid", "embed", "concat", "combine", "index", "knn", "score", "rescore"},
           "c": {"knn", "score"}}


def _step_dirs(workdir: Path) -> set[str]:
    return {str(p.relative_to(workdir)) for p in workdir.glob("*/*") if p.parent.name != "prepared"}


@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_an_old_work_directory_resumes_without_recomputing(tmp_path, name):
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(tmp_path, filter="data")
    call = runs(write_inputs(tmp_path), tmp_path)[name]
    want = call["output"].read_bytes()
    before = _step_dirs(call["workdir"])
    summary = run(call)
    changed = CHANGED.get(name, set())
    new = {d for d in _step_dirs(call["workdir"]) - before if d.split("/")[0] not in changed}
    assert not new  # no other step under a new key
    stages = {k: v["cached"] for k, v in summary["timings"].items()
              if k not in RECOMPUTED and k.split("_")[0] not in changed}
    assert stages and all(stages.values()), stages
    if not changed:
        assert call["output"].read_bytes() == want
