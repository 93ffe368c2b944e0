"""xlingua-small-v7: one directory (manifest.json and the files it lists), found by xlingua through
the `xlingua.models` entry point. A superseded version whose student is too large to stay in
xlingua-models-small beside the default."""
