"""Weight-space mixing of a fine-tuned model with the model it started from (WiSE-FT: Wortsman et
al. 2022, "Robust fine-tuning of zero-shot models"): base + alpha * (trained - base), tensor by
tensor. alpha = 1 is the trained model, 0 the start; values between keep most of what training
gained on its own data while giving back less of what the start model did well elsewhere."""
from __future__ import annotations

import shutil
from pathlib import Path

from xlingua.encoders.overlay import WEIGHTS
from xlingua.io import atomic_dir


def mix_weights(trained: str | Path, base: str | Path, alpha: float, out: str | Path) -> Path:
    """Write `trained` with every weight replaced by base + alpha * (trained - base) to `out`
    (a sentence-transformers directory like `trained`; complete or absent)."""
    from safetensors.torch import load_file, save_file

    trained, base, out = Path(trained), Path(base), Path(out)
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    ours, theirs = load_file(str(trained / WEIGHTS)), load_file(str(base / WEIGHTS))
    missing = sorted(set(theirs) - set(ours))
    if missing:
        raise ValueError(f"{trained / WEIGHTS}: lacks {len(missing)} tensor(s) of {base / WEIGHTS} (e.g. {missing[:3]})")
    for name, t in ours.items():
        if name in theirs and t.shape != theirs[name].shape:
            raise ValueError(f"{trained / WEIGHTS}: {name} is {tuple(t.shape)}, "
                             f"{tuple(theirs[name].shape)} in {base / WEIGHTS}")
    # a tensor the start model lacks (a pooler training added) has nothing to mix with: kept as trained
    mixed = {k: t if k not in theirs else (theirs[k].float() + alpha * (t.float() - theirs[k].float())).to(t.dtype)
             for k, t in ours.items()}
    with atomic_dir(out) as tmp:
        for item in trained.iterdir():
            if item.name != WEIGHTS:
                (shutil.copytree if item.is_dir() else shutil.copyfile)(item, tmp / item.name)
        save_file(mixed, str(tmp / WEIGHTS), metadata={"format": "pt"})
    return out
