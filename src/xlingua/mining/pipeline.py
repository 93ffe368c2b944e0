"""`mine`: the whole bitext-mining pipeline, each step cached in the work directory.

shard -> embed (float16) -> index -> kNN both ways -> score -> select -> write.
Every step's directory is keyed by its config and its inputs' keys; a rerun (also after
kill -9) reuses finished steps and shard files, and writes byte-identical output."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from xlingua.data.text import read_gold
from xlingua.encoders.base import Encoder
from xlingua.mining.cache import peak_memory_mb, save_json
from xlingua.mining.corpus import ShardedCorpus, ShardStep, shard_config
from xlingua.mining.embed import (ConcatConfig, ConcatStep, EmbedConfig, EmbedStep,
                                  resolve_encoder)
from xlingua.mining.knn import IndexConfig, IndexStep, KnnConfig, KnnStep
from xlingua.mining.langs import normalize_lang
from xlingua.mining.runner import Runner
from xlingua.mining.score import ScoreConfig, ScoreStep
from xlingua.mining.write import write_pairs
from xlingua.similarity.calibrate import best_threshold
from xlingua.similarity.margin import check_score
from xlingua.similarity.select import MODES, apply_threshold, select_pairs


@dataclasses.dataclass
class MineConfig:
    src_lang: str
    tgt_lang: str
    model: str = "bundled"
    margin: str = "ratio"
    k: int = 4
    mode: str = "max"
    threshold: float | None = None
    dedup: bool = False
    shard_size: int = 100_000
    index: str = "auto"  # auto | Flat | any FAISS factory string, e.g. OPQ64,IVF1024,PQ64
    nprobe: int = 128
    flat_max_bytes: int = 4 << 30
    batch_size: int = 64
    alpha: float = 0.5
    check_lang: bool = True

    def validate(self) -> None:
        self.src_lang = normalize_lang(self.src_lang)
        self.tgt_lang = normalize_lang(self.tgt_lang)
        check_score(self.margin)
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {MODES}")
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.shard_size < 1:
            raise ValueError("shard size must be at least 1")


class _Clock:
    def __init__(self):
        self.stages: dict[str, dict] = {}

    def run(self, name: str, step, fn):
        cached = step.done() if step is not None else False
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        # CPU seconds of this process (all its threads; not Ray workers' work): unlike wall
        # time, unmoved by other jobs sharing the machine
        self.stages[name] = {"seconds": round(time.perf_counter() - t0, 3),
                             "cpu_seconds": round(time.process_time() - c0, 3), "cached": cached,
                             "peak_rss_mb": round(peak_memory_mb(), 1)}
        return out


def default_workdir() -> Path:
    from xlingua.paths import xlingua_home

    return xlingua_home() / "mine"


def mine(src: str | Path, tgt: str | Path, output: str | Path, config: MineConfig,
         workdir: str | Path | None = None, encoder: Encoder | None = None,
         ray: str | None = None, calibrate: str | Path | None = None,
         show_progress: bool = True) -> dict:
    """Mine `src` x `tgt` into `output` (gzipped TSV) and `<output>.summary.json`.

    `config.model` may list several encoder specs ("bundled,use"): their cosines are averaged
    (see ConcatStep). `encoder` (one Encoder or a list) overrides config.model."""
    config.validate()
    if calibrate is not None and config.threshold is not None:
        raise ValueError("give either a threshold or a gold set to calibrate one, not both")
    output = Path(output)
    workdir = Path(workdir) if workdir else default_workdir()
    gold = read_gold(calibrate) if calibrate is not None else None
    if encoder is not None:
        encoders = list(encoder) if isinstance(encoder, (list, tuple)) else [encoder]
    else:
        encoders = [resolve_encoder(m.strip()) for m in config.model.split(",") if m.strip()]
    runner = Runner(ray, show_progress=show_progress)
    clock = _Clock()
    t_start = time.perf_counter()

    def log(msg):
        if show_progress:
            print(msg, flush=True)

    # 1. shards
    sides = {}
    for side, path, lang in (("src", src, config.src_lang), ("tgt", tgt, config.tgt_lang)):
        step = ShardStep(shard_config(path, lang, config.shard_size, config.dedup,
                                      config.check_lang), workdir)
        meta = clock.run(f"shard_{side}", step, step.run)
        sides[side] = {"shard": step, "meta": meta}
        log(f"[shard] {side}: {meta['sentences']:,} sentences in {len(meta['shards'])} shard(s)")
    if sides["src"]["meta"]["has_ids"] != sides["tgt"]["meta"]["has_ids"]:
        with_ids = [s for s in sides if sides[s]["meta"]["has_ids"]]
        raise ValueError(f"unequal id formats: {with_ids[0]} file "
                         f"{sides[with_ids[0]]['meta']['path']} has id<TAB>sentence lines, the "
                         "other has none; give ids on both sides or on neither")
    with_ids = sides["src"]["meta"]["has_ids"]

    # 2. embeddings (several models, comma-separated: one embedding per model, then combined)
    for side, lang in (("src", config.src_lang), ("tgt", config.tgt_lang)):
        shard = sides[side]["shard"]
        n_shards = len(sides[side]["meta"]["shards"])
        steps = []
        for enc in encoders:
            step = EmbedStep(EmbedConfig(shard.key, str(shard.dir), n_shards, lang,
                                         enc.fingerprint(), config.batch_size), workdir)
            name = f"embed_{side}" if len(encoders) == 1 else f"embed_{side}_{enc.name}"
            clock.run(name, step, lambda: step.run(enc, runner))
            steps.append(step)
            log(f"[embed] {side} {enc.name}: {'cached' if clock.stages[name]['cached'] else 'computed'}")
        if len(steps) > 1:
            step = ConcatStep(ConcatConfig(tuple(s.key for s in steps), tuple(str(s.dir) for s in steps),
                                           n_shards), workdir)
            clock.run(f"combine_{side}", step, step.run)
        sides[side]["embed"], sides[side]["dim"] = step, step.meta()["dim"]

    # 3-4. index each side, search it with the other
    knn = {}
    for name, q, db in (("fwd", "src", "tgt"), ("bwd", "tgt", "src")):
        sizes = tuple(sides[db]["meta"]["shards"])
        istep = IndexStep(IndexConfig(sides[db]["embed"].key, str(sides[db]["embed"].dir), sizes,
                                      sides[db]["dim"], config.index, config.nprobe,
                                      config.flat_max_bytes), workdir)
        imeta = clock.run(f"index_{db}", istep, istep.run)
        kstep = KnnStep(KnnConfig(istep.key, str(istep.dir), sides[q]["embed"].key,
                                  str(sides[q]["embed"].dir), str(sides[db]["embed"].dir),
                                  tuple(sides[q]["meta"]["shards"]), sizes, imeta["factory"],
                                  config.nprobe, config.k), workdir)
        kmeta = clock.run(f"knn_{name}", kstep, lambda: kstep.run(runner))
        knn[name] = (kstep, kmeta)
        log(f"[knn] {name}: index {imeta['factory']}" +
            (f", recall {kmeta['recall']}" if "recall" in kmeta else ""))

    # 5. scores
    sstep = ScoreStep(ScoreConfig(knn["fwd"][0].key, knn["bwd"][0].key, sides["src"]["embed"].key,
                                  sides["tgt"]["embed"].key, config.margin, config.k, config.alpha),
                      workdir)
    clock.run("score", sstep, lambda: sstep.run(
        knn["fwd"][0], knn["bwd"][0], sides["src"]["embed"], sides["tgt"]["embed"],
        len(sides["src"]["meta"]["shards"]), len(sides["tgt"]["meta"]["shards"])))

    # 6. select (cheap: recomputed from the cached scores)
    src_corpus, tgt_corpus = ShardedCorpus(sides["src"]["shard"]), ShardedCorpus(sides["tgt"]["shard"])

    def select():
        s, a, b = select_pairs(sstep.load(), config.mode)
        calibration, threshold = None, config.threshold
        if gold is not None:
            src_ids, tgt_ids = np.array(src_corpus.all_ids()), np.array(tgt_corpus.all_ids())
            pairs = zip(src_ids[a].tolist(), tgt_ids[b].tolist())
            correct = np.fromiter((p in gold for p in pairs), dtype=bool, count=len(a))
            known_src, known_tgt = set(src_ids.tolist()), set(tgt_ids.tolist())
            missing = sum(1 for x, y in gold if x not in known_src or y not in known_tgt)
            calibration = {**best_threshold(s, correct, len(gold)), "gold_pairs_not_in_corpora": missing}
            threshold = calibration["threshold"]
            log(f"[calibrate] threshold {threshold:.6f}: P {calibration['precision']:.4f} "
                f"R {calibration['recall']:.4f} F1 {calibration['f1']:.4f}")
        return len(s), calibration, threshold, apply_threshold(s, a, b, threshold)

    n_candidates, calibration, threshold, (s, a, b) = clock.run("select", None, select)

    # 7. write. An older output and its summary go first: whatever is left after a failure
    # is never mistaken for this run's result.
    def write():
        for old in (summary_path(output), output):
            old.unlink(missing_ok=True)
        return write_pairs(output, s, a, b, src_corpus, tgt_corpus, with_ids)

    written = clock.run("write", None, write)
    log(f"[write] {written:,} pairs -> {output}")

    summary = {
        "output": str(output),
        "src": _side_summary(sides["src"]["meta"]),
        "tgt": _side_summary(sides["tgt"]["meta"]),
        "candidates": int(n_candidates),
        "written": int(written),
        "threshold": threshold,
        "settings": {**dataclasses.asdict(config), "encoder": ",".join(e.fingerprint() for e in encoders),
                     "index": knn["fwd"][1]["factory"], "dim": sides["src"]["dim"],
                     "workdir": str(workdir),
                     "ray": ray},
        "index": {"fwd": knn["fwd"][1], "bwd": knn["bwd"][1]},
        "calibration": calibration,
        "artefacts": {f"{side}_{kind}": str(sides[side][kind].dir) for side in sides
                      for kind in ("shard", "embed")},
        "timings": clock.stages,
        "total_seconds": round(time.perf_counter() - t_start, 3),
        "peak_rss_mb": round(peak_memory_mb(), 1),
    }
    save_json(summary_path(output), summary)
    return summary


def summary_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".summary.json")


def _side_summary(meta: dict) -> dict:
    return {k: meta[k] for k in ("path", "lang", "lines", "blank", "duplicates_removed",
                                 "sentences", "has_ids", "longest_chars")}


def load_summary(output) -> dict:
    return json.loads(summary_path(output).read_text(encoding="utf-8"))
