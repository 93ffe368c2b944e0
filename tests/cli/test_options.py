"""One spelling per option across the commands: each old spelling parses as the agreed one, gives
the same output, and shows in no help text."""
from __future__ import annotations

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from xlingua.cli import app
from xlingua.cli.options import OLD_SPELLINGS, option

EN = "The red cat sleeps. The big dog barks!\nThe house is old.\nOne tree stands alone.\n"
DE = "Die rote Katze schläft. Der große Hund bellt!\nDas Haus ist alt.\nEin Baum steht allein.\n"


def _commands(cmd=None, path=()):
    """(path, click command) of every command of the app."""
    cmd = cmd or get_command(app)
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, cmd


def _aliased():
    """(path, command, option, old spelling) for every old spelling a command takes."""
    return [(path, cmd, p, old) for path, cmd in _commands() for p in cmd.params
            for old in getattr(p, "old_spellings", [])]


def _invoke(args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})


def test_every_old_spelling_parses_as_its_agreed_one():
    found = _aliased()
    assert found
    for path, cmd, param, old in found:
        agreed = OLD_SPELLINGS[old]
        assert agreed in param.opts, (path, old)
        values = [cmd.make_context(" ".join(path), [spelling, "0.5"], resilient_parsing=True).params[param.name]
                  for spelling in (agreed, old)]
        assert values[0] == values[1] and values[0] not in (None, []), (path, old, values)


def test_every_old_spelling_in_the_table_is_taken_by_a_command():
    taken = {old for *_, old in _aliased()}
    assert taken == set(OLD_SPELLINGS)


def test_help_shows_the_agreed_spellings_only():
    for path, cmd, param, old in _aliased():
        res = _invoke([*path, "--help"])
        assert res.exit_code == 0, res.output
        assert OLD_SPELLINGS[old] in res.output and old not in res.output.replace(OLD_SPELLINGS[old], ""), (path, old)


def test_a_missing_option_is_named_by_its_agreed_spelling(tmp_path):
    res = _invoke(["mine", tmp_path / "a.txt", tmp_path / "b.txt", "-o", tmp_path / "out.tsv.gz"])
    assert res.exit_code == 2 and "--src-lang" in res.output and "--lang-a" not in res.output


def test_an_old_spelling_must_stand_for_the_option_it_is_declared_with():
    with pytest.raises(ValueError, match="--lang-a is not an old spelling of --lang"):
        option(None, "--lang", "--lang-a")


def _docs(tmp_path):
    a, b = tmp_path / "doc.en.txt", tmp_path / "doc.de.txt"
    a.write_text(EN, encoding="utf-8")
    b.write_text(DE, encoding="utf-8")
    return a, b


def test_align_lang_a_and_lang_b_give_what_src_lang_and_tgt_lang_give(tmp_path, tiny_model):
    a, b = _docs(tmp_path)
    outputs = []
    for name, langs in (("agreed", ["--src-lang", "en", "--tgt-lang", "de"]),
                        ("old", ["--lang-a", "en", "--lang-b", "de"])):
        res = _invoke(["align", a, b, "-o", tmp_path / f"{name}.tsv", "-m", tiny_model, *langs])
        assert res.exit_code == 0, res.output
        outputs.append((tmp_path / f"{name}.tsv").read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) > 3
    bad = [_invoke(["align", a, b, "-o", tmp_path / "bad.tsv", "-m", tiny_model, flag, "not a language"]).output
           for flag in ("--src-lang", "--lang-a")]
    assert bad[0] == bad[1] and bad[0].startswith("error: ")  # the old spelling is read, not ignored


def test_score_min_score_gives_what_threshold_gives(tmp_path, tiny_model):
    a, b = _docs(tmp_path)
    kept = []
    for name, flag in (("agreed", "--threshold"), ("old", "--min-score")):
        res = _invoke(["score", a, b, "-o", tmp_path / f"{name}.tsv", "-m", tiny_model, flag, "0.5"])
        assert res.exit_code == 0, res.output
        kept.append([(tmp_path / f"{name}.{ext}").read_text(encoding="utf-8")
                     for ext in ("tsv", "kept.src", "kept.tgt")])
    assert kept[0] == kept[1]


def test_embed_takes_l_for_lang(tmp_path, tiny_model):
    import numpy as np

    a, _ = _docs(tmp_path)
    for name, flag in (("long", "--lang"), ("short", "-l")):
        res = _invoke(["embed", a, "-o", tmp_path / f"{name}.npy", "-m", tiny_model, flag, "en"])
        assert res.exit_code == 0, res.output
    np.testing.assert_array_equal(np.load(tmp_path / "long.npy"), np.load(tmp_path / "short.npy"))
