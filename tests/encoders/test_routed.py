"""A routed model (encoders.routed): the student embeds text in its languages, the model it routes
beside everything else; language codes match by base and script; cached rows keep them apart."""
import numpy as np
import pytest

from xlingua.encoders.base import Encoder
from xlingua.encoders.cache import CachedEncoder
from xlingua.encoders.manifest import same_vectors
from xlingua.encoders.routed import RoutedEncoder, route_key, routes_to


class Constant(Encoder):
    dim = 3

    def __init__(self, row, name):
        self.row, self.name = np.asarray(row, dtype=np.float32), name

    def _encode_batch(self, texts, lang):
        return np.tile(self.row, (len(texts), 1))

    def fingerprint(self):
        return self.name


@pytest.mark.parametrize("lang, routed", [
    ("kab", True), ("gd", True), ("gla", True), ("ayr_Latn", True), ("ay-Latn", True), ("aym", True),
    ("mni-Latn", True), ("mni_Latn", True), ("mni", False), ("mni-Beng", False),
    ("en", False), ("fr", False), ("de", False), (None, False), ("", False)])
def test_codes_route_by_their_base_and_a_script_only_where_the_route_names_one(lang, routed):
    assert routes_to(lang, ["ay", "gd", "kab", "mni-Latn"]) is routed


def test_a_code_naming_no_language_is_refused_in_one_line():
    assert route_key("gla_Latn") == ("gd", "Latn")
    with pytest.raises(ValueError, match="unknown language code 'xx'"):
        routes_to("xx", ["kab"])
    with pytest.raises(ValueError, match="unknown language code"):
        RoutedEncoder(Constant([1, 0, 0], "a"), Constant([0, 1, 0], "b"), ["kab", "zz"])


def test_the_student_embeds_its_languages_and_the_model_everything_else(tmp_path):
    default, student = Constant([1, 0, 0], "default"), Constant([0, 1, 0], "student")
    routed = RoutedEncoder(default, student, ["kab", "gd"])
    texts = ["Azul", "Hello"]
    assert routed.encode(texts, lang="kab").tolist() == [[0, 1, 0]] * 2
    assert routed.encode(texts, lang="gla").tolist() == [[0, 1, 0]] * 2
    assert routed.encode(texts, lang="en").tolist() == [[1, 0, 0]] * 2
    assert routed.encode(texts).tolist() == [[1, 0, 0]] * 2
    assert routed.fingerprint() not in (default.fingerprint(), student.fingerprint())
    # what was fitted on the default's vectors (QE heads, meaning models) reads every other text as before
    assert same_vectors(routed.fingerprint(), "default") and not same_vectors(routed.fingerprint(), "student")
    # one text cached in two languages: two rows, each its route's
    cached = CachedEncoder(routed, cache_dir=tmp_path)
    assert cached.encode(["Azul"], lang="kab").tolist() == [[0, 1, 0]]
    assert cached.encode(["Azul"], lang="en").tolist() == [[1, 0, 0]]
    assert cached.encode(["Azul"], lang="kab").tolist() == [[0, 1, 0]]


def test_a_student_of_another_size_is_refused():
    with pytest.raises(ValueError, match="a routed student embeds in 2 dimensions, its model in 3"):
        small = Constant([1, 0], "s")
        small.dim = 2
        RoutedEncoder(Constant([1, 0, 0], "a"), small, ["kab"])


def test_a_student_given_as_a_builder_is_built_once_when_text_first_routes_to_it():
    built = []

    def build():
        built.append(1)
        return Constant([0, 1, 0], "student")

    routed = RoutedEncoder(Constant([1, 0, 0], "default"), build, ["kab"], student_id="student@abc")
    assert routed.encode(["Hello"], lang="en").tolist() == [[1, 0, 0]]
    assert routed.fingerprint() == "default|route:kab>student@abc" and built == []
    assert routed.encode(["Azul"], lang="kab").tolist() == [[0, 1, 0]]
    assert routed.encode(["Azul"], lang="kab").tolist() == [[0, 1, 0]] and built == [1]
