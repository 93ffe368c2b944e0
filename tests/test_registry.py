import pytest

from xlingua.registry import declare


def test_declare_keeps_one_origin_per_name():
    class A: ...
    table = {}
    declare(table, "a", A, "things named")
    declare(table, "a", A, "things named")  # the same code again (a module imported twice) is fine
    assert table == {"a": A}

    class B: ...
    with pytest.raises(ValueError, match=r"two things named 'a': .*A and .*B$"):
        declare(table, "a", B, "things named")
    assert table == {"a": A}
