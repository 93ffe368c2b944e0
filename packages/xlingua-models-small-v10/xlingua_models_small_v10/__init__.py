"""xlingua-small-v10: one directory (manifest.json and the files it lists), found by xlingua through
the `xlingua.models` entry point. Its student, routed beside v8, would take xlingua-models-small
past 100 MB, so it ships on its own."""
