"""`mine`: the whole bitext-mining pipeline, each step cached in the work directory.

[prepare ->] shard [-> language check, two stages] -> embed (float16; or import the rows `xlingua embed` wrote) -> index ->
kNN both ways -> score [-> rescore by a second model] -> select -> write. Every step follows
mining.step: its directory is keyed by its config and its inputs' keys, and each step's output
is the next one's typed input; a rerun (also after kill -9) reuses finished steps and shard
files, and writes byte-identical output."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from xlingua.data.langs import normalize_lang
from xlingua.data.spool import Spool
from xlingua.data.text import read_gold, shown
from xlingua.encoders.base import Encoder
from xlingua.io import check_writable
from xlingua.mining.cache import peak_memory_mb, save_json
from xlingua.mining.corpus import ShardedCorpus, Shards, ShardStep, shard_config
from xlingua.mining.embed import (ConcatConfig, ConcatStep, EmbedConfig, EmbedStep, ImportStep, Vectors,
                                  import_config, resolve_encoder)
from xlingua.mining.gold import calibration, check_gold
from xlingua.mining.knn import IndexConfig, IndexStep, KnnConfig, KnnStep, Neighbours
from xlingua.mining.rescore import CANDIDATE_THRESHOLD, THRESHOLD, RescoreConfig, Rescored, RescoreStep
from xlingua.mining.runner import Runner
from xlingua.mining.score import Best, ScoreStep, ScoreStepConfig
from xlingua.mining.write import write_pairs
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
    src_embeddings: str | None = None  # a store `xlingua embed -o DIR --shard-size N` wrote
    tgt_embeddings: str | None = None
    rescore: str | None = None  # a second model that re-scores the first one's candidates (mining.rescore)
    candidate_threshold: float = CANDIDATE_THRESHOLD  # with rescore: the first model's margin a candidate needs
    keep: float | None = None  # with rescore: an optional cap on candidates, a fraction of the source sentences
    # only lines identified as their side's language are mined (mining.lid); None: with rescore only
    lid: bool | None = None

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
        if self.rescore is not None and self.keep is not None and not 0 < self.keep <= 1:
            raise ValueError(f"keep must be in (0, 1], got {self.keep}")


def default_workdir() -> Path:
    from xlingua.paths import xlingua_home

    return xlingua_home() / "mine"


def mine(src: str | Path, tgt: str | Path, output: str | Path, config: MineConfig,
         workdir: str | Path | None = None, encoder: Encoder | None = None,
         ray: str | None = None, calibrate: str | Path | None = None,
         show_progress: bool = True, prepare_format: str | None = None,
         rescore_encoder: Encoder | None = None) -> dict:
    """Mine `src` x `tgt` into `output` (gzipped TSV) and `<output>.summary.json`.

    `config.model` may list several encoder specs ("bundled,use"): their cosines are averaged
    (see ConcatStep). `encoder` (one Encoder or a list) overrides config.model, and
    `rescore_encoder` config.rescore.
    `config.src_embeddings` / `tgt_embeddings` take a side's vectors from a store that
    `xlingua embed` wrote for the same file instead of embedding it. With `prepare_format`
    the two inputs are raw documents in that format (see mining.prepare): each is prepared
    first, with default settings, and its sentences are mined. An input may be a pipe or `-`
    (stdin): it is read once into a checked copy in the work directory (data.spool), removed
    at the end; the steps key it by content, so the same bytes piped again reuse the cache."""
    config.validate()
    if calibrate is not None and config.threshold is not None:
        raise ValueError("give either a threshold or a gold set to calibrate one, not both")
    workdir = Path(workdir) if workdir else default_workdir()
    check_writable(output)
    inputs = [src, tgt] + ([calibrate] if calibrate is not None else [])
    with Spool(inputs, workdir) as spool:
        src, tgt, *gold = spool.paths
        return _mine(src, tgt, Path(output), config, workdir, encoder, ray, gold[0] if gold else None,
                     show_progress, prepare_format, rescore_encoder)


def _mine(src: str, tgt: str, output: Path, config: MineConfig, workdir: Path, encoder, ray, calibrate,
          show_progress: bool, prepare_format: str | None, rescore_encoder) -> dict:
    gold_lines = read_gold(calibrate) if calibrate is not None else None
    runner = Runner(ray, show_progress=show_progress)
    t_start = time.perf_counter()
    prepared = {}
    if prepare_format is not None:
        prepared = _prepare(runner, workdir, config, {"src": src, "tgt": tgt}, prepare_format)
        src, tgt = prepared["src"]["output"], prepared["tgt"]["output"]
    shards = _shard(runner, workdir, config, {"src": src, "tgt": tgt})
    # a bad gold file fails before any embedding
    gold = None if gold_lines is None else check_gold(gold_lines, shown(calibrate), shards["src"], shards["tgt"])
    read = shards
    two_stage = config.rescore is not None or rescore_encoder is not None
    if (two_stage if config.lid is None else config.lid) and prepare_format is None:
        shards = _lid(runner, workdir, shards)  # prepare has identified them already
    done = _run_steps(runner, workdir, config, shards, encoder, rescore_encoder)
    corpora = {name: ShardedCorpus(s) for name, s in shards.items()}
    with runner.timed("select"):
        candidates = done.rescored.load() if done.rescored else select_pairs(done.best.load(), config.mode)
        found = None if gold is None else _calibrate(runner, candidates, gold, corpora)
        threshold = found["threshold"] if found else config.threshold
        if threshold is None and done.rescored:
            threshold = THRESHOLD  # two stages write what the second margin accepts
        pairs = apply_threshold(*candidates, threshold)
    with runner.timed("write"):
        written = _write(output, *pairs, corpora["src"], corpora["tgt"])
    runner.log(f"[write] {written:,} pairs -> {output}")
    src_vectors = done.vectors["src"]
    summary = {
        "output": str(output),
        **{name: _side_summary(s) for name, s in read.items()},
        "identified": {name: s.sentences for name, s in shards.items()} if shards is not read else None,
        "candidates": int(len(candidates[0])),
        "written": int(written),
        "threshold": threshold,
        "settings": {**dataclasses.asdict(config), "encoder": src_vectors.model,
                     "index": done.knn["fwd"].factory, "dim": src_vectors.dim,
                     "workdir": str(workdir), "ray": ray},
        "index": {name: n.summary() for name, n in done.knn.items()},
        "calibration": found,
        "rescore": done.rescored.summary() if done.rescored else None,
        "prepare": prepared or None,
        "artefacts": {f"{name}_{kind}": out.dir for name in ("src", "tgt")
                      for kind, out in (("shard", shards[name]), ("embed", done.vectors[name]))},
        "timings": runner.timings,
        "total_seconds": round(time.perf_counter() - t_start, 3),
        "peak_rss_mb": round(peak_memory_mb(), 1),
    }
    try:
        save_json(summary_path(output), summary)
    except BaseException:
        output.unlink(missing_ok=True)  # pairs without their summary are not a finished run
        raise
    return summary


@dataclasses.dataclass
class _Done:
    """The outputs of the steps after the shards."""
    vectors: dict[str, Vectors]
    knn: dict[str, Neighbours]
    best: Best
    rescored: Rescored | None


def _run_steps(runner: Runner, workdir: Path, config: MineConfig, shards: dict[str, Shards], encoder,
               rescore_encoder) -> _Done:
    vectors = _vectors(runner, workdir, config, shards, encoder)
    knn = {"fwd": _knn(runner, workdir, config, vectors["src"], vectors["tgt"], "fwd"),
           "bwd": _knn(runner, workdir, config, vectors["tgt"], vectors["src"], "bwd")}
    best = runner.run(ScoreStep(ScoreStepConfig(knn["fwd"], knn["bwd"], vectors["src"], vectors["tgt"],
                                                config.margin, config.k, config.alpha), workdir), "score")
    rescored = None
    if config.rescore or rescore_encoder is not None:
        rescored = _rescore(runner, workdir, config, knn, shards,
                            rescore_encoder or resolve_encoder(config.rescore))
    return _Done(vectors, knn, best, rescored)


def _prepare(runner: Runner, workdir: Path, config: MineConfig, paths: dict, fmt: str) -> dict:
    """0. Raw documents -> sentences in each side's language (mining.prepare, defaults)."""
    from xlingua.mining.prepare import PrepareConfig, prepare

    out = {}
    for name, lang in (("src", config.src_lang), ("tgt", config.tgt_lang)):
        out[name] = prepare([paths[name]], workdir / "prepared" / name, PrepareConfig(lang, format=fmt),
                            workdir=workdir, runner=runner, side=name)
        runner.log(f"[prepare] {name}: kept {out[name]['kept']:,} of {out[name]['sentences']:,} sentences")
    return out


def _shard(runner: Runner, workdir: Path, config: MineConfig, paths: dict) -> dict[str, Shards]:
    """1. Each corpus into shards of sentences (blank lines, and with dedup repeats, skipped)."""
    out = {}
    for name, lang in (("src", config.src_lang), ("tgt", config.tgt_lang)):
        step = ShardStep(shard_config(paths[name], lang, config.shard_size, config.dedup, config.check_lang), workdir)
        out[name] = runner.run(step, f"shard_{name}")
        runner.log(f"[shard] {name}: {out[name].sentences:,} sentences in {len(out[name].sizes)} shard(s)")
    if out["src"].has_ids != out["tgt"].has_ids:
        name = "src" if out["src"].has_ids else "tgt"
        raise ValueError(f"unequal id formats: {name} file {out[name].path} has id<TAB>sentence lines, "
                         "the other has none; give ids on both sides or on neither")
    return out


def _lid(runner: Runner, workdir: Path, shards: dict[str, Shards]) -> dict[str, Shards]:
    """1b. Each side's lines identified as its language (mining.lid); a language identification
    mistakes too often (data.langid) keeps every line."""
    from xlingua.data.langid import lid_threshold
    from xlingua.mining.lid import LidConfig, LidStep

    out = {}
    for name, side in shards.items():
        if lid_threshold(side.lang) is None:
            runner.log(f"[lid] {name}: {side.lang} is not identified reliably; every line kept")
            out[name] = side
            continue
        out[name] = runner.run(LidStep(LidConfig(side), workdir), f"lid_{name}")
        runner.log(f"[lid] {name}: {out[name].sentences:,} of {side.sentences:,} sentences identified as {side.lang}")
    return out


def _vectors(runner: Runner, workdir: Path, config: MineConfig, shards: dict, encoder) -> dict[str, Vectors]:
    """2. Each side's unit vectors: imported from a store, or one embedding per encoder
    (several are combined into one, ConcatStep). Both sides must come from the same model."""
    stores = {"src": config.src_embeddings, "tgt": config.tgt_embeddings}
    encoders = [] if all(stores.values()) else _encoders(config, encoder)
    out = {}
    for name, side in shards.items():
        if stores[name]:
            out[name] = runner.run(ImportStep(import_config(side, stores[name]), workdir), f"import_{name}")
            runner.log(f"[import] {name}: rows of {stores[name]}")
            continue
        parts = []
        for enc in encoders:
            label = f"embed_{name}" if len(encoders) == 1 else f"embed_{name}_{enc.name}"
            step = EmbedStep(EmbedConfig(side, enc.fingerprint(), config.batch_size), workdir, enc)
            parts.append(runner.run(step, label))
            runner.log(f"[embed] {name} {enc.name}: {'cached' if runner.timings[label]['cached'] else 'computed'}")
        out[name] = parts[0] if len(parts) == 1 else runner.run(
            ConcatStep(ConcatConfig(tuple(parts)), workdir), f"combine_{name}")
    src, tgt = out["src"], out["tgt"]
    if src.model != tgt.model or src.dim != tgt.dim:
        raise ValueError(f"the two sides' vectors come from different models ({src.model}, {src.dim}-d; "
                         f"{tgt.model}, {tgt.dim}-d): embed both with the same model")
    return out


def _encoders(config: MineConfig, encoder) -> list[Encoder]:
    if encoder is not None:
        return list(encoder) if isinstance(encoder, (list, tuple)) else [encoder]
    return [resolve_encoder(m.strip()) for m in config.model.split(",") if m.strip()]


def _knn(runner: Runner, workdir: Path, config: MineConfig, query: Vectors, db: Vectors, name: str) -> Neighbours:
    """3-4. Index the database side, search it with every shard of the query side."""
    db_name = "tgt" if name == "fwd" else "src"
    index = runner.run(IndexStep(IndexConfig(db, config.index, config.flat_max_bytes), workdir), f"index_{db_name}")
    knn = runner.run(KnnStep(KnnConfig(index, query, db, config.k, config.nprobe, _precision()), workdir),
                     f"knn_{name}")
    runner.log(f"[knn] {name}: index {index.factory}" + (f", recall {knn.recall}" if knn.recall else ""))
    return knn


def _precision() -> str:
    """Exact search multiplies in bf16 where the CPU has bf16 units (docs/guide/mining.md)."""
    from xlingua.encoders.cpu import native_bf16

    return "bf16" if native_bf16() else "fp32"


def _rescore(runner: Runner, workdir: Path, config: MineConfig, knn: dict, shards: dict, encoder: Encoder):
    """5b. The second model's margin of the first model's candidates (mining.rescore)."""
    step = RescoreStep(RescoreConfig(knn["fwd"], knn["bwd"], shards["src"], shards["tgt"], config.margin,
                                     config.k, config.candidate_threshold, config.keep, config.mode,
                                     _precision(), encoder.fingerprint()), workdir, encoder)
    out = runner.run(step, "rescore")
    runner.log(f"[rescore] {encoder.name}: {out.candidates:,} candidates over {config.candidate_threshold:g}, "
               f"{out.embedded_src + out.embedded_tgt:,} sentences re-embedded, {out.kept:,} pairs")
    return out


def _calibrate(runner: Runner, candidates: tuple, gold: set, corpora: dict) -> dict:
    """6. The threshold calibrated on the gold pairs (mining.gold)."""
    c = calibration(candidates, gold, corpora["src"], corpora["tgt"])
    runner.log(f"[calibrate] threshold {c['threshold']:.6f}: P {c['precision']:.4f} "
               f"R {c['recall']:.4f} F1 {c['f1']:.4f}")
    return c


def _write(output: Path, s, a, b, src: ShardedCorpus, tgt: ShardedCorpus) -> int:
    """7. The pairs file. An older output and its summary go first: whatever is left after a
    failure is never mistaken for this run's result."""
    for old in (summary_path(output), output):
        old.unlink(missing_ok=True)
    return write_pairs(output, s, a, b, src, tgt)


def summary_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".summary.json")


def _side_summary(shards: Shards) -> dict:
    return {k: getattr(shards, k) for k in ("path", "lang", "lines", "blank", "duplicates_removed",
                                            "sentences", "has_ids", "longest_chars")}


def load_summary(output) -> dict:
    return json.loads(summary_path(output).read_text(encoding="utf-8"))
