"""Trained quality estimation: `xlingua qe train` fits heads on WMT20 MLQE-PE's train split and
chooses on its dev split; `xlingua qe ship` writes the chosen model with its manifest."""
