"""The house rules of dwlit's code, checked: no import circle; parts that are the layers (sim < kernels < contenders <
analysis < apps < exercises), each importing only those below it and the simulator only through its front door; kernels
only in kernels/ and contenders/; every rule and constant written once; instructions that read as check -> compute ->
record; small exported cells. Each check is shown to fail on a planted case."""
import ast
import inspect
import json
import re
import statistics
from pathlib import Path

import pytest

from dwlit.sim import isa

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / 'dwlit'
MODULES = {p: '.'.join(p.relative_to(ROOT).with_suffix('').parts) for p in PKG.rglob('*.py') if p.name != '_modidx.py'}


def module_name(path: Path) -> str:
    name = MODULES[path]
    return name[:-len('.__init__')] if name.endswith('.__init__') else name


def imports_of(path: Path) -> set:
    "The dwlit modules `path` imports, anywhere in the file (a lazy import inside a function counts too)."
    me, out = module_name(path), set()
    pkg = me if path.name == '__init__.py' else me.rpartition('.')[0]
    known = {module_name(p) for p in MODULES}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import): names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = pkg.split('.')[:len(pkg.split('.')) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            subs = [f"{base}.{a.name}" for a in node.names]
            names = [s for s in subs if s in known] or [base]     # `from . import replay` imports a module, not the package
        else: continue
        out |= {n for n in names if n in known and n != me}
    return out


def cycle(graph: dict):
    "One import circle of `graph` ({module: modules it imports}) as a list, or None."
    state, stack = {}, []
    def visit(m):
        state[m] = 'open'; stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 'open': return stack[stack.index(n):] + [n]
            if n not in state and (c := visit(n)): return c
        state[m] = 'done'; stack.pop()
    for m in sorted(graph):
        if m not in state and (c := visit(m)): return c


def test_the_cycle_finder_finds_a_planted_circle():
    assert cycle({'a': {'b'}, 'b': {'c'}, 'c': set()}) is None
    assert cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']


def test_no_import_circle_in_dwlit():
    "The package facades (dwlit, dwlit.nki) import everything on purpose and are left out; no module imports them back."
    facades = {'dwlit', 'dwlit.nki'}
    graph = {module_name(p): imports_of(p) - facades for p in MODULES if module_name(p) not in facades}
    assert cycle(graph) is None, f"import circle: {' -> '.join(cycle(graph))}"
    assert 'dwlit.apps.layers' not in graph['dwlit.apps.cli'] or 'dwlit.apps.cli' not in graph['dwlit.apps.layers']


# --- every rule once ------------------------------------------------------------------------------------------

def definitions(name_re: str) -> list:
    "(module, function name) of every top-level function or method of dwlit whose name matches `name_re`."
    out = []
    for p in MODULES:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.fullmatch(name_re, node.name):
                out.append((module_name(p), node.name))
    return out


def code_lines(pattern: str) -> list:
    "(module, line) of every line of dwlit's code (comments and strings aside) matching regex `pattern`."
    out = []
    for p in MODULES:
        for k, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split('#')[0]
            if re.search(pattern, code) and not code.strip().startswith(('"', "'")): out.append((module_name(p), k))
    return out


@pytest.mark.parametrize("name,home", [('div_ceil', 'dwlit.kernels.tiling'), ('program_tiles', 'dwlit.kernels.tiling'),
                                       ('chunk_positions', 'dwlit.kernels.tiling'), ('dispatch_decision', 'dwlit.kernels.tiling'),
                                       ('check_padding', 'dwlit.sim.checks'), ('check_shape', 'dwlit.sim.checks'),
                                       ('depthwise1d', 'dwlit.kernels.reference'), ('depthwise2d', 'dwlit.kernels.reference'),
                                       ('dilate_pad', 'dwlit.kernels.reference')])
def test_each_rule_is_defined_once(name, home):
    assert definitions(name) == [(home, name)]


def solution_lines() -> set:
    "(module, line) of every line inside an exercise's `*_solution`: the reader's answer re-derives a rule on purpose."
    return {(f'dwlit.exercises.{p.stem}', k) for p in sorted((PKG / 'exercises').glob('[!_]*.py'))
            for f in ast.walk(ast.parse(p.read_text()))
            if isinstance(f, ast.FunctionDef) and f.name.endswith('_solution') for k in range(f.lineno, f.end_lineno + 1)}


def test_the_rules_are_not_written_inline_elsewhere():
    "The SPMD sharding (tiles_per_core) and the chunk width (div_ceil(512, ...)) appear only in tiling.py."
    assert {m for m, _ in set(code_lines(r'tiles_per_core\s*=')) - solution_lines()} <= {'dwlit.kernels.tiling'}
    assert solution_lines() & set(code_lines(r'tiles_per_core\s*='))   # exercise 9.1's answer does write it
    assert {m for m, _ in code_lines(r'div_ceil\((512|PACK)\b')} <= {'dwlit.kernels.tiling'}
    assert {m for m, _ in code_lines(r'-\(-[^)]*//')} == set(), "a ceiling division written inline: use div_ceil"


def test_the_definition_finder_sees_a_planted_duplicate(tmp_path, monkeypatch):
    extra = PKG / '_planted_duplicate.py'
    try:
        extra.write_text("def div_ceil(a, b): return -(-a // b)\n")
        MODULES[extra] = 'dwlit._planted_duplicate'
        assert ('dwlit._planted_duplicate', 'div_ceil') in definitions('div_ceil')
        assert ('dwlit._planted_duplicate', 1) in code_lines(r'-\(-[^)]*//')
    finally:
        MODULES.pop(extra, None); extra.unlink(missing_ok=True)


# --- the instructions -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", isa.INSTRUCTIONS)
def test_every_instruction_is_short_and_records_itself(name):
    src = inspect.getsource(getattr(isa, name))
    lines = [l for l in src.splitlines() if l.strip()]
    assert len(lines) <= 26, f"{name} has {len(lines)} lines"
    assert src.count('record(') == 1, f"{name} does not end by recording itself once"


def test_the_core_holds_no_cache():
    for mod in ('isa', 'ap', 'memory', 'language'):
        text = (PKG / 'sim' / f'{mod}.py').read_text()
        for bad in (r'lru_cache', r'functools\.cache', r'\bid\(', r'_plans\b', r'_rules\b'):
            assert not re.search(bad, text), f"dwlit/{mod}.py contains {bad!r}"


# --- small exported cells ----------------------------------------------------------------------------------------

LONG_KERNELS = {'conv1d_depthwise_default', 'conv1d_depthwise_f_packing', 'conv2d_depthwise_f01b_o01i_bf01'}


def exported_cells():
    "(notebook, lines, names defined) of every exported code cell of the book."
    for nb in sorted((ROOT / 'nbs').glob('*/[0-9]*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            src = ''.join(c['source'])
            if c['cell_type'] != 'code' or not re.match(r'\s*#\|\s*export', src): continue
            code = [l for l in src.splitlines() if l.strip() and not l.lstrip().startswith('#|')]
            names = set(re.findall(r'^(?:def|class) (\w+)', src, re.M))
            yield nb.name, len(code), names


def test_exported_cells_are_small():
    cells = list(exported_cells())
    sizes = [n for _, n, _ in cells]
    median = statistics.median(sizes)
    big = [(nb, n, sorted(names)) for nb, n, names in cells if n > 60 and not names & LONG_KERNELS]
    assert median <= 12, f"median exported cell: {median} lines"
    assert not big, f"exported cells over 60 lines: {big}"


# --- the parts (issue 27): folders that are the layers ----------------------------------------------------------

PARTS = {'sim': 0, 'kernels': 1, 'contenders': 2, 'analysis': 3, 'apps': 4, 'exercises': 5}   # rank: import lower only
FACADES = ('dwlit.nki', 'dwlit.neuronxcc')       # NKI's front ends over sim: they import sim and nothing else


def part_of(module: str):
    "The part a module belongs to ('sim', ...), 'facade' for NKI's front ends, None for the top-level package."
    if module.startswith(FACADES): return 'facade'
    bits = module.split('.')
    return bits[1] if len(bits) > 1 and bits[1] in PARTS else None


def upward_imports(graph: dict) -> list:
    "(module, what it imports) for every import of a part from a part it may not import ({module: imported modules})."
    bad = []
    for m, deps in graph.items():
        p = part_of(m)
        if p is None: continue                                           # dwlit/__init__: the book's names, on purpose
        for d in deps:
            q = part_of(d)
            if q is None or q == p: continue
            if p == 'facade': ok = q == 'sim'
            elif q == 'facade': ok = PARTS[p] > PARTS['sim']       # NKI's front end sits on sim: any part above may use it
            else: ok = PARTS[q] < PARTS[p]
            if not ok: bad.append((m, d))
    return bad


def test_no_part_imports_a_part_above_it():
    graph = {module_name(p): imports_of(p) for p in MODULES}
    bad = upward_imports(graph)
    assert not bad, "imports of a part from below it (sim < kernels < contenders < analysis < apps < exercises):\n" + \
        '\n'.join(f"{m} imports {d}" for m, d in bad)


def test_the_part_check_catches_an_upward_import():
    assert upward_imports({'dwlit.sim.isa': {'dwlit.kernels.tiling'}}) == [('dwlit.sim.isa', 'dwlit.kernels.tiling')]
    assert upward_imports({'dwlit.apps.cli': {'dwlit.exercises.kernels'}}) == [('dwlit.apps.cli', 'dwlit.exercises.kernels')]
    assert upward_imports({'dwlit.sim.isa': {'dwlit.nki.isa'}}) == [('dwlit.sim.isa', 'dwlit.nki.isa')]
    assert upward_imports({'dwlit.exercises.apps': {'dwlit.nki.language', 'dwlit.apps.tour'}}) == []
    assert upward_imports({'dwlit.nki.isa': {'dwlit.kernels.conv1d'}}) == [('dwlit.nki.isa', 'dwlit.kernels.conv1d')]
    assert upward_imports({'dwlit.kernels.conv1d': {'dwlit.sim', 'dwlit.kernels.tiling'}}) == []


def test_other_parts_use_the_simulators_front_door():
    "Outside dwlit.sim (and NKI's front ends), the simulator is imported from `dwlit.sim`, never from a module of it."
    namespaces = {'dwlit.sim.language', 'dwlit.sim.isa'}                 # NKI's nl and nisa, taken whole from the front door
    bad = [(module_name(p), d) for p in MODULES if part_of(module_name(p)) not in ('sim', 'facade', None)
           for d in imports_of(p) if d.startswith('dwlit.sim.') and d not in namespaces]
    assert not bad, '\n'.join(f"{m} imports {d}" for m, d in bad)


def kernels_defined(path: Path) -> list:
    "The functions of a module decorated as NKI kernels (@kernel, @kernel(...), @jit, @nki.jit)."
    out = []
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.FunctionDef):
            for d in n.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                if (getattr(f, 'id', None) or getattr(f, 'attr', None)) in ('kernel', 'jit'): out.append(n.name)
    return out


def test_kernels_live_in_kernels_or_contenders():
    where = {module_name(p): kernels_defined(p) for p in MODULES}
    outside = {m: ks for m, ks in where.items() if ks and part_of(m) not in ('kernels', 'contenders')}
    assert not outside, f"kernels outside dwlit.kernels and dwlit.contenders: {outside}"
    assert sum(map(len, where.values())) >= 10


def test_the_kernel_finder_sees_a_planted_kernel(tmp_path):
    f = tmp_path / 'm.py'
    f.write_text("@kernel\ndef a(x): pass\n@kernel(replay=True)\ndef b(x): pass\n@nki.jit\ndef c(x): pass\ndef d(x): pass\n")
    assert kernels_defined(f) == ['a', 'b', 'c']


# --- every constant once ------------------------------------------------------------------------------------------

CONSTANTS = {'KiB': 'dwlit.sim.target', 'TARGETS': 'dwlit.sim.target', 'PARTITIONS': 'dwlit.sim.target',
             'PSUM_BANK_BYTES': 'dwlit.sim.target', 'PSUM_BANKS': 'dwlit.sim.target', 'PSUM_BANK_FP32': 'dwlit.sim.target',
             'MAX_HBM_BYTES': 'dwlit.sim.target', 'MAX_PROGRAMS': 'dwlit.sim.target', 'MAX_INSTRUCTIONS': 'dwlit.sim.target',
             'MAX_FREE_ELEMENTS': 'dwlit.sim.target', 'MAX_VIEW_ELEMENTS': 'dwlit.sim.target', 'MAX_FREE_DIMS': 'dwlit.sim.target',
             'KERNEL_DTYPES': 'dwlit.sim.memory', 'DTYPES': 'dwlit.sim.memory', 'PACK': 'dwlit.kernels.tiling',
             'C_TILE_SIZE': 'dwlit.kernels.tiling'}


def assignments() -> dict:
    "{name: [modules that assign it at the top level]} over dwlit."
    out = {}
    for p in MODULES:
        for n in ast.parse(p.read_text()).body:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
            for t in targets:
                for x in ast.walk(t):
                    if isinstance(x, ast.Name): out.setdefault(x.id, []).append(module_name(p))
    return out


def test_every_constant_has_one_home():
    got = assignments()
    bad = {k: got.get(k) for k, home in CONSTANTS.items() if got.get(k) != [home]}
    assert not bad, f"constants assigned elsewhere than their home (or more than once): {bad}"


def test_no_second_reference_convolution_or_rule_of_ones_own():
    "One float64 reference, one padding normaliser, one target check: no function of another name doing their job."
    doubles = definitions(r'(depthwise[12]d_reference|_conv_reference|_check_padding|target_arg|_check_target)')
    assert not doubles, doubles


def recorded_op_names(sources) -> set:
    "Every name the simulator's instructions record under: `record('name', ...)`, or `who = 'name'` then `record(who, ...)`."
    names = set()
    for s in sources:
        names |= set(re.findall(r"record\('([a-z_0-9]+)'", s))
        if 'record(who' in s: names |= set(re.findall(r"who = '([a-z_0-9]+)'", s))
    return names


def test_trace_where_knows_every_op_name():
    "Trace.where refuses an op no instruction records under; OP_NAMES must be exactly the names the instructions use."
    from dwlit.sim.tracing import OP_NAMES
    found = recorded_op_names(p.read_text() for p in (ROOT / 'dwlit' / 'sim').glob('*.py'))
    assert found == OP_NAMES, f"missing from OP_NAMES: {sorted(found - OP_NAMES)}; never recorded: {sorted(OP_NAMES - found)}"


def test_the_op_name_finder_sees_a_new_instruction():
    src = "def frob(dst):\n    who = 'frobnicate'\n    record(who, 'Vector', dst, (), 1, 1)\n"
    assert recorded_op_names([src, "record('twiddle', 'DMA', d, (s,), 1, 1)"]) == {'frobnicate', 'twiddle'}


def patched_imports(source: str) -> list:
    "Attributes a module sets on names it imported (`Tensor.ap = ...`, `setattr(View, ...)`): monkeypatching."
    tree = ast.parse(source)
    imported = {a.asname or a.name.split('.')[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    hits = []
    for n in ast.walk(tree):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in imported:
                hits.append(f"{t.value.id}.{t.attr}")
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == 'setattr' and n.args
                and isinstance(n.args[0], ast.Name) and n.args[0].id in imported):
            hits.append(f"setattr({n.args[0].id}, ...)")
    return hits


def test_no_module_patches_what_it_imports():
    "A class's behaviour is in its own module: the NKI appendices register handlers (index_kind, run_time_offsets, "
    "tile_operators) instead of replacing methods of Tensor and View."
    bad = {str(p.relative_to(ROOT)): h for p in (ROOT / 'dwlit').rglob('*.py') if (h := patched_imports(p.read_text()))}
    assert not bad, bad


def test_the_patch_finder_sees_a_planted_patch():
    src = "from .memory import Tensor, View\nTensor.ap = lambda self: 0\nfor c in (Tensor,): pass\nsetattr(View, 'x', 1)\n"
    assert patched_imports(src) == ['Tensor.ap', 'setattr(View, ...)']
    assert patched_imports("class A: pass\nA.b = 1\n") == []                 # a module's own class: its business
