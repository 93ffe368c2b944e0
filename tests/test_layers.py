"""Imports run downward: data -> encoders / similarity / index -> objectives -> mining -> training
(the training loop) -> evaluation, laser, meaning (and the other jobs) -> the benchmarks (bench)
-> the HTTP server (serve) -> the command line (the cli package, every command). A module may
import its own package and any lower layer, never a package of its own layer or above.

`python -m tests.test_layers [SRC/xlingua]` lists the upward imports of any tree (e.g. an older
checkout's) and counts them."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "xlingua"
LAYERS = [
    {"data", "paths", "progress", "io", "registry", "settings"},
    {"encoders", "similarity", "index"},
    {"objectives"},
    {"mining"},  # below evaluation, whose bucc and alignment tasks mine in memory
    {"training"},  # the one training loop, below the recipes that run through it
    {"evaluation", "laser", "meaning", "static", "qe", "embed", "score", "align", "demo"},
    {"bench"},  # measures the layers below; only the command line imports it
    {"serve"},  # the HTTP server, which `xlingua serve` starts
    {"cli"},  # the command line: every command module, nothing below imports it
]


def layer(parts: tuple[str, ...], spread_cli: bool = False) -> int:
    if spread_cli and (parts[0] == "cli_errors" or parts[-1] == "cli"):
        return len(LAYERS) - 1  # older trees: cli_errors.py and each package's cli.py
    for i, names in enumerate(LAYERS):
        if parts[0] in names:
            return i
    raise AssertionError(f"xlingua.{'.'.join(parts)} is in no layer: add its package to LAYERS")


def imports(path: Path, package: tuple[str, ...]):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - node.level + 1])
            yield tuple(base + (node.module.split(".") if node.module else [node.names[0].name]))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xlingua."):
            yield tuple(node.module.split(".")[1:])
        elif isinstance(node, ast.ImportFrom) and node.module == "xlingua":
            yield from ((a.name,) for a in node.names)
        elif isinstance(node, ast.Import):
            yield from (tuple(a.name.split(".")[1:]) for a in node.names if a.name.startswith("xlingua."))


def upward_imports(root: Path = ROOT) -> list[str]:
    spread_cli = not (root / "cli").is_dir()  # commands were in each package before the cli package
    bad = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        if parts == ("__init__",):
            continue
        mine = layer(parts, spread_cli)
        for target in imports(path, package):
            if not target or not ((root / target[0]).is_dir() or (root / f"{target[0]}.py").exists()):
                continue
            theirs = layer(target, spread_cli)
            same_package = target[0] == parts[0]
            if theirs > mine or (theirs == mine and not same_package and mine not in (0, len(LAYERS) - 1)):
                bad.append(f"{'/'.join(parts)}.py imports xlingua.{'.'.join(target)}")
    return bad


def test_every_module_has_a_layer():
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts != ("__init__",):
            layer(parts)


def test_no_module_imports_its_own_layer_or_above():
    assert upward_imports() == []


def test_a_library_module_importing_the_command_line_is_caught(tmp_path):
    for name, text in {"cli/__init__.py": "from xlingua.laser.ship import ship\n",
                       "cli/errors.py": "",
                       "laser/__init__.py": "",
                       "laser/ship.py": "from xlingua.cli.errors import Typer\n",
                       "serve/app.py": "import xlingua.cli\n"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert upward_imports(tmp_path) == ["laser/ship.py imports xlingua.cli.errors",
                                        "serve/app.py imports xlingua.cli"]


if __name__ == "__main__":
    found = upward_imports(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
    print("\n".join(found + [f"{len(found)} upward imports"]))
