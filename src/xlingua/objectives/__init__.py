"""Training objectives, one loss module per file, each citing its paper."""
from xlingua.objectives.cosent import CoSENTLoss
from xlingua.objectives.distillation import DistillationLoss
from xlingua.objectives.dueam import DuEAMLoss
from xlingua.objectives.nli_classification import NLI_LABELS, NLIClassificationLoss
from xlingua.objectives.onealigner import OneAlignerLoss
from xlingua.objectives.response_ranking import ResponseRankingLoss
from xlingua.objectives.translation_ranking import TranslationRankingLoss

__all__ = ["CoSENTLoss", "DistillationLoss", "DuEAMLoss", "NLI_LABELS", "NLIClassificationLoss", "OneAlignerLoss",
           "ResponseRankingLoss", "TranslationRankingLoss"]
