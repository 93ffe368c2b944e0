"""xlingua-small-v13: one directory (manifest.json and the files it lists), found by xlingua through
the `xlingua.models` entry point. It is shipped on v12 (xlingua-models-small-v12) with a student of
its own, so it ships on its own."""
