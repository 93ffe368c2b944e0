"""Similarity functions between sentence embeddings: cosine, margin, CSLS, in-batch
normalization (OneAligner). BERTScore and WMD over token embeddings live beside them."""
from xlingua.similarity.cosine import cosine_matrix, normalize_rows, paired_cosine
from xlingua.similarity.csls import csls_matrix
from xlingua.similarity.inbatch import inbatch_normalize
from xlingua.similarity.margin import (MARGINS, apply_margin, knn_mean, margin_matrix, pair_margin,
                                       side_knn_means)

__all__ = ["cosine_matrix", "normalize_rows", "paired_cosine", "csls_matrix", "inbatch_normalize",
           "MARGINS", "apply_margin", "knn_mean", "margin_matrix", "pair_margin", "side_knn_means"]
