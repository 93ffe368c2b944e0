"""OpenVINO engines for e5-small and the models shipped on it (the `openvino` extra):

  MODEL:openvino   the model converted to OpenVINO, run in fp32 (the precision hint says f32, so a
                   CPU with bf16 units does not switch to bf16 on its own)
  MODEL:ov-bf16    the same model with the precision hint bf16: fast only where the CPU has native
                   bf16 (AMX, AVX512-BF16); elsewhere OpenVINO runs it in fp32
  MODEL:ov-int8    NNCF's post-training int8 quantization (model type transformer) of that model,
                   calibrated on calibration.json (text written for xlingua in the 28 l10n
                   languages and English, none from a corpus), settings INT8: the
                   feed-forward outputs and the attention scores' inputs stay in float, since
                   quantizing them cost up to 0.03 of cosine on some sentences (docs/engines.md)
  ENGINE:PATH      each of the three on a BERT model directory, e.g. one `xlingua train` wrote
                   (`ov-bf16:runs/train/mini/best`), as `bf16:PATH` is torch bf16 on one

The conversion runs once and is cached in xlingua's cache (xlingua_home()/engines/), keyed by the
model's identity (the stamp of its cached directory, or its files), the OpenVINO (and NNCF)
version and the settings: a new model, package or setting converts again, a stale cache is never
read. Tokenization, windows, batching, pooling and normalization stay xlingua's
(TransformerEncoder); OpenVINO maps token ids to the last hidden states only.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from xlingua.encoders import engines
from xlingua.encoders.e5 import BundledTorchEncoder
from xlingua.encoders.e5_base import cached_dir
from xlingua.encoders.engines import register_engine
from xlingua.encoders.hf import LastHidden, TransformerEncoder
from xlingua.encoders.manifest import OPENVINO_DIR, OV_INT8_DIR
from xlingua.encoders.quiet import quiet_transformers
from xlingua.encoders.registry import register_spec
from xlingua.encoders.saving import XLINGUA_FILE
from xlingua.io import atomic_dir, write_json
from xlingua.paths import xlingua_home

#: bump when the conversion's output changes, so caches made by older code are rebuilt
CONVERSION_VERSION = 1
PIP = "pip install 'xlingua[openvino]'"
#: OpenVINO's inference precision hint of each engine
HINT = {"openvino": "f32", "ov-bf16": "bf16", "ov-int8": "f32"}
#: NNCF's settings for ov-int8, chosen by benchmarks/engine_cosine.py (docs/engines.md): preset
#: mixed (symmetric weights, asymmetric activations), SmoothQuant's alpha on MatMuls (-1: off),
#: the linear layers kept in float (`KEEP_FLOAT`'s kinds), NNCF's overflow fix (weights in 7
#: bits, so that CPUs without VNNI do not saturate their int16 sums: first_layer_only, enable or
#: disable) and the activations' ranges (`RANGES`: over all calibration texts, or their mean)
INT8 = {"preset": "mixed", "smooth_quant": 0.95, "keep_float": ("ffn-out", "attention"),
        "overflow_fix": "first_layer_only", "ranges": "minmax"}
#: NNCF's range estimators by name: one text a sample, a mean of each text's extremes clips the
#: longer and rarer texts that the minimum and maximum over all of them keep
RANGES = ("minmax", "mean_minmax")
#: what can be kept in float: the MatMuls of each kind of BERT linear layer, by the names the
#: converter gives them, and "attention", the query and key inputs of the attention scores
KEEP_FLOAT = {
    "qkv": r".*\.attention\.self\.(query|key|value)/.*",
    "attn-out": r".*\.attention\.output\.dense/.*",
    "ffn-in": r".*\.intermediate\.dense/.*",
    "ffn-out": r".*\.layer\.\d+\.output\.dense/.*",
    "attention": "ScaledDotProductAttention",  # an operation type, not a name
}
CALIBRATION = "calibration.json"


def to_openvino(model: torch.nn.Module):
    """A BertModel's last hidden state as an OpenVINO model (fp32), batch and length dynamic."""
    import openvino as ov

    ids = torch.tensor([[0, 5, 6, 7, 2], [0, 5, 6, 2, 1]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    shape = [("input_ids", [-1, -1], ov.Type.i64), ("attention_mask", [-1, -1], ov.Type.i64)]
    with torch.no_grad(), warnings.catch_warnings(), quiet_transformers():
        # tracing warns of Python branches on shapes; for an encoder their value is fixed
        warnings.simplefilter("ignore")
        converted = ov.convert_model(LastHidden(model).eval(), input=shape,
                                     example_input={"input_ids": ids, "attention_mask": mask})
    converted.outputs[0].get_tensor().set_names({"last_hidden_state"})
    return converted


def calibration_texts() -> list[str]:
    """The calibration sample shipped with xlingua (see the file's "source")."""
    return json.loads(resources.files("xlingua.data").joinpath(CALIBRATION).read_text(encoding="utf-8"))["texts"]


def quantize_int8(converted, tokenize, texts: list[str], settings: dict | None = None):
    """NNCF's int8 post-training quantization of `converted`, statistics from `texts` (one text
    a sample, so padding never enters the ranges); `tokenize(texts)` gives torch batches."""
    import nncf

    settings = {**INT8, **(settings or {})}
    unknown = set(settings["keep_float"]) - set(KEEP_FLOAT)
    if unknown:
        raise ValueError(f"keep_float: unknown kinds {sorted(unknown)}; choose from {', '.join(KEEP_FLOAT)}")
    if settings["ranges"] not in RANGES:
        raise ValueError(f"ranges: unknown {settings['ranges']!r}; choose from {', '.join(RANGES)}")
    samples = [{k: v.cpu().numpy() for k, v in tokenize([t]).items()} for t in texts]
    patterns = [KEEP_FLOAT[k] for k in settings["keep_float"] if k != "attention"]
    types = [KEEP_FLOAT["attention"]] if "attention" in settings["keep_float"] else []
    level = nncf.nncf_logger.level
    nncf.set_log_level(logging.WARNING)  # not a line for every layer kept in float
    try:
        return _quantize(nncf, converted, samples, settings, patterns, types)
    finally:
        nncf.set_log_level(level)


def _quantize(nncf, converted, samples: list[dict], settings: dict, patterns: list[str], types: list[str]):
    from nncf.quantization.range_estimator import RangeEstimatorParametersSet

    return nncf.quantize(
        converted, nncf.Dataset(samples), subset_size=len(samples),
        preset=nncf.QuantizationPreset(settings["preset"]), model_type=nncf.ModelType.TRANSFORMER,
        # not validated: a model converted without the attention operation has none to keep
        ignored_scope=nncf.IgnoredScope(patterns=patterns, types=types, validate=False) if patterns or types else None,
        advanced_parameters=nncf.AdvancedQuantizationParameters(
            overflow_fix=nncf.OverflowFix(settings["overflow_fix"]),
            activations_range_estimator_params=getattr(RangeEstimatorParametersSet, settings["ranges"].upper()),
            smooth_quant_alphas=nncf.AdvancedSmoothQuantParameters(matmul=settings["smooth_quant"])))


def model_identity(path: Path) -> dict:
    """What names a model directory's weights: the source stamp xlingua wrote in it (the same on
    every machine), else the sizes and times of its files."""
    meta = path / XLINGUA_FILE
    source = json.loads(meta.read_text()).get("source") if meta.is_file() else None
    if source:
        return {"source": source}
    files = sorted(path.glob("*.json")) + sorted(path.glob("*.safetensors"))
    return {"files": {f.name: [f.stat().st_size, f.stat().st_mtime_ns] for f in files}}


class OpenVinoStates:
    """Hidden states from OpenVINO for a TransformerEncoder over a BertModel directory."""

    trainable = False  # OpenVINO computes; the torch module gives the conversion and the shapes

    def _start_openvino(self, engine: str, threads: int | None, settings: dict | None = None,
                        cache: Path | None = None) -> None:
        engines.engine(engine).require(self.name)  # one line naming the pip command
        import openvino as ov

        if self.layer is not None:
            raise ValueError(f"the {engine} engine returns the last layer only; use :torch for layer=")
        self._ov_start = (engine, threads, settings, cache)  # what a copy starts again from
        settings = dict(settings or {})
        # other calibration texts than the shipped sample (benchmarks/engine_cosine.py --calibration)
        self.calibration = settings.pop("calibration", None)
        self.int8_settings = {**INT8, **settings} if engine == "ov-int8" else None
        self.ov_dir = self._converted(engine, cache)
        core = ov.Core()
        config = {"INFERENCE_PRECISION_HINT": HINT[engine], "PERFORMANCE_HINT": "LATENCY",
                  "INFERENCE_NUM_THREADS": threads or torch.get_num_threads()}
        self.compiled = core.compile_model(core.read_model(str(self.ov_dir / "model.xml")), "CPU", config)
        runs_in = str(self.compiled.get_property("INFERENCE_PRECISION_HINT"))
        self.matmul_dtype = "int8" if engine == "ov-int8" else ("bf16" if "bf16" in runs_in else "fp32")

    def _converted(self, engine: str, cache: Path | None) -> Path:
        import openvino as ov

        int8 = engine == "ov-int8"
        stamp = {"conversion": CONVERSION_VERSION, "openvino": ov.__version__,
                 "model": model_identity(Path(self.path))}
        if int8:
            import nncf

            texts = self.calibration or calibration_texts()
            # calibrated as the texts are embedded, with the prefix ("query: " or "passage: ")
            stamp.update(nncf=nncf.__version__, int8=self.int8_settings, prefix=self.prefix,
                         calibration=hashlib.sha256(json.dumps(texts).encode()).hexdigest())
        stamp = json.loads(json.dumps(stamp))  # as xlingua.json will hold it (lists, not tuples)
        label = re.sub(r"[^A-Za-z0-9._-]", "_", getattr(self, "model_name", None) or Path(self.path).name)
        tag = re.sub(r"[^A-Za-z0-9]", "", self.prefix)
        if int8 and tag:  # a cache for each prefix, not one replacing the other
            label += f"-{tag}"

        def build(out: Path, overwrite: bool) -> None:
            converted = to_openvino(self.model)
            if int8:
                converted = quantize_int8(converted, self.tokenize, texts, self.int8_settings)
            with atomic_dir(out, replace=overwrite) as tmp:
                ov.save_model(converted, str(tmp / "model.xml"), compress_to_fp16=False)
                write_json(tmp / XLINGUA_FILE, {"source": stamp, "engine": engine})

        kind = f"{OV_INT8_DIR if int8 else OPENVINO_DIR}-{label}"
        what = f"converting {label} to OpenVINO" + (" and quantizing it to int8" if int8 else "")
        return cached_dir(kind, stamp, build, what, cache or xlingua_home() / "engines")

    def fingerprint(self) -> str:
        # the converted directory's name holds the stamp's hash: another OpenVINO, NNCF or
        # setting gives other vectors, and another fingerprint
        return f"{super().fingerprint()}|{self.ov_dir.name}"

    # the compiled model does not pickle (Ray, multiprocessing): a copy compiles its own
    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "compiled"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._start_openvino(*self._ov_start)

    def _states(self, batch: dict, layer: int | None) -> torch.Tensor:
        request = self.compiled.create_infer_request()  # one per call: encode may run in threads
        out = request.infer({k: batch[k].cpu().numpy() for k in ("input_ids", "attention_mask")})
        return torch.from_numpy(np.array(out[self.compiled.output(0)], dtype=np.float32))


class BundledOpenVinoEncoder(OpenVinoStates, BundledTorchEncoder):
    """NAME:openvino, NAME:ov-bf16, NAME:ov-int8 (`model`, `alias` as BundledTorchEncoder)."""

    def __init__(self, prefix: str = "query", engine: str = "openvino", threads: int | None = None,
                 settings: dict | None = None, **options):
        """`settings`: other NNCF settings than INT8 for ov-int8, and "calibration": other texts
        than the shipped sample (benchmarks/engine_cosine.py)."""
        super().__init__(prefix=prefix, **options)
        self.name = self.name.replace(":torch", f":{engine}", 1)
        self._start_openvino(engine, threads, settings)


@register_engine("openvino", "OpenVINO, fp32", needs=("openvino",), pip=PIP)
def _openvino(**options) -> BundledOpenVinoEncoder:
    return BundledOpenVinoEncoder(engine="openvino", **options)


@register_engine("ov-bf16", "OpenVINO with the bf16 precision hint (bf16 only where the CPU has native bf16)",
                 needs=("openvino",), pip=PIP)
def _ov_bf16(**options) -> BundledOpenVinoEncoder:
    return BundledOpenVinoEncoder(engine="ov-bf16", **options)


@register_engine("ov-int8", "OpenVINO, int8 by NNCF's post-training quantization (feed-forward outputs and "
                 "attention scores in fp32)",
                 needs=("openvino", "nncf"), pip=PIP)
def _ov_int8(**options) -> BundledOpenVinoEncoder:
    return BundledOpenVinoEncoder(engine="ov-int8", **options)


class TransformerOpenVinoEncoder(OpenVinoStates, TransformerEncoder):
    """`openvino:PATH`, `ov-bf16:PATH`, `ov-int8:PATH`: a BERT model directory (e.g. one `xlingua
    train` wrote) on an OpenVINO engine, as `bf16:PATH` runs one on torch bf16. The conversion is
    cached by the directory's files, so a retrained model converts again."""

    def __init__(self, model, engine: str = "openvino", threads: int | None = None,
                 settings: dict | None = None, cache: Path | None = None, **options):
        spec = f"{engine}:{model}"
        engines.engine(engine).require(spec)  # one line naming the pip command, before loading
        super().__init__(model, **options)
        self.name = spec
        self._start_openvino(engine, threads, settings, cache)


@register_spec("openvino:PATH", "a BERT model directory (e.g. one `xlingua train` wrote) on OpenVINO, fp32")
def _openvino_dir(path: str, **options) -> TransformerOpenVinoEncoder:
    return TransformerOpenVinoEncoder(path, engine="openvino", **options)


@register_spec("ov-bf16:PATH", "a BERT model directory on OpenVINO with the bf16 precision hint "
               "(for CPUs with native bf16, like bundled:ov-bf16)")
def _ov_bf16_dir(path: str, **options) -> TransformerOpenVinoEncoder:
    return TransformerOpenVinoEncoder(path, engine="ov-bf16", **options)


@register_spec("ov-int8:PATH", "a BERT model directory on OpenVINO, int8 by NNCF (as bundled:ov-int8)")
def _ov_int8_dir(path: str, **options) -> TransformerOpenVinoEncoder:
    return TransformerOpenVinoEncoder(path, engine="ov-int8", **options)
