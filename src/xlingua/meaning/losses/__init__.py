"""The three losses of meaning embeddings (Tiyajamorn et al. 2021, sec. 3)."""
from xlingua.meaning.losses.language import LanguageLoss
from xlingua.meaning.losses.meaning import MeaningLoss
from xlingua.meaning.losses.reconstruction import ReconstructionLoss

__all__ = ["ReconstructionLoss", "MeaningLoss", "LanguageLoss"]
