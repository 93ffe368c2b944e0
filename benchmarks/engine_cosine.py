"""The cosine of each engine's vectors to the fp32 reference (MODEL:torch) on real sentences: the
quality half of choosing an engine (docs/engines.md; the speed half is `xlingua bench embed`).

The sentences are bench.embed's fixed-seed sample of both sides of the l10n dev files (28
languages and English), never the calibration text of ov-int8. `--int8 JSON` (repeatable) also
quantizes the model with other NNCF settings than openvino.INT8 ({"preset": "performance" or
"mixed", "smooth_quant": alpha or -1 for off, "keep_float": kinds of linear layers kept in float,
of openvino.KEEP_FLOAT}) and measures each, so that the settings ov-int8 ships with are chosen
on the same sentences. `--calibration FILE` (repeatable; JSON with "texts", as
src/xlingua/data/calibration.json, or one text a line) quantizes with the shipped settings but
other calibration texts, and measures each.

    nice -n 19 python benchmarks/engine_cosine.py --n 2000 --engine openvino --engine ov-bf16 \
        --engine ov-int8 --int8 '{"keep_float": []}' --out runs/bench/engine_cosine
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from xlingua.bench.embed import _machine, sample_sentences
from xlingua.encoders.loading import load_encoder
from xlingua.io import save_npy, stable_hash, write_json, write_text


def cosines(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    unit = [x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12) for x in (got, ref)]
    return (unit[0] * unit[1]).sum(axis=1)


def read_calibration(path: Path) -> list[str]:
    """Calibration texts: a JSON file's "texts", or the non-empty lines of a text file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)["texts"]
    return [line for line in text.splitlines() if line.strip()]


def measure(model: str, engines: list[str], int8: list[dict], n: int, seed: int, out: Path, log=print,
            calibrations: tuple[Path, ...] = ()) -> dict:
    texts = sample_sentences(n, seed)
    t0 = time.perf_counter()
    reference = load_encoder(f"{model}:torch")
    # the reference's vectors are kept between runs (they take longest): named by its fingerprint
    out.mkdir(parents=True, exist_ok=True)
    saved = out / f"reference-{stable_hash([reference.fingerprint(), n, seed], 12)}.npy"
    if saved.is_file():
        ref = np.load(saved)
    else:
        ref = reference.encode(texts)
        save_npy(saved, ref)
    del reference
    log(f"{model}:torch: {time.perf_counter() - t0:.0f} s")
    runs = ([(e, None, None) for e in engines] + [("ov-int8", s, None) for s in int8]
            + [("ov-int8", {"calibration": read_calibration(f)}, f) for f in calibrations])
    rows = []
    for engine, settings, calibration in runs:
        t0 = time.perf_counter()
        enc = load_encoder(f"{model}:{engine}", **({"settings": settings} if settings else {}))
        cos = cosines(enc.encode(texts), ref)
        shown = {"calibration": str(calibration)} if calibration else settings
        rows.append({"engine": engine, "settings": shown or getattr(enc, "int8_settings", None),
                     "runs_in": getattr(enc, "matmul_dtype", None),
                     "cosine_mean": round(float(cos.mean()), 5), "cosine_min": round(float(cos.min()), 5),
                     "worst": texts[int(cos.argmin())][:80]})
        log(f"{engine} {shown or ''}: mean {cos.mean():.5f}, min {cos.min():.5f} "
            f"({time.perf_counter() - t0:.0f} s)")
    return {"model": model, "sentences": n, "seed": seed, "machine": _machine(),
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "rows": rows}


def markdown(report: dict) -> str:
    lines = [f"{report['model']}, {report['sentences']:,} l10n dev sentences (seed {report['seed']}); "
             f"{report['machine']}; {report['date']}.", "",
             "| engine | settings | runs in | cosine to fp32 mean | min |", "|---|---|---|---:|---:|"]
    for r in report["rows"]:
        settings = json.dumps(r["settings"]) if r["settings"] else ""
        lines.append(f"| {r['engine']} | {settings} | {r['runs_in']} | {r['cosine_mean']:.5f} | {r['cosine_min']:.5f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--engine", action="append", default=[], help="an engine to measure (repeatable)")
    ap.add_argument("--int8", action="append", default=[], type=json.loads,
                    help="other NNCF settings for ov-int8, as JSON (repeatable)")
    ap.add_argument("--calibration", action="append", default=[], type=Path,
                    help="ov-int8 calibrated on these texts instead of the shipped sample (repeatable)")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("runs/bench/engine_cosine"))
    args = ap.parse_args(argv)
    report = measure(args.model, args.engine, args.int8, args.n, args.seed, args.out, calibrations=args.calibration)
    write_json(args.out / "engine_cosine.json", report)
    write_text(args.out / "engine_cosine.md", markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
