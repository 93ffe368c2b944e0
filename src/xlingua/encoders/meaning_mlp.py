"""The three networks of meaning embeddings: MLP_M (meaning part), MLP_L (language part) and
MLP_I (language identification from the language part), on frozen encoder vectors."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch
from torch import nn


@dataclass
class MeaningConfig:
    dim: int
    langs: list[str] = field(default_factory=list)  # index = language id for MLP_I
    hidden: int = 0  # 0: same as dim
    base: str = ""  # name of the base encoder the MLPs were trained on
    base_fingerprint: str = ""
    residual: bool = False  # meaning = e + MLP_M(e), MLP_M's last layer starting at zero

    def to_dict(self) -> dict:
        return asdict(self)


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))


class MeaningModel(nn.Module):
    def __init__(self, config: MeaningConfig):
        super().__init__()
        self.config = config
        h = config.hidden or config.dim
        self.mlp_m = _mlp(config.dim, h, config.dim)
        self.mlp_l = _mlp(config.dim, h, config.dim)
        self.mlp_i = _mlp(config.dim, h, max(len(config.langs), 1))
        if config.residual:
            # Training starts from the base vectors themselves (and their graded similarity, which
            # STS measures) and moves only as far as the losses ask.
            nn.init.zeros_(self.mlp_m[2].weight)
            nn.init.zeros_(self.mlp_m[2].bias)

    def meaning(self, e: torch.Tensor) -> torch.Tensor:
        m = self.mlp_m(e)
        return e + m if self.config.residual else m

    def forward(self, e: torch.Tensor):
        """(meaning, language) parts of base vectors e."""
        return self.meaning(e), self.mlp_l(e)

    def save(self, path) -> None:
        from xlingua.io import save_torch

        save_torch(path, {"config": self.config.to_dict(), "state": self.state_dict()})

    @classmethod
    def load(cls, path) -> "MeaningModel":
        blob = torch.load(path, map_location="cpu", weights_only=True)
        model = cls(MeaningConfig(**blob["config"]))
        model.load_state_dict(blob["state"])
        model.eval()
        return model
