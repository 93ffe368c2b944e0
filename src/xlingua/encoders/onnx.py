"""`bundled:onnx`: the bundled e5-small exported to ONNX (fp32) and run by ONNX Runtime with
all graph optimizations. Measured beside the other paths in
`xlingua bench embed`; on the project machine it ran at 1.65x torch fp32 but about half the
speed of bundled:bf16 (docs/results.md), so it is selectable but not the default. Needs the
`onnx` extra.

The export is made once, beside the converted model (`<model dir>/onnx/model.onnx`), so it is
rebuilt whenever the converted model is. The same holds for the models shipped on e5-small
(`xlingua-small:onnx`): each exports its own cached directory.
"""
from __future__ import annotations

from pathlib import Path

import torch

from xlingua.encoders.e5 import BundledTorchEncoder
from xlingua.encoders.engines import register_engine
from xlingua.encoders.hf import LastHidden
from xlingua.io import atomic_path

OPSET = 17


def export_onnx(model, path: Path) -> Path:
    """Export a BertModel's last hidden state with dynamic batch and length (atomically)."""
    ids = torch.tensor([[0, 5, 6, 7, 2], [0, 5, 6, 2, 1]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    axes = {0: "batch", 1: "tokens"}
    with atomic_path(path) as tmp, torch.no_grad():
        torch.onnx.export(LastHidden(model).eval(), (ids, mask), str(tmp),
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], opset_version=OPSET,
                          dynamic_axes={"input_ids": axes, "attention_mask": axes,
                                        "last_hidden_state": axes}, dynamo=False)
    return path


class BundledOnnxEncoder(BundledTorchEncoder):
    trainable = False  # the exported graph runs; the torch module is not what computes

    def __init__(self, prefix: str = "query", threads: int | None = None, **options):
        try:
            import onnxruntime as ort
        except ImportError:
            raise ImportError("bundled:onnx needs onnxruntime: pip install 'xlingua[onnx]'") from None
        super().__init__(prefix=prefix, **options)
        if self.layer is not None:
            raise ValueError("bundled:onnx exports the last layer only; use bundled:torch for layer=")
        path = self.path / "onnx" / "model.onnx"
        if not path.is_file():
            export_onnx(self.model, path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or torch.get_num_threads()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.name = self.name.replace(":torch", ":onnx", 1)

    def _states(self, batch: dict, layer: int | None) -> torch.Tensor:
        feeds = {k: batch[k].cpu().numpy() for k in ("input_ids", "attention_mask")}
        return torch.from_numpy(self.session.run(None, feeds)[0])


@register_engine("onnx", "exported to ONNX, run by ONNX Runtime in fp32", needs=("onnx", "onnxruntime"),
                 pip="pip install 'xlingua[onnx]'")
def _onnx(**options) -> BundledOnnxEncoder:
    return BundledOnnxEncoder(**options)
