"""Where things are, the start model, the dev languages and the reference figures the cost
estimates scale from; the file names a run directory holds."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
DEFAULT_ROOT = Path("runs") / "reproduce"
START = "e5-small:torch"  # the start of the default model
# the general corpus's 20 dev languages (xlingua.data.general.DEV_LANGS): the dev slices
DEV_LANGS = ["ar", "de", "el", "es", "et", "fi", "fr", "hi", "ja", "ko",
             "ne", "ro", "ru", "si", "sw", "ta", "th", "tr", "vi", "zh"]
# Tatoeba's file codes of the languages the plans train on
TATOEBA_CODE = {"ar": "ara", "de": "deu", "es": "spa", "fr": "fra", "it": "ita", "ja": "jpn", "ko": "kor",
                "nl": "nld", "pl": "pol", "pt": "por", "ru": "rus", "th": "tha", "tr": "tur", "zh": "cmn",
                "zh-Hant": "cmn"}
# Cost model (docs/results.md, "Training" and "Embedding speed", 2-core AMD EPYC): 12 steps of
# batch 32 at max length 64 took 61.6 s in fp32; bundled:torch (fp32) embeds 46.4 sentences/s.
REF_STEP_SECONDS, REF_BATCH, REF_LENGTH = 61.6 / 12, 32, 64
SENTENCES_PER_SECOND = 46.4
HARD_NEGATIVE_COST = 1.5  # a third encoder pass per step
# settings a comparison may vary between its runs; everything else must be equal
VARIED = ("tasks", "seed", "output_dir")
DONE = "done.json"
RECIPE = "recipe.yaml"
#: the encoder spec a run's final model (or the start model) is evaluated through, by precision
EVAL_SPECS = {"fp32": ("{}", {START: START}),
              "bf16": ("bf16:{}", {START: "e5-small:bf16", "bundled": "bundled:bf16"})}
