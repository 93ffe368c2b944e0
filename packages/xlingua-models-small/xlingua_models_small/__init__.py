"""xlingua-small, xlingua-small-v2 and meaning-bundled: one directory per model (manifest.json and
the files it lists), found by xlingua through the `xlingua.models` entry points."""
