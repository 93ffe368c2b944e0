"""The CLI error boundary: a user error is one line and exit 2; --debug shows the traceback."""
from typer.testing import CliRunner

from xlingua.cli import app
from xlingua.cli.errors import Typer, set_debug
from xlingua.data.text import InputError

runner = CliRunner()


def _toy_app():
    toy = Typer()

    @toy.command("bad")
    def bad(kind: str):
        if kind == "input":
            raise InputError("in.txt:3: invalid UTF-8 at byte 2 of the line")
        if kind == "os":
            open("/nonexistent/dir/file.txt")
        raise RuntimeError("a bug")

    @toy.command("other")
    def other():
        pass

    return toy


def test_user_errors_are_one_line_exit_2():
    toy = _toy_app()
    result = runner.invoke(toy, ["bad", "input"])
    assert result.exit_code == 2
    assert result.output == "error: in.txt:3: invalid UTF-8 at byte 2 of the line\n"
    result = runner.invoke(toy, ["bad", "os"])
    assert result.exit_code == 2
    assert result.output == "error: /nonexistent/dir/file.txt: No such file or directory\n"


def test_bugs_keep_their_traceback_and_debug_shows_user_errors_too():
    toy = _toy_app()
    result = runner.invoke(toy, ["bad", "bug"])
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)
    set_debug(True)
    try:
        result = runner.invoke(toy, ["bad", "input"])
    finally:
        set_debug(False)
    assert result.exit_code == 1 and isinstance(result.exception, InputError)


def test_every_xlingua_command_is_behind_the_boundary(tmp_path):
    missing = tmp_path / "missing.yaml"
    for args in (["train", str(missing)], ["--debug", "train", str(missing)]):
        result = runner.invoke(app, args)
        if "--debug" in args:
            assert result.exit_code == 1 and isinstance(result.exception, OSError)
        else:
            assert result.exit_code == 2 and result.output.count("\n") == 1 and str(missing) in result.output
    set_debug(False)
    from xlingua.cli.errors import user_errors

    def commands(typer_app):
        for info in typer_app.registered_commands:
            yield info.callback
        for group in typer_app.registered_groups:
            yield from commands(group.typer_instance)

    callbacks = list(commands(app))
    assert len(callbacks) >= 8
    assert all(cb.__code__ is user_errors(lambda: None).__code__ for cb in callbacks)


def test_user_errors_of_train_laser_meaning_and_eval_are_one_line(tmp_path, monkeypatch, tiny_model):
    """These used to print a 60-line traceback with exit 1."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bad_yaml = tmp_path / "r.yaml"
    bad_yaml.write_text(f"model: {tiny_model}\noutput_dir: {tmp_path / 'o'}\ntasks: []\n")
    cases = [
        (["train", str(bad_yaml)], f"error: {bad_yaml}: at least one task is needed under `tasks`"),
        (["laser", "train", "-o", str(tmp_path / "l"), "--langs", "de,klingon"], "error: unknown language code 'klingon'"),
        (["meaning", "train", "-o", str(tmp_path / "m"), "--langs", "xx1"], "error: unknown language code 'xx1'"),
        (["eval", "tatoeba", "-m", "some-org/no-such-model"], "error: cannot load model 'some-org/no-such-model'"),
    ]
    for args, start in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith(start) and result.output.count("\n") == 1, (args, result.output)
