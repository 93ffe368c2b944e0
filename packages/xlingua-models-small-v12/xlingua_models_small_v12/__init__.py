"""xlingua-small-v12: one directory (manifest.json and the files it lists), found by xlingua through
the `xlingua.models` entry point. It is shipped on v10 (xlingua-models-small-v10) with v11's student
and more routes, so it ships on its own."""
