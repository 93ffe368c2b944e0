"""The command line's error boundary: a user error becomes one line and exit code 2.

Every command registered on an `xlingua.cli.errors.Typer` (the `xlingua` app and its sub-apps
`laser`, `meaning`, `bench`) is wrapped by `user_errors`, so a new command gets it for free:

    from xlingua.cli.errors import Typer
    my_app = Typer(help="...")

    @my_app.command("score")
    def score(...):            # raise InputError(f"{path}:{line}: ...") for bad input
        ...

User errors are `InputError` / `ValueError` (bad input or settings, message naming the file
and line), `OSError` (missing or unwritable files, a full disk) and `yaml.YAMLError`. They
print `error: MESSAGE` on one line to stderr and exit 2; `xlingua --debug CMD` (or
XLINGUA_DEBUG=1) shows the traceback instead. Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import functools
import os

import typer

_state = {"debug": False}


def set_debug(on: bool) -> None:
    _state["debug"] = bool(on)


def debugging() -> bool:
    return _state["debug"] or os.environ.get("XLINGUA_DEBUG", "") not in ("", "0")


def _user_error_types() -> tuple[type, ...]:
    types: tuple[type, ...] = (ValueError, OSError)
    try:
        import yaml

        types += (yaml.YAMLError,)
    except ImportError:  # pragma: no cover
        pass
    return types


def one_line(exc: BaseException) -> str:
    """The message of `exc` on one line, naming the file for a bare OSError."""
    if isinstance(exc, OSError) and exc.filename and exc.strerror and len(exc.args) == 2:
        text = f"{exc.filename}: {exc.strerror}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def user_errors(func):
    """Decorator: run a command; a user error exits 2 with one line (see the module docstring)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except _user_error_types() as exc:
            if debugging():
                raise
            typer.secho(f"error: {one_line(exc)}", fg=typer.colors.RED, err=True)
            raise typer.Exit(2) from None

    return wrapper


class Typer(typer.Typer):
    """typer.Typer whose commands all go through `user_errors` and take the options' old
    spellings without showing them (options.Command)."""

    def command(self, *args, **kwargs):
        from xlingua.cli.options import Command

        kwargs.setdefault("cls", Command)
        register = super().command(*args, **kwargs)

        def decorator(func):
            register(user_errors(func))
            return func

        return decorator
