"""The code blocks of README.md and docs/guide/, run as a reader would run them (the rule is in
docs/guide/contributing.md, "Code blocks in the docs"): every ```bash and ```python block runs,
in the order of its page, in one fresh directory per page holding the example inputs; a block
that cannot run offline in seconds carries `<!-- not run: REASON -->` on the line before it."""
from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
RUN = ("bash", "python")
FENCE = re.compile(r"^([ \t]*)```(\w*)[^\n]*\n(.*?)^\1```[ \t]*$", re.M | re.S)  # in a list item too
MARK = re.compile(r"<!--\s*not run(?::\s*(.*?))?\s*-->")
TIMEOUT = 300  # a block that runs offline in seconds is far below it


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    code: str
    skip: str | None  # why it is not run; None: it runs

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The ```bash and ```python blocks of a page, each with the reason it is not run, if marked.
    A mark names its reason: `<!-- not run -->` alone is refused."""
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        if m[2] not in RUN:
            continue
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.fullmatch(before.strip())
        block = Block(page, line, m[2], textwrap.dedent(m[3]), None)
        if mark:
            if not (mark[1] or "").strip():
                raise ValueError(f"{block.where()}: `<!-- not run -->` needs its reason: <!-- not run: REASON -->")
            block.skip = mark[1].strip()
        found.append(block)
    return found


def example_inputs(where: Path) -> None:
    """The files the docs' commands read, made from the built-in example (8 sentences in 8
    languages): LANG.txt and LANG.txt.gz, src.txt / mt.txt / tgt.txt (en, de, de), in.txt, and two
    documents of a few paragraphs each, doc.en.txt and doc.de.txt."""
    from xlingua.demo import builtin_examples

    examples = builtin_examples()
    for lang, lines in examples.items():
        text = "".join(f"{t}\n" for t in lines).encode("utf-8")
        (where / f"{lang}.txt").write_bytes(text)
        (where / f"{lang}.txt.gz").write_bytes(gzip.compress(text))
    for name, lang in (("src", "en"), ("mt", "de"), ("tgt", "de"), ("in", "en")):
        (where / f"{name}.txt").write_bytes((where / f"{lang}.txt").read_bytes())
    for lang in ("en", "de"):
        lines = examples[lang]
        paragraphs = [" ".join(lines[i:i + 3]) for i in range(0, len(lines), 3)]
        (where / f"doc.{lang}.txt").write_text("".join(f"{p}\n" for p in paragraphs), encoding="utf-8")


def environment() -> dict:
    """The environment the blocks run in: this Python's `xlingua` and `python` first on PATH,
    offline."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}


def run(block: Block, where: Path) -> subprocess.CompletedProcess:
    """Run one block in `where`: bash with -e and pipefail, or a Python file."""
    if block.lang == "bash":
        args = ["bash", "-euo", "pipefail", "-c", block.code]
    else:
        script = where / f"snippet_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        args = [sys.executable, str(script)]
    return subprocess.run(args, cwd=where, env=environment(), capture_output=True, text=True, timeout=TIMEOUT)


def check_page(page: Path, where: Path) -> list[str]:
    """Run every block of `page` that is not marked, in order, in `where` (with the example
    inputs): one line per failing block, naming it and ending with what it printed last."""
    where.mkdir(parents=True, exist_ok=True)
    example_inputs(where)
    failures = []
    for block in blocks(page):
        if block.skip is not None:
            continue
        res = run(block, where)
        if res.returncode != 0:
            tail = " | ".join((res.stderr or res.stdout).strip().splitlines()[-3:])
            failures.append(f"{block.where()}: {block.lang} block exited {res.returncode}: {tail}")
    return failures
