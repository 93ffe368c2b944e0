"""The `xlingua` command line: the app, with every command registered in the order `xlingua --help`
lists them. Each command or group has its module here (embed.py, laser.py, ...) and is thin: the
work lives in the package."""
from __future__ import annotations

import typer

from xlingua.cli.align import align_command
from xlingua.cli.bench import bench_app
from xlingua.cli.demo import demo_command
from xlingua.cli.embed import embed_command
from xlingua.cli.errors import Typer, set_debug
from xlingua.cli.eval import eval_command
from xlingua.cli.extend import extend_command, report_command
from xlingua.cli.laser import laser_app
from xlingua.cli.meaning import meaning_app
from xlingua.cli.mine import mine_command
from xlingua.cli.models import models_command
from xlingua.cli.options import MODEL_HELP  # noqa: F401  (read by tests)
from xlingua.cli.prepare import prepare_command
from xlingua.cli.qe import qe_app
from xlingua.cli.score import score_command
from xlingua.cli.serve import serve_command
from xlingua.cli.ship import ship_command
from xlingua.cli.static import static_app
from xlingua.cli.train import train_command

app = Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Multilingual sentence embeddings: embed, score, align, mine, eval, train, serve.",
)


@app.callback()
def main(debug: bool = typer.Option(False, "--debug", help="Show the traceback of an error instead of one line.")):
    """Multilingual sentence embeddings: embed, train, mine, eval."""
    set_debug(debug)


app.command("embed")(embed_command)
app.command("score")(score_command)
app.command("align")(align_command)
app.command("serve")(serve_command)
app.command("models")(models_command)
app.command("demo")(demo_command)
app.command("prepare")(prepare_command)
app.command("mine")(mine_command)
app.command("eval")(eval_command)
app.command("ship")(ship_command)
app.command("train")(train_command)
app.command("extend")(extend_command)
app.command("extend-report")(report_command)

app.add_typer(bench_app, name="bench")
app.add_typer(meaning_app, name="meaning")
app.add_typer(laser_app, name="laser")
app.add_typer(static_app, name="static")
app.add_typer(qe_app, name="qe")
