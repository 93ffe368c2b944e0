"""The meaning-embeddings training loss is the weighted sum of its terms, each switchable."""
import pytest
import torch

from xlingua.encoders.meaning_mlp import MeaningConfig, MeaningModel
from xlingua.objectives.meaning_embeddings import MeaningEmbeddingLoss


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    vecs = [torch.randn(6, 4, generator=g) for _ in range(4)]
    return (*vecs, torch.tensor([0, 0, 1, 1, 0, 1]), torch.tensor([2] * 6))


def test_the_loss_is_rec_plus_meaning_plus_weighted_language():
    torch.manual_seed(0)
    model = MeaningModel(MeaningConfig(dim=4, langs=["de", "en", "fr"]))
    parts = MeaningEmbeddingLoss(model, language_weight=2.5)(*batch())
    assert set(parts) == {"rec", "meaning", "language", "loss"}
    want = parts["rec"] + parts["meaning"] + 2.5 * parts["language"]
    assert parts["loss"].item() == pytest.approx(want.item(), rel=1e-6)
    alone = MeaningEmbeddingLoss(model, use_meaning=False, use_language=False)(*batch())
    assert set(alone) == {"rec", "loss"} and alone["loss"].item() == pytest.approx(parts["rec"].item(), rel=1e-6)
