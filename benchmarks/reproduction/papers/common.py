"""What the papers' plans share: the settings every run trains with (so that all runs of a
comparison are at equal compute), the tasks they are built of, and the Tatoeba figures read."""

from ..comparison import Run
from ..settings import DEV_LANGS, START, TATOEBA_CODE

STEPS, BATCH, LENGTH = 600, 32, 64
COMMON = {"model": START, "max_steps": STEPS, "batch_size": BATCH, "grad_accum": 1, "max_seq_length": LENGTH,
          "warmup_steps": 60, "schedule": "linear", "sampling": "cycle", "precision": "fp32",
          "log_every": 1, "eval_every": STEPS, "checkpoint_every": 100,
          "eval": {"general_langs": DEV_LANGS, "limit": 200}}


def general(langs=None, limit=None) -> dict:
    spec = {"type": "general"}
    if langs is not None:
        spec["langs"] = list(langs)
    if limit:
        spec["limit"] = limit
    return spec


def ranking(data, name="translation", **options) -> dict:
    return {"name": name, "objective": "translation_ranking", "data": data,
            "options": {"scale": 20, "margin": 0.2, **options}}


def aligner(data, name="onealigner", **options) -> dict:
    return {"name": name, "objective": "onealigner", "data": data,
            "options": {"alpha": 0.5, "scale": 20, "layer": -1, **options}}


def run(name, recipe, tasks, seed=0, note="") -> Run:
    return Run(name, recipe, {**COMMON, "tasks": tasks, "seed": seed}, note)


TATOEBA_BOTH = ("acc cosine xx-en", "acc cosine en-xx")
TATOEBA_ROWS = ("cosine xx-en", "cosine en-xx")  # the same per language (the task's row keys)
TATOEBA_MARGIN = ("acc margin xx-en", "acc margin en-xx")
TATOEBA_BERTSCORE = ("acc bertscore-inbatch xx-en", "acc bertscore-inbatch en-xx")


def tatoeba_codes(langs) -> tuple:
    return tuple(TATOEBA_CODE[l] for l in langs)
