"""`xlingua train CONFIG.yaml [--set KEY=VALUE ...]`: every training recipe through the one
training loop. The config's `recipe:` names it: `encoder` (the default: fine-tuning a sentence
encoder with xlingua.objectives' tasks, training.trainer), `laser` (laser.config), `meaning`
(meaning.recipe) or `static` (static.train); `xlingua laser train`, `xlingua meaning train` and
`xlingua static train` build the same configs."""
from __future__ import annotations

import typer

from xlingua.cli.options import option

RECIPES = ("encoder", "laser", "meaning", "static")


def train_command(
    config: str = typer.Argument(..., help="Training config (YAML), e.g. configs/train_translation_ranking.yaml; "
                                 "`recipe: laser`, `recipe: meaning` or `recipe: static` trains those models."),
    resume: bool = typer.Option(False, "--resume", help="encoder: continue from OUTPUT_DIR/checkpoint.pt (same data "
                                "order, same result); laser, meaning and static always go on from their checkpoint."),
    output_dir: str = option(None, "--output", "--output-dir", help="Override the config's output_dir."),
    model: str = option(None, "--model", help="Override the config's model (encoder: bundled:torch or a model dir)."),
    max_steps: int = typer.Option(None, "--max-steps", help="Override the config's max_steps."),
    override: list[str] = typer.Option(None, "--override", help="encoder, with --resume: settings (comma-separated or repeated, e.g. lr,max_steps) whose new values apply; any other changed setting is an error."),
    sets: list[str] = option(None, "--set", help="Any setting of the config as KEY=VALUE (read as YAML; lists "
                                   "comma-separated for laser, meaning and static), e.g. --set lr=1e-4 --set seed=2."),
):
    """Train with a recipe: a sentence encoder with mUSE / DuEAM / OneAligner / LASER3 objectives
    (under `torchrun --nproc_per_node N` the batch is spread over N processes), a LASER encoder,
    meaning MLPs or a static encoder. A laser, meaning or static run started again goes on from
    its checkpoint; an encoder run does with --resume."""
    from xlingua.io import check_writable
    from xlingua.training.config import read_yaml, set_values

    data = read_yaml(config)
    overrides = {k: v for k, v in (("output_dir", output_dir), ("model", model), ("max_steps", max_steps)) if v is not None}
    data = {**data, **overrides, **set_values(sets or [])}
    recipe = data.pop("recipe", "encoder")
    if recipe not in RECIPES:
        raise ValueError(f"{config}: recipe must be one of {', '.join(RECIPES)}, got {recipe!r}")
    keys = [k.strip() for item in override or [] for k in item.split(",") if k.strip()]
    if keys and recipe != "encoder":
        raise ValueError(f"--override is for the encoder recipe; a {recipe} run takes its budgets as they are "
                         "and refuses other changes")
    if "output_dir" in data:
        check_writable(data["output_dir"], is_dir=True)
    if recipe == "laser":
        from xlingua.laser.trainer import run_recipe, summary
    elif recipe == "meaning":
        from xlingua.meaning.recipe import run_recipe, summary
    elif recipe == "static":
        from xlingua.static.train import run_recipe, summary
    else:
        from xlingua.training import train
        from xlingua.training.config import config_from_dict

        final = train(config_from_dict(data, where=config), resume=resume, override=keys)
        typer.echo(f"model: {final}")
        return
    typer.echo(summary(run_recipe(data), data["output_dir"]))
