"""Sentence encoders: backbones, pooling, model loading and conversion."""
