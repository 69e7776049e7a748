"""The layout's rules, for all future work: no module of examprep/ passes 600 lines and none takes
part in an import cycle; one subject area has one name in every layer (engine/, solve/, verify/,
generators/); torch is imported only under examprep/train and examprep/verify; registries are
literal; generators build their solutions from named steps; the CLI's command modules never import
the cli package that loads them; packages import only lower layers (PACKAGE_LAYERS); imports are at
module top but in named places, for start-up time (docs/code.md, "Layers"). Read from the source
with ast, so lazy (function-level) and TYPE_CHECKING imports count too."""
import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "examprep"
LAYERS = ("engine", "solve", "verify", "generators")
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_files() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (PACKAGE / layer).rglob("*.py"))


def package_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def imports(path: Path) -> list[tuple[str, list[str], int]]:
    """Every import in a file, wherever it is (module level, inside a function, under TYPE_CHECKING):
    (module, names imported from it, line)."""
    tree = parsed(path)
    name = module_name(path) if ROOT in path.parents else path.stem
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[: len(up) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            out.append((base, [alias.name for alias in node.names], node.lineno))
    return out


def import_graph(files: list[Path] | None = None) -> dict[str, set[str]]:
    """Edges between the modules of examprep/ (or of ``files``). ``from a.b import c`` points at
    module a.b.c when there is one, else at a.b. Python loads a package's __init__ before any of its
    submodules, but that is loading, not a dependency: only the imports a module writes are edges
    (a package's __init__ that imports its submodules has edges to them, as any module)."""
    modules = {module_name(p): p for p in (package_files() if files is None else files)}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, names, _ in imports(path):
            candidates = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules] or [target]
            for c in candidates:
                while c and c not in modules and "." in c:      # `import examprep.engine.rnn.x` style: nearest module
                    c = c.rpartition(".")[0]
                if c in modules and c != name:
                    graph[name].add(c)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_imports_counts_function_level_and_type_checking_imports(tmp_path):
    src = tmp_path / "probe.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from examprep.problem import Part\n"
                   "def f():\n    from examprep.checkpoints.stored import read\n", encoding="utf-8")
    found = {module for module, _, _ in imports(src)}
    assert {"examprep.problem", "examprep.checkpoints.stored"} <= found


def test_no_module_of_examprep_passes_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in package_files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these (by sub-area, layer or model): {long}"


def test_no_import_cycle_in_examprep():
    graph = import_graph()
    assert len(graph) > 150 and graph["examprep.solve.rnn"] >= {"examprep.solve.contract", "examprep.engine"}
    assert "examprep.solve" in graph["examprep.verify"]                     # a lazy import is an edge
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_among_engine_solve_verify_generators():
    cycle = find_cycle(import_graph(layer_files()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_command_module_imports_the_cli_package():
    """examprep/cli/app.py imports each command module when its command runs; a command module
    that imported examprep.cli (or its app) back would be a cycle and would load every command."""
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        if path.stem in ("__init__", "app"):
            continue
        targets = {t for t, _, _ in imports(path)}
        assert not targets & {"examprep.cli", "examprep.cli.app"}, path.name


def test_the_cycle_finder_finds_lazy_and_type_checking_cycles(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from examprep.solve import contract\n"
                 "def f():\n    import examprep.engine.rnn\n", encoding="utf-8")
    assert [(t, n) for t, n, _ in imports(a)] == [("typing", ["TYPE_CHECKING"]), ("examprep.solve", ["contract"]),
                                                  ("examprep.engine.rnn", [])]
    assert find_cycle({"x": {"y"}, "y": {"z"}, "z": {"x"}}) == ["x", "y", "z", "x"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None


def test_torch_is_imported_only_under_train_and_verify():
    allowed = (PACKAGE / "train", PACKAGE / "verify")
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PACKAGE.rglob("*.py"))
             if not any(a in p.parents for a in allowed)
             for target, _, line in imports(p) if target == "torch" or target.startswith("torch.")]
    assert not found, f"torch outside examprep/train and examprep/verify: {found}"


@pytest.mark.parametrize("path", ["topics_extra", "solve.py", "engine/backprop.py", "engine/transformer.py",
                                  "train/engine_reference.py", "train/verify.py"])
def test_the_batch_modules_are_gone(path):
    assert not (PACKAGE / path).exists(), path


def test_each_subject_has_one_name_in_every_layer():
    """solve/<area>.py and verify/<area>.py exist only beside engine/<area>.py."""
    engine = {p.stem for p in (PACKAGE / "engine").glob("*.py") if not p.stem.startswith("_")}
    for layer in ("solve", "verify"):
        areas = {p.stem for p in (PACKAGE / layer).glob("*.py") if not p.stem.startswith("_")}
        areas -= {"contract", "batch", "reference"}      # the API, --batch, docs/topics.md: no subject area
        assert areas <= engine, f"{layer}/ areas without an engine module: {areas - engine}"
    assert {"softmax", "activations", "dense", "conv", "pool", "rnn", "norm", "positions", "attention",
            "counts"} <= engine


def test_registries_are_literal():
    """solve, verify and generators list their modules in import statements: no importlib or pkgutil."""
    for layer in ("solve", "verify", "generators"):
        for p in (PACKAGE / layer).rglob("*.py"):
            targets = {t for t, _, _ in imports(p)}
            assert not targets & {"importlib", "pkgutil"}, p


def _generator_sources():
    return sorted(p for p in (PACKAGE / "generators").glob("*.py") if p.stem not in ("__init__", "framework"))


@pytest.mark.parametrize("path", _generator_sources(), ids=lambda p: p.stem)
def test_generators_use_named_steps_and_no_second_engine_call_through_solve(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            # solve.solve(...) beside the engine computes every answer twice
            assert not (f.attr == "solve" and isinstance(f.value, ast.Name) and f.value.id == "solve"), \
                f"{path.name}:{node.lineno}: solve.solve"
            # steps picked by their English titles
            assert not (f.attr == "startswith" and isinstance(f.value, ast.Attribute) and f.value.attr == "title"), \
                f"{path.name}:{node.lineno}: a step chosen by its title"
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "steps":
            raise AssertionError(f"{path.name}:{node.lineno}: steps picked by position")


def test_the_default_output_directory_of_every_bundled_recipe_is_ignored_by_git():
    # `examprep sheet -r midterm` (the README's first command) writes midterm/ where it runs
    from examprep.sources.recipes import bundled_recipes

    ignored = set((ROOT / ".gitignore").read_text().split())
    for name in bundled_recipes():
        assert f"/{name}/" in ignored, name
    assert "/sheet/" in ignored          # --topics without a recipe


def test_quiz_and_sheets_do_not_import_each_other():
    """Both take their problems from the problem-source layer (examprep.sources: the recipes, the
    concept bank, build), so neither needs the other: an exam drawn from a recipe reads the recipe
    there, and a sheet's concept question comes from there too."""
    for here, other in (("quiz", "sheets"), ("sheets", "quiz")):
        found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted((PACKAGE / here).rglob("*.py"))
                 for target, names, line in imports(p)
                 if target == f"examprep.{other}" or target.startswith(f"examprep.{other}.")
                 or (target == "examprep" and other in names)]
        assert not found, f"examprep/{here} imports examprep/{other}: {found}"


# ---- layers at package level ------------------------------------------------------------------------------------
# Every top-level module and package of examprep/, lowest first (docs/code.md, "Layers", gives each tier's reason).
# A package imports only packages of lower tiers, wherever the import is written (module top, a function,
# TYPE_CHECKING); packages of one tier import none of each other.
PACKAGE_LAYERS = (
    ("examprep", "errors", "escape", "values", "decimal_comma", "exact", "publish", "bundled"),  # standard library only
    ("fileio", "tomllines", "stream", "history", "keyfields", "expr"),   # base helpers built on those (expr: the safe evaluator)
    ("checkpoints",),                       # a trained run's files read torch-free (config, vocab, the reader)
    ("review", "review_optimize"),          # FSRS scheduling over the progress store
    ("document",),
    ("problem",),
    ("engine",),
    ("solve",),
    ("ecf",),
    ("answers",),
    ("generators",),
    ("authoring",),
    ("sources",),
    ("render",),
    ("keys",),                              # a key and its answer template (written with render's answer forms)
    ("sheets", "train", "banks"),
    ("scan",),                              # reads the pages a sheet printed into answer files for grading
    ("grading",),                           # grades what a sheet gave out (its roster, its key)
    ("quiz",),                              # grades each answer as `grade` does
    ("verify", "deck"),
    ("cli",),
    ("__main__",),                          # `python -m examprep`: the CLI
)
# placed before they exist, so that their issues find their tier here
PLANNED = {"scan": "issue 41: `examprep scan`", "banks": "issue 39 item 4: `examprep import`"}
# (importing package, imported package): why a lower package may import a higher one. None today.
LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {}


def package_of(module: str) -> str:
    """The top-level module or package of examprep that ``module`` belongs to ("examprep" for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def top_level_names() -> set[str]:
    return ({"examprep"} | {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
            | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()})


def imported_packages(target: str, names: list[str]) -> set[str]:
    """The top-level modules of examprep that one import statement reaches (none for another library's)."""
    if target == "examprep":
        return {n if n in top_level_names() else "examprep" for n in names}
    return {package_of(target)} if target.startswith("examprep.") else set()


def upward_imports() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> where, for every import that breaks PACKAGE_LAYERS."""
    tier = {name: i for i, names in enumerate(PACKAGE_LAYERS) for name in names}
    found: dict[tuple[str, str], list[str]] = {}
    for path in package_files():
        here = package_of(module_name(path))
        for target, names, line in imports(path):
            for there in imported_packages(target, names):
                if there != here and tier[there] >= tier[here]:
                    found.setdefault((here, there), []).append(f"{path.relative_to(ROOT)}:{line}")
    return found


def test_every_top_level_module_of_examprep_has_a_layer():
    placed = [name for names in PACKAGE_LAYERS for name in names]
    assert len(placed) == len(set(placed)), "a name placed twice"
    assert top_level_names() - set(placed) == set(), "place these in PACKAGE_LAYERS (and docs/code.md)"
    assert set(placed) - top_level_names() <= set(PLANNED), "gone: take these out of PACKAGE_LAYERS"


def test_no_package_imports_a_higher_or_a_peer_one():
    found = upward_imports()
    broken = {pair: where for pair, where in found.items() if pair not in LAYER_EXCEPTIONS}
    assert not broken, f"a package imports one of its own tier or a higher one (PACKAGE_LAYERS): {broken}"
    stale = set(LAYER_EXCEPTIONS) - set(found)
    assert not stale, f"fixed: take these out of LAYER_EXCEPTIONS: {stale}"
    assert all(reason.strip() for reason in LAYER_EXCEPTIONS.values())


# ---- imports at module top ---------------------------------------------------------------------------------------
# A function-level import of an examprep module is allowed only in these places, (importing module, imported module)
# as fnmatch patterns, each for the start-up time of a help screen: each importing module is one that `examprep
# --help` or an `examprep COMMAND --help` loads, and each import there defers a module that its start-up would not
# load otherwise. Everything else is imported at module top.
LAZY_PROJECT_IMPORTS = {
    ("examprep.cli.*", "examprep.*"):
        "a command imports its feature when it runs, so `examprep COMMAND --help` loads typer and the command's "
        "options only (tests/cli/test_startup.py); the command table (cli/app.py) imports a command's module only "
        "when the command runs",
    ("examprep.render.exports", "examprep.render.*"):
        "the table of export formats, which `examprep --help` and `sheet --help` list, imports a format's renderer "
        "when its writer runs",
    ("examprep.train.options", "examprep.*"):
        "the trainer's options and limits make the help screens of train, translate, attention-map, fill-mask and "
        "finetune; what its checks read (configurations, run directories, output paths) loads when a check runs",
}
# The other libraries a module may import inside a function, each for its start-up reason, and only where the
# importing module does not load the library at its start-up anyway. Besides these, the places above may import any
# library inside a function that their start-up would load otherwise (the standard library's json, for one).
LAZY_LIBRARIES = {
    "numpy": "~100 ms: the help screens, the CLI's tables and the torch-free checkpoint reader need none of it",
    "sympy": "~0.5 s: only exact and symbolic answers need it",
    "mpmath": "sympy's arbitrary precision: only numbers beyond a float's range need it",
    "torch": "the train extra, seconds to import: only training, decoding and verifying load it",
    "safetensors": "the train extra: only reading or writing a checkpoint's weights",
    "sacrebleu": "the train extra: only a model's evaluation",
    "matplotlib": "the train extra, ~0.3 s: only `examprep runs --out` draws curves; its table needs none of it",
    "tokenizers": "the tokenizers extra (optional): only a BPE vocabulary being learned or read (--tokens bpe)",
    "rich": "the help screens are click's plain ones; rich loads when a command draws its output",
    "typst": "the Typst compiler: only when a PDF is made",
    "pypdf": "only a class PDF's join and --split's copies",
    "fsrs": "the review scheduler: only when a card is rated or listed",
    "fsrs_rs_python": "the FSRS optimizer (Rust): only `review --optimize`",
    "genanki": "only `examprep anki`",
    "latex2mathml": "only the QTI 2.1 export",
    "cv2": "the scan extra (optional), ~0.3 s: only `examprep scan`, which names the extra when it is missing",
    "segno": "the scan extra (optional): only `sheet --scannable`, which names the extra when it is missing",
    "pypdfium2": "the scan extra (optional): only `examprep scan` renders scanned PDFs",
    "readline": "importing it changes input() for the whole process: only an interactive quiz wants that",
}


@functools.cache
def _import_lines(path: Path) -> tuple[frozenset[int], frozenset[int]]:
    """The lines of the imports written inside a function (a method, a nested function, a lambda's body), and of
    those under TYPE_CHECKING at module level; one walk of the tree."""
    in_function, type_checking = set(), set()

    def visit(node: ast.AST, function: bool, checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (in_function if function else type_checking if checking else set()).add(child.lineno)
            visit(child, function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                  checking or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)))

    visit(parsed(path), False, False)
    return frozenset(in_function), frozenset(type_checking)


def function_level_imports(path: Path) -> list[tuple[str, list[str], int]]:
    """The imports written inside a function (a method, a nested function, a lambda's body), as imports() gives them."""
    lines = _import_lines(path)[0]
    return [imp for imp in imports(path) if imp[2] in lines]


def module_imports(path: Path) -> list[tuple[str, list[str], int]]:
    """The imports that run when the module is imported: none inside a function or under TYPE_CHECKING."""
    skipped = _import_lines(path)[0] | _import_lines(path)[1]
    return [imp for imp in imports(path) if imp[2] not in skipped]


@functools.cache
def _project_files() -> dict[str, Path]:
    return {module_name(p): p for p in package_files()}


@functools.cache
def _loads_directly(name: str) -> tuple[str, ...]:
    """The modules examprep's module ``name`` imports when it is imported (another library's: none)."""
    files = _project_files()
    if name not in files:
        return ()
    out = []
    for target, names, _ in module_imports(files[name]):
        out += [f"{target}.{n}" for n in names if f"{target}.{n}" in files] or [target]
    return tuple(out)


def loaded_by(modules: set[str]) -> set[str]:
    """Every module that importing ``modules`` loads, read from the sources: examprep's modules (with the packages
    they are in) and other libraries' modules by their dotted names and each prefix."""
    return set().union(*(_loaded_by_one(m) for m in modules))


@functools.cache
def _loaded_by_one(module: str) -> frozenset[str]:
    seen: set[str] = set()
    todo = [module]
    while todo:
        parts = todo.pop().split(".")
        for k in range(1, len(parts) + 1):           # a module's packages load first
            m = ".".join(parts[:k])
            if m not in seen:
                seen.add(m)
                todo += _loads_directly(m)
    return frozenset(seen)


@functools.cache
def help_screens_load() -> frozenset[str]:
    """The modules of examprep that a help screen loads: `examprep --help`'s and each `examprep COMMAND --help`'s
    (the command table imports the command's module by name, which the sources do not show)."""
    from examprep.cli.app import COMMANDS

    commands = {f"examprep.cli.{c.module}" for c in COMMANDS.values()}
    return frozenset(m for m in loaded_by({"examprep.cli.app", *commands}) if m.startswith("examprep"))


def lazy_project_imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, where) for every function-level import of an examprep module."""
    files = _project_files()
    out = []
    for name, path in files.items():
        for target, names, line in function_level_imports(path):
            if target == "examprep" or target.startswith("examprep."):
                for t in [f"{target}.{n}" for n in names if f"{target}.{n}" in files] or [target]:
                    out.append((name, t, f"{path.relative_to(ROOT)}:{line}"))
    return out


def function_level_libraries() -> list[tuple[str, str, str]]:
    """(importing module, imported library's top-level name, where) for every function-level import of another
    library than examprep (the standard library's included)."""
    out = []
    for name, path in _project_files().items():
        for target, _, line in function_level_imports(path):
            if target and target != "examprep" and not target.startswith("examprep."):
                out.append((name, target.split(".")[0], f"{path.relative_to(ROOT)}:{line}"))
    return out


def test_project_imports_are_at_module_top_but_in_the_named_places():
    from fnmatch import fnmatch

    misplaced, for_nothing, used = [], [], set()
    for here, there, where in lazy_project_imports():
        places = [(a, b) for a, b in LAZY_PROJECT_IMPORTS if fnmatch(here, a) and fnmatch(there, b)]
        used.update(places)
        if not places:
            misplaced.append(f"{where} ({there})")
        elif not loaded_by({there}) - loaded_by({here}):
            for_nothing.append(f"{where} ({there})")
    assert not misplaced, f"import these at module top (or name the place in LAZY_PROJECT_IMPORTS): {misplaced}"
    assert not for_nothing, f"these defer nothing the module does not load anyway: import them at its top: {for_nothing}"
    assert not set(LAZY_PROJECT_IMPORTS) - used, "no longer used: take these out"
    off_path = [here for here, _, _ in lazy_project_imports() if here not in help_screens_load()]
    assert not off_path, f"no help screen loads these: their imports go to module top: {off_path}"


def test_other_libraries_are_imported_at_module_top_but_the_heavy_ones():
    from fnmatch import fnmatch

    misplaced, for_nothing = [], []
    for here, library, where in function_level_libraries():
        if library not in LAZY_LIBRARIES and not any(fnmatch(here, a) for a, _ in LAZY_PROJECT_IMPORTS):
            misplaced.append(f"{where} ({library})")
        elif library in loaded_by({here}):
            for_nothing.append(f"{where} ({library})")
    assert not misplaced, f"import these at module top (or give the library's reason in LAZY_LIBRARIES): {misplaced}"
    assert not for_nothing, f"the module loads these at its start-up anyway: import them at module top: {for_nothing}"
    assert {library for _, library, _ in function_level_libraries()} >= {"numpy", "sympy", "rich", "safetensors"}


def test_the_start_up_reading_sees_what_a_module_loads():
    assert {"numpy", "examprep.engine._core", "examprep.errors"} <= loaded_by({"examprep.engine.rnn"})
    assert "torch" in loaded_by({"examprep.train.model"})
    assert "numpy" not in loaded_by({"examprep.cli.app"})          # what `examprep --help` loads
    assert {"examprep.cli.grade", "examprep.render.exports", "examprep.train.options"} <= help_screens_load()
    assert "examprep.grading" not in help_screens_load()
    assert any(there == "examprep.solve" for _, there, _ in lazy_project_imports())   # a pending one is seen
