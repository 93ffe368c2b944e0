"""Bitext mining (LASER / CCMatrix / stopes style): `mine(src, tgt, output, MineConfig(...))`."""
from xlingua.mining.pipeline import MineConfig, load_summary, mine, summary_path

__all__ = ["MineConfig", "mine", "load_summary", "summary_path"]
