"""Every command and Python snippet of README.md and docs/guide/ runs (tests/docs_snippets.py):
a moved function or a renamed option breaks this test, not a reader. The blocks that cannot run
offline in seconds say why beside them."""
from __future__ import annotations

import re

import pytest

from tests.docs_snippets import FENCE, PAGES, ROOT, RUN, blocks, check_page

AGREED_ONLY = re.compile(r"(?<![\w-])--(out|output-dir|min-score|langs|opt|lang-a|lang-b)(?![\w-])")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_of_the_page_runs(page, tmp_path):
    assert check_page(page, tmp_path) == []


def test_a_snippet_that_raises_fails_the_check(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```python\nfrom xlingua.encoders.bundled import model_dir\n```\n\n"
                    "```bash\nxlingua models >/dev/null\n```\n\n"
                    "```bash\nxlingua align --no-such-option a b\n```\n", encoding="utf-8")
    failures = check_page(page, tmp_path / "run")
    assert len(failures) == 2, failures
    assert failures[0].startswith(f"{page}:3: python block exited 1: ") and "ImportError" in failures[0]
    assert failures[1].startswith(f"{page}:11: bash block exited 2: ") and "No such option" in failures[1]


def test_a_marked_block_is_skipped_and_its_mark_needs_a_reason(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- not run: it would take hours -->\n```bash\nexit 1\n```\n", encoding="utf-8")
    assert [b.skip for b in blocks(page)] == ["it would take hours"]
    assert check_page(page, tmp_path / "run") == []
    page.write_text("<!-- not run -->\n```bash\nexit 1\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"page\.md:2: `<!-- not run -->` needs its reason"):
        blocks(page)


def test_the_pages_mark_only_some_blocks():
    found = [b for page in PAGES for b in blocks(page)]
    run = [b for b in found if b.skip is None]
    assert len(run) >= 10 and len(found) > len(run)


def test_the_docs_use_the_agreed_spellings():
    # options.md lists the old spellings, which commands recorded before them may still use;
    # benchmarks/*.py are scripts with options of their own
    commands = [f"{b.where()}: {line.strip()}" for page in PAGES if page.name != "options.md" for b in blocks(page)
                for line in re.sub(r"\\\n\s*", " ", b.code).splitlines()
                if re.match(r"\s*(\S+=\S+\s+)*xlingua\b", line) and AGREED_ONLY.search(line)]
    assert commands == []
    prose = [f"{page.name}: {m[0]}" for page in PAGES if page.name != "options.md"
             for m in AGREED_ONLY.finditer(re.sub(r"`python benchmarks/[^`]*`", "",
                                                  FENCE.sub("", page.read_text(encoding="utf-8"))))]
    assert prose == []


def test_no_command_hides_in_a_block_that_is_not_run():
    # output and formats go in plain blocks; a command there would escape the check
    hidden = [f"{page.name}: {line.strip()}" for page in PAGES
              for m in FENCE.finditer(page.read_text(encoding="utf-8")) if m[2] not in RUN
              for line in m[3].splitlines() if re.match(r"\s*(\S+=\S+\s+)*(xlingua|python|make|\.venv/bin/)\b", line)]
    assert hidden == []
