"""The shape of the code: no import circles (module-level and function-level imports alike),
no function over 80 lines, no file over 600 lines, across src/xlingua and benchmarks/."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 600


def module_name(path: Path, root: Path) -> str:
    """xlingua.a.b for src/xlingua/a/b.py (xlingua.a for its __init__.py); benchmarks.x for
    benchmarks/x.py."""
    rel = path.relative_to(root / "src" if path.is_relative_to(root / "src") else root)
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(root: Path = ROOT) -> dict[str, Path]:
    files = sorted((root / "src" / "xlingua").rglob("*.py")) + sorted(
        (root / "benchmarks").rglob("*.py"))
    return {module_name(p, root): p for p in files}


def imported_modules(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The project modules that import statements anywhere in the tree load. `from a import b`
    loads a.b when that is a module, else a; the parent packages a loads on the way are left
    out (a package importing its own submodules is no circle). A script in benchmarks/ runs
    with benchmarks/ on sys.path, so there `import x` may mean benchmarks/x.py."""
    package = module if is_package else module.rpartition(".")[0]
    prefixes = [""] + (["benchmarks."] if module.startswith("benchmarks.") else [])

    def known(name: str) -> str | None:
        return next((p + name for p in prefixes if p + name in modules), None)

    found: set[str | None] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {known(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            found |= {known(f"{stem}.{alias.name}") or known(stem) for alias in node.names}
    return {m for m in found if m is not None and m != module}


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    modules = set(files)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[module] = imported_modules(tree, module, path.name == "__init__.py", modules)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest circle through the component's first module, for the message."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    return paths[node] + [start]
                if child not in paths:
                    paths[child] = paths[node] + [child]
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"no circle through {start}")


def long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_finders_on_a_toy_package(tmp_path):
    """The graph, its circles and the relative-import arithmetic on a hand-made package."""
    pkg = tmp_path / "src" / "xlingua"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import a\n")
    (pkg / "sub" / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "sub" / "b.py").write_text("from ..top import h\nimport numpy\n")
    (pkg / "top.py").write_text("from xlingua.sub import a\n")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "run.py").write_text("import helper\n")
    (tmp_path / "benchmarks" / "helper.py").write_text(
        "import xlingua.top\nfrom xlingua.sub import thing\n")
    files = source_files(tmp_path)
    graph = import_graph(files)
    assert graph["xlingua.sub"] == {"xlingua.sub.a"}
    assert graph["xlingua.sub.a"] == {"xlingua.sub.b"}
    assert graph["xlingua.sub.b"] == {"xlingua.top"}
    assert graph["xlingua.top"] == {"xlingua.sub.a"}
    assert graph["benchmarks.run"] == {"benchmarks.helper"}
    assert graph["benchmarks.helper"] == {"xlingua.top", "xlingua.sub"}
    circle = ["xlingua.sub.a", "xlingua.sub.b", "xlingua.top"]
    assert strongly_connected(graph) == [circle]
    assert shortest_cycle(graph, circle) == circle + ["xlingua.sub.a"]
    (pkg / "long.py").write_text("def f():\n" + "    x = 1\n" * 80)
    assert long_functions(pkg / "long.py", tmp_path) == ["src/xlingua/long.py:1 f (81 lines)"]


def test_no_import_circles():
    graph = import_graph(source_files())
    circles = [" -> ".join(shortest_cycle(graph, c)) + f"  (all of: {', '.join(c)})"
               for c in strongly_connected(graph)]
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_no_long_functions():
    offenders = [f for path in source_files().values() for f in long_functions(path)]
    assert not offenders, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(offenders)


def test_no_long_files():
    offenders = []
    for path in source_files().values():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_FILE_LINES:
            offenders.append(f"{path.relative_to(ROOT)} ({n} lines)")
    assert not offenders, f"files over {MAX_FILE_LINES} lines:\n" + "\n".join(offenders)
