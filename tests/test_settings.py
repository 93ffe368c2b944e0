"""Recipe settings: the output directory and a check that every setting names a field."""
from __future__ import annotations

import pytest

from xlingua.laser.config import recipe_config as laser_recipe
from xlingua.meaning.recipe import recipe_config as meaning_recipe
from xlingua.static.train import recipe_config as static_recipe


@pytest.mark.parametrize("name,read", [("laser", laser_recipe), ("meaning", meaning_recipe), ("static", static_recipe)])
def test_every_recipe_needs_an_output_and_refuses_an_unknown_setting(name, read, tmp_path):
    with pytest.raises(ValueError, match=f"^a {name} recipe needs output_dir$"):
        read({"recipe": name})
    with pytest.raises(ValueError, match=rf"^unknown {name} setting\(s\) \['lrr'\]; known: \[.*'output_dir'.*\]$"):
        read({"recipe": name, "output_dir": str(tmp_path), "lrr": 0.1})


def test_laser_takes_resume_and_the_list_form_of_a_list_setting(tmp_path):
    cfg, out, resume = laser_recipe({"recipe": "laser", "output_dir": str(tmp_path), "resume": False, "langs": "de, fr"})
    assert out == tmp_path and resume is False and list(cfg.langs) == ["de", "fr"]
