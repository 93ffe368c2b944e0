"""`xlingua extend`: teach the default model (or any e5-family model) languages it does not
read, by distillation towards its own English vectors (objectives.laser3) with pairs of its
original languages mixed in, through the trainer of xlingua.training (extend.run);
`extend.report.dev_report` measures retrieval error per language on held-out pairs before and
after. Nothing is imported here, so that each submodule loads only what it needs."""
