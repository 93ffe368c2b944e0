"""The shipping format of a static encoder: its directory (vectors.safetensors, static.json, a
local tokenizer's files) with manifest.json (xlingua.encoders.manifest: checksums, sizes, fingerprint, probe vectors,
where it came from). Loading a shipped directory checks the files first."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from xlingua.encoders.manifest import FORMAT, MANIFEST, PROBES, file_records, probe_record
from xlingua.encoders.static import CONFIG, VECTORS, StaticEncoder, quantize_int8
from xlingua.io import atomic_dir, write_json

def ship(run: str | os.PathLike, out: str | os.PathLike, dtype: str = "float16") -> dict:
    """Write the dev-chosen model of a `xlingua static train` run (RUN/model, or a static
    encoder directory) to `out`, its vectors as `dtype` (float16, or int8 with a scale per row:
    half the size); `out` appears complete or not at all."""
    run = Path(run)
    source = run / "model" if (run / "model" / VECTORS).exists() else run
    if dtype not in ("float16", "int8"):
        raise ValueError(f"dtype must be float16 or int8, got {dtype!r}")
    original = StaticEncoder(source)  # refuses what is not a static encoder
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; remove it or choose another --out")
    files = sorted(f.name for f in source.iterdir() if f.is_file() and f.name != MANIFEST)  # a local tokenizer too
    with atomic_dir(out, replace=False) as tmp:
        for name in files:
            shutil.copyfile(source / name, tmp / name)
        arrays = load_file(str(source / VECTORS))
        stored = quantize_int8(original.vectors) if dtype == "int8" else {"vectors": original.vectors.astype(np.float16)}
        save_file({**stored, "token_ids": arrays["token_ids"]}, str(tmp / VECTORS))
        shipped = StaticEncoder(tmp)
        config = run / "config.json"
        manifest = {
            "format": FORMAT,
            **file_records(tmp, files),
            "fingerprint": shipped.fingerprint(),
            "dim": shipped.dim,
            "rows": int(shipped.vectors.shape[0]),
            "dtype": dtype,
            "probes": probe_record(shipped.encode(list(PROBES))),
            "source": {"model": json.loads((source / CONFIG).read_text(encoding="utf-8")),
                       "train_config": json.loads(config.read_text(encoding="utf-8")) if config.exists() else None},
        }
        write_json(tmp / MANIFEST, manifest)
    return manifest
