import pytest
from mining_toy import toy_corpus, write_lines

from xlingua.mining import MineConfig, mine
from xlingua.mining.toy import CharNgramEncoder

ray = pytest.importorskip("ray")


def test_ray_run_with_two_workers_writes_the_same_bytes_as_local(tmp_path):
    src, tgt, _ = toy_corpus()
    sp, tp = write_lines(tmp_path / "s.txt", src), write_lines(tmp_path / "t.txt", tgt)
    config = dict(src_lang="en", tgt_lang="en", shard_size=4)
    local = tmp_path / "local.tsv.gz"
    mine(sp, tp, local, MineConfig(**config), tmp_path / "wd_local", encoder=CharNgramEncoder(),
         show_progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = tmp_path / "ray.tsv.gz"
        s = mine(sp, tp, remote, MineConfig(**config), tmp_path / "wd_ray",
                 encoder=CharNgramEncoder(), ray="local", show_progress=False)
    finally:
        ray.shutdown()
    assert s["settings"]["ray"] == "local"
    assert remote.read_bytes() == local.read_bytes()


@pytest.mark.shared
def test_ray_run_of_the_bundled_model_on_real_text_is_byte_identical(tmp_path, corpora):
    """400 l10n de-en lines with the bundled model: Ray workers start with one thread, and
    before they took the driver's thread counts a few scores differed in the sixth decimal."""
    import gzip

    with gzip.open(corpora / "de-en.train.tsv.gz", "rt", encoding="utf-8") as f:
        rows = [next(f).rstrip("\n").split("\t") for _ in range(400)]
    sp = write_lines(tmp_path / "de.txt", [r[0] for r in rows])
    tp = write_lines(tmp_path / "en.txt", [r[1] for r in rows[::-1]])
    config = dict(src_lang="de", tgt_lang="en", shard_size=100, model="bundled")
    local = tmp_path / "local.tsv.gz"
    mine(sp, tp, local, MineConfig(**config), tmp_path / "wd_local", show_progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = tmp_path / "ray.tsv.gz"
        mine(sp, tp, remote, MineConfig(**config), tmp_path / "wd_ray", ray="local", show_progress=False)
    finally:
        ray.shutdown()
    assert gzip.decompress(local.read_bytes()).count(b"\n") >= 350
    assert remote.read_bytes() == local.read_bytes()


def test_ray_run_of_two_stages_with_the_language_step_writes_the_same_bytes_as_local(tmp_path):
    from test_mining_lid import ENGLISH, FRENCH, GERMAN

    src = GERMAN + FRENCH + ENGLISH[:2]
    tgt = ENGLISH[::-1] + GERMAN[:2] + FRENCH
    sp, tp = write_lines(tmp_path / "de.txt", src), write_lines(tmp_path / "en.txt", tgt)
    config = dict(src_lang="de", tgt_lang="en", shard_size=4, candidate_threshold=0.0, threshold=0.0)
    outs = {}
    for name in ("local", "ray"):
        if name == "ray":
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            outs[name] = tmp_path / f"{name}.tsv.gz"
            s = mine(sp, tp, outs[name], MineConfig(**config), tmp_path / f"wd_{name}",
                     encoder=CharNgramEncoder(dim=32, n=1), rescore_encoder=CharNgramEncoder(dim=128),
                     ray="local" if name == "ray" else None, show_progress=False)
        finally:
            if name == "ray":
                ray.shutdown()
        assert s["identified"] == {"src": 5, "tgt": 5}
    assert outs["ray"].read_bytes() == outs["local"].read_bytes()
