"""FAISS k-nearest-neighbour search: exact when it fits, IVF-PQ chosen by corpus size."""
from xlingua.index.factory import (DEFAULT_FLAT_MAX_BYTES, DEFAULT_NPROBE, build_index,
                                   choose_index, ivfpq_string, load_index, save_index)
from xlingua.index.search import exact_knn_streamed, flat_index, recall, search

__all__ = ["DEFAULT_FLAT_MAX_BYTES", "DEFAULT_NPROBE", "build_index", "choose_index",
           "ivfpq_string", "load_index", "save_index", "exact_knn_streamed", "flat_index",
           "recall", "search"]
