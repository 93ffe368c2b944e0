"""static-small: its directory (manifest.json and the files it lists), found by xlingua through
the `xlingua.models` entry points."""
