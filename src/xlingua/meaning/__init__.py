"""Meaning embeddings (Tiyajamorn et al. 2021, "Language-agnostic Representation from
Multilingual Sentence Encoders for Cross-lingual Similarity Estimation"): three small MLPs on
a frozen encoder split each vector into a meaning part and a language part."""
