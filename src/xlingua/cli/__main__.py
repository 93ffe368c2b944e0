"""`python -m xlingua.cli ...` (what torchrun and the benchmark scripts run): the `xlingua` command."""
from xlingua.cli import app

app()
