import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from mining_toy import toy_corpus, write_lines

import xlingua.mining.knn as knn_module
from xlingua.mining import MineConfig, mine
from xlingua.mining.toy import CharNgramEncoder

CONFIG = dict(src_lang="en", tgt_lang="en", shard_size=2, batch_size=1)


@pytest.fixture
def corpus(tmp_path):
    src, tgt, _ = toy_corpus()
    return write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)


def _clean_run(tmp_path, sp, tp) -> bytes:
    out = tmp_path / "clean.tsv.gz"
    mine(sp, tp, out, MineConfig(**CONFIG), tmp_path / "clean_wd", encoder=CharNgramEncoder(),
         show_progress=False)
    return out.read_bytes()


def test_kill_9_during_embedding_then_rerun_gives_identical_bytes(tmp_path, corpus):
    sp, tp = corpus
    wd, out = tmp_path / "wd", tmp_path / "o.tsv.gz"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import time
        from xlingua.mining import MineConfig, mine
        from xlingua.mining.toy import CharNgramEncoder

        class Slow(CharNgramEncoder):  # same vectors and fingerprint, just slow
            def _encode_batch(self, texts, lang):
                time.sleep(0.3)
                return super()._encode_batch(texts, lang)

        mine({str(sp)!r}, {str(tp)!r}, {str(out)!r}, MineConfig(**{CONFIG!r}), {str(wd)!r},
             encoder=Slow(), show_progress=False)
    """))
    proc = subprocess.Popen([sys.executable, str(script)])
    deadline = time.time() + 60
    while len(list(wd.glob("embed/*/shard-*.npy"))) < 3 and time.time() < deadline:
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no cleanup runs
    proc.wait()
    assert proc.returncode == -9
    done_before = len(list(wd.glob("embed/*/shard-*.npy")))
    assert 3 <= done_before < 14 and not out.exists()
    mine(sp, tp, out, MineConfig(**CONFIG), wd, encoder=CharNgramEncoder(), show_progress=False)
    assert out.read_bytes() == _clean_run(tmp_path, sp, tp)


def test_failure_in_knn_search_then_rerun_resumes_and_matches(tmp_path, corpus, monkeypatch):
    sp, tp = corpus
    wd, out = tmp_path / "wd", tmp_path / "o.tsv.gz"
    real, calls = knn_module.knn_shard, []

    def flaky(*args):
        calls.append(args)
        if len(calls) == 3:
            raise RuntimeError("injected crash")
        return real(*args)

    monkeypatch.setattr(knn_module, "knn_shard", flaky)
    with pytest.raises(RuntimeError, match="injected"):
        mine(sp, tp, out, MineConfig(**CONFIG), wd, encoder=CharNgramEncoder(), show_progress=False)
    assert not out.exists() and len(list(wd.glob("knn/*/knn_*.npz"))) == 2
    monkeypatch.setattr(knn_module, "knn_shard", real)
    summary = mine(sp, tp, out, MineConfig(**CONFIG), wd, encoder=CharNgramEncoder(),
                   show_progress=False)
    assert summary["timings"]["embed_src"]["cached"] and not summary["timings"]["knn_fwd"]["cached"]
    assert out.read_bytes() == _clean_run(tmp_path, sp, tp)
    # a third run recomputes nothing and writes the same bytes
    again = mine(sp, tp, out, MineConfig(**CONFIG), wd, encoder=CharNgramEncoder(),
                 show_progress=False)
    assert all(t["cached"] for name, t in again["timings"].items() if name not in ("select", "write"))
    assert out.read_bytes() == _clean_run(tmp_path, sp, tp)


def test_changed_settings_get_their_own_cache_entries(tmp_path, corpus):
    sp, tp = corpus
    wd = tmp_path / "wd"
    mine(sp, tp, tmp_path / "a.tsv.gz", MineConfig(**CONFIG), wd, encoder=CharNgramEncoder(),
         show_progress=False)
    s = mine(sp, tp, tmp_path / "b.tsv.gz", MineConfig(**{**CONFIG, "k": 2}), wd,
             encoder=CharNgramEncoder(), show_progress=False)
    assert s["timings"]["embed_src"]["cached"] and not s["timings"]["knn_fwd"]["cached"]
    assert len(list(Path(wd).glob("knn/*"))) == 4
