"""The shape: the facade mirrors the functions it calls, raw names moved, no import cycle."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from mddframes import Client
from mddframes.api import OPERATION_METHODS, Api
from mddframes.http.endpoints import ENDPOINTS

PACKAGE = Path(__file__).parents[2] / "mddframes"


def client_members() -> dict[str, object]:
    """Client's attributes, its own and those of its mddframes bases (client_writes,
    client_panels: the facade split by job)."""
    members: dict[str, object] = {}
    for cls in reversed(Client.__mro__):
        if cls.__module__.startswith("mddframes"):
            members.update(vars(cls))
    return members


FACADE_METHODS = sorted(
    name
    for name, member in client_members().items()
    if callable(member) and hasattr(member, "__wrapped_function__")
)


def test_the_facade_delegates_most_public_methods():
    # read_* (11), iter_* (2), write_*/restore/restore_backups (6), exports (4), elements (6),
    # journal (3), doctor (1), lineage (read_lineage, search: 2), snapshot (1)
    assert len(FACADE_METHODS) == 36


@pytest.mark.parametrize("name", FACADE_METHODS)
def test_facade_signature_matches_the_function_it_calls(name):
    method = getattr(Client, name)
    function = method.__wrapped_function__
    facade = list(inspect.signature(method).parameters.values())[1:]  # self
    layer = list(inspect.signature(function).parameters.values())[1:]  # api
    assert [(p.name, p.kind, p.default) for p in facade] == [
        (p.name, p.kind, p.default) for p in layer
    ]
    for ours, theirs in zip(facade, layer, strict=True):
        assert str(ours.annotation) == str(theirs.annotation), (name, ours.name)
    assert inspect.getdoc(method), name
    assert "api : Api" not in inspect.getdoc(method)
    assert "Parameters" in inspect.getdoc(method) or not facade


def test_no_public_client_method_hides_its_parameters_behind_kwargs():
    hidden = []
    for name, member in inspect.getmembers(Client, inspect.isfunction):
        if name.startswith("_") or name == "create_child":
            continue  # create_child takes the element's attributes as keywords, by design
        kinds = {p.kind for p in inspect.signature(member).parameters.values()}
        if inspect.Parameter.VAR_KEYWORD in kinds:
            hidden.append(name)
    assert hidden == []


def test_every_operation_has_exactly_one_api_method():
    assert set(OPERATION_METHODS) == set(ENDPOINTS) - {"getToken"}
    for operation, method in OPERATION_METHODS.items():
        assert callable(getattr(Api, method)), operation
        assert operation in inspect.getdoc(getattr(Api, method)), method


RETIRED_RAW_NAMES = {  # the Client's old raw names (removed, see CHANGELOG.md) -> client.api.<name>
    "get_tree": "get_tree",
    "get_structure": "get_structure",
    "get_raw_data": "get_raw_data",
    "get_object_types": "get_object_types",
    "get_table": "get_table",
    "get_table_stream": "get_table_stream",
    "put_table": "put_table",
    "get_mapping": "get_mapping",
    "put_mapping": "put_mapping",
    "list_packages": "list_deployment_packages",
    "post_package_structures": "add_to_deployment_package",
    "post_child": "create_child_structure",
    "export_structure": "external_export_structure",
    "post_export": "structure_mass_export_async",
    "get_export_status": "structure_mass_export_async_status",
    "get_export_result": "structure_mass_export_async_result",
    "deploy_structure": "deploy_structure",
    "confirm_deployment": "confirm_structure_deployment",
}


@pytest.mark.parametrize("old", sorted(RETIRED_RAW_NAMES))
def test_retired_raw_names_are_gone_and_live_on_the_api(old):
    assert not hasattr(Client, old)
    assert callable(getattr(Api, RETIRED_RAW_NAMES[old]))


# -- import cycles -----------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every mddframes module ``path`` imports, at any depth and under TYPE_CHECKING too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """mddframes' modules and the mddframes modules each imports (packages: their __init__)."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    graph = {name: _imports(path, modules) - {name} for name, path in paths.items()}
    for name, targets in graph.items():
        # importing a submodule runs its package's __init__ first; that is not an edge of
        # ours unless the package's __init__ is what we import from
        graph[name] = {t for t in targets if not name.startswith(t + ".")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_in_mddframes_runtime_or_type_only():
    assert find_cycle(import_graph()) is None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_lower_layers_never_import_the_facade_or_the_panels():
    graph = import_graph()
    lower = [m for m in graph if m.split(".")[1:2] and m.split(".")[1] in LOWER]
    for module in lower:
        assert not graph[module] & {"mddframes.client", "mddframes.widgets", "mddframes.cli"}, (
            module
        )


LOWER = {"api", "api_bodies", "http", "codec", "frames", "writing", "exports", "elements", "spreadsheet",
         "bulk", "ids", "context", "archive", "errors", "config"}  # fmt: skip


def test_the_emulator_and_the_client_side_import_nothing_of_each_other():
    graph = import_graph()
    for module, targets in graph.items():
        if module.startswith("mddframes.emulator"):  # the wire profile is shared by both
            assert all(t.startswith(("mddframes.emulator", "mddframes.wire")) for t in targets), (
                module
            )
        elif module.startswith("mddframes.") and module not in CLIENT_SIDE_STARTERS:
            assert not any(t.startswith("mddframes.emulator") for t in targets), module


def test_the_wire_profile_imports_nothing_of_mddframes_outside_it():
    graph = import_graph()
    wire = [m for m in graph if m.startswith("mddframes.wire")]
    assert len(wire) >= 5
    for module in wire:
        assert all(t.startswith("mddframes.wire") for t in graph[module]), module


# The demo and the command line start an emulator on purpose (the demo, `mddframes emulator`);
# so do the helper of users' tests (a replayed tenant) and doctor --recording (offline).
CLIENT_SIDE_STARTERS = {"mddframes.demo", "mddframes.cli", "mddframes.cli._doctor_offline",
                        "mddframes.testing",
                        "mddframes.recording.offline"}  # fmt: skip


# -- private names stay private ------------------------------------------------------


def _private_imports() -> list[str]:
    """Imports of another module's underscore name, or of a private module from outside
    its package (a package's own ``_x`` modules, like ``cli._output``, are its business)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        package = importer if path.name == "__init__.py" else importer.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
                continue
            if not node.module.startswith("mddframes"):
                continue
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                parts = target.split(".")
                for depth, part in enumerate(parts):
                    if part.startswith("_") and not part.startswith("__"):
                        owner = ".".join(parts[:depth])
                        if package != owner and not package.startswith(owner + "."):
                            found.append(f"{importer} imports {target}")
                        break
    return found


def test_no_module_imports_another_modules_private_names():
    assert _private_imports() == []


# -- imports only go down (the layers of docs/internals.md) --------------------------

INTERNALS = Path(__file__).parents[2] / "docs" / "internals.md"


def declared_layers() -> dict[str, int]:
    """Top-level module or package -> its layer (1 is the top) in docs/internals.md's
    block of ``layer N: a, b, c`` lines; ``apart:`` names get 0 (never counted)."""
    layers: dict[str, int] = {}
    for line in INTERNALS.read_text(encoding="utf-8").splitlines():
        head, colon, names = line.partition(":")
        if colon and (head == "apart" or re.fullmatch(r"layer \d+", head)):
            number = 0 if head == "apart" else int(head.split()[1])
            layers.update(dict.fromkeys((n.strip() for n in names.split(",")), number))
    return layers


def _unit(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def _root_imports() -> dict[str, set[str]]:
    """``from mddframes import name`` of a name that is not a module: an import of the
    package's root, which import_graph leaves out (every module is under the root)."""
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.ImportFrom) and node.module == "mddframes"
                else []
            )
            if any(f"mddframes.{name}" not in modules for name in names):
                found.setdefault(_module_name(path), set()).add("mddframes")
    return found


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """Every import of a module in a higher layer (a smaller number) than the importer's."""
    climbing = []
    for module, targets in sorted(graph.items()):
        mine = layers[_unit(module)]
        for target in sorted(targets):
            theirs = layers[_unit(target)]
            if mine and theirs and theirs < mine:
                climbing.append(f"{module} (layer {mine}) imports {target} (layer {theirs})")
    return climbing


def test_every_top_level_module_has_a_layer():
    units = {_unit(m) for m in import_graph()}
    assert units - set(declared_layers()) == set()
    assert set(declared_layers()) - units == set()


def test_no_import_climbs_the_layers():
    graph = import_graph()
    for module, targets in _root_imports().items():
        graph[module] |= targets
    assert upward_imports(graph, declared_layers()) == []


def test_the_count_finds_an_import_that_climbs():
    graph = {"mddframes.recording.recorder": {"mddframes", "mddframes.http.session"}}
    layers = {"recording": 4, "mddframes": 1, "http": 4}
    assert upward_imports(graph, layers) == [
        "mddframes.recording.recorder (layer 4) imports mddframes (layer 1)"
    ]
