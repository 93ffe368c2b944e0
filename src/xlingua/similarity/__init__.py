"""Every similarity, scoring and selection rule, once: cosine; bitext scores (ratio / distance
margin, CSLS, in-batch, plain cosine) dense or from neighbour lists; LASER's selection modes;
threshold calibration; retrieval accuracy. BERTScore and WMD over token embeddings live beside
them."""
from xlingua.similarity.bitext import both_directions, knn_stat
from xlingua.similarity.cosine import cosine_matrix, normalize_rows, paired_cosine
from xlingua.similarity.inbatch import inbatch_normalize
from xlingua.similarity.margin import (SCORES, check_score, knn_mean, pair_margin, pair_scores,
                                       score_matrix, side_knn_means)
from xlingua.similarity.retrieval import retrieval_accuracy
from xlingua.similarity.select import MODES, select_pairs

__all__ = ["both_directions", "knn_stat", "cosine_matrix", "normalize_rows", "paired_cosine",
           "inbatch_normalize", "SCORES", "check_score", "knn_mean", "pair_margin", "pair_scores",
           "score_matrix", "side_knn_means", "retrieval_accuracy", "MODES", "select_pairs"]
