"""xlingua-qe, qe-small and qe-cross: one directory per model (manifest.json and the files it
lists), found by xlingua through the `xlingua.models` entry points."""
