"""The README a newcomer reads first, and the documentation site's page list."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def relative_links(markdown: str) -> list[str]:
    """Targets of the inline links and images outside code blocks that are neither web
    addresses nor anchors of the page itself, without their #anchor."""
    targets = LINK.findall(FENCE.sub("", markdown))
    return [t.partition("#")[0] for t in targets if not re.match(r"[a-z]+:|#", t)]


def test_relative_links_found_outside_code_blocks():
    text = "[a](docs/a.md#x) ![p](img/p.png) [w](https://x.org) [s](#top)\n```\n[c](code.md)\n```\n"
    assert relative_links(text) == ["docs/a.md", "img/p.png"]


def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= 200, f"README.md has {n} lines; the rest belongs in docs/guide/"


def test_readme_starts_with_make_demo_and_make_test():
    head = README.read_text(encoding="utf-8").splitlines()[:10]
    commands = [line.split("#")[0].strip() for line in head]
    assert "make demo" in commands and "make test" in commands, head


def test_every_relative_link_in_readme_exists():
    links = relative_links(README.read_text(encoding="utf-8"))
    assert links, "README.md links to no page"
    missing = [t for t in links if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in nav_pages(v)]
    return [p for item in nav for p in nav_pages(item)]


def test_every_page_of_docs_is_in_the_site_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = ROOT / config["docs_dir"]
    pages = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")
             if p.relative_to(docs).parts[0] != "data"}  # run records, not pages
    in_nav = set(nav_pages(config["nav"]))
    assert pages - in_nav == set(), "pages missing from mkdocs.yml's nav"
    assert in_nav - pages == set(), "nav entries without a page"
