"""Which functions of a library module an eager test may call, one by one.

A TF1 library often mixes pure tensor functions (`padding_bias(lengths, max_len)`) with model
functions that make variables (`output_projection(inputs, vocab, scope=None, reuse=None)` under
`variable_scope` with `get_variable`). Judged as a whole (facts.eager_calls), one model function
kept every test of the module on the compat route. Judged per function:
- "pure": nothing in it (nor in the module's functions it calls) runs otherwise eagerly: an eager
  test calls it as it is;
- "model": it only makes variables the TF1 way (`get_variable`, `variable_scope`, initializers):
  an eager test calls it through TensorFlow's model-mapping route (native.test_models), where each
  variable is made once with its TF1 name and found again by name;
- "graph": anything else of facts.eager_calls.NOT_EAGER (a placeholder, `tf.gradients`, `.assign`,
  `.name`): the test keeps the compat route.
A class is "model" when only its `__init__` makes variables (the object is made through the
variable store, its other methods, pure, are called outside it), else judged whole: "pure" or "graph".
Read from the bytes with `ast` (project.graph_imports gathers it for every checked file up front).
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Optional, Tuple

from tfmigrate.facts.eager_calls import NOT_EAGER, code_only

PURE, MODEL, GRAPH = "pure", "model", "graph"
# What a function draws from TensorFlow's random seeds (`function_draws`): nothing, only its
# variables' initial values, or numbers at each run of what it built (a random op, a dropout).
INIT_DRAWS, RUN_DRAWS = "init", "run"
# How project.graph_imports.eager_imports lists a function that draws (`ops.sample_noise:draws=run`).
DRAWS_ENTRY = ":draws="
# How project.graph_imports.eager_imports lists a model function among what a test may call
# (`ops.output_projection:model`; a pure one is listed as `ops.padding_bias`, a whole module as `ops`).
MODEL_ENTRY = ":model"
# How eager_imports lists a model function whose variables are all made under `reuse=tf.AUTO_REUSE`
# (`ops.encoder:shares`): a second call shares them, in TF1's graph as in the test's variable store.
SHARES_ENTRY = ":shares"
# How eager_imports lists, for a script, a function of the project that makes untracked state
# (`untracked_functions`: `ops.dense:untracked`): the script keeps it off the model-mapping route.
UNTRACKED_ENTRY = ":untracked"
# What a model function may do beyond a pure one: make variables by name, under scopes.
_MAKES_VARIABLES = re.compile(rb"^\.(?:get_variable|variable_scope|\w*initializer)\s*\($")
_RANK = {PURE: 0, MODEL: 1, GRAPH: 2}


class _TopLevel:
    """A module's top-level functions and classes: each one's own text, the module's names it
    calls, and the text outside all of them."""

    def __init__(self, tree: ast.Module, data: bytes):
        lines = data.splitlines(keepends=True)
        self.defined = [node for node in tree.body
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        spans = {}
        for node in self.defined:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans[node.name] = (first - 1, node.end_lineno)
        taken = {k for start, end in spans.values() for k in range(start, end)}
        self.rest = b"".join(line for k, line in enumerate(lines) if k not in taken)
        self.text = {name: b"".join(lines[start:end]) for name, (start, end) in spans.items()}
        self.calls = {node.name: {n.id for n in _names_used(node) if n.id in spans and n.id != node.name}
                      for node in self.defined}

    def closed(self, own: Dict[str, str], rank: Dict[str, int], worst=None) -> Dict[str, str]:
        """`own` with what each function calls of its module counted as its own (the highest
        `rank`); `worst(name, kind)` may raise a kind further."""
        kinds = dict(own)
        changed = True
        while changed:
            changed = False
            for name, called in self.calls.items():
                top = max([kinds[name]] + [kinds[c] for c in called if c in kinds], key=rank.__getitem__)
                top = worst(name, top) if worst is not None else top
                if top != kinds[name]:
                    kinds[name], changed = top, True
        return kinds


def _names_used(node: ast.AST) -> List[ast.Name]:
    """The names `node` reads, but those read only for a dunder attribute (`Meta.__name__`,
    `Meta.observe.__name__` in an error message run nothing of `Meta`)."""
    dunder = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr.startswith("__") and n.attr.endswith("__"):
            root = n.value
            while isinstance(root, ast.Attribute):  # (`Meta.observe.__name__`)
                root = root.value
            dunder.add(id(root))
    return [n for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in dunder]


def _parsed(data: bytes) -> Optional[ast.Module]:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError):
        return None


class WholeModule(dict):
    """What `function_kinds`' `imported` gives for a module that runs eagerly as a whole: every
    function of it is pure."""

    def get(self, key, default=None):
        return PURE


# A module that runs graphs itself: a session, an entry point, a test case, an Estimator. Its compat
# route turns v2 behaviour off where it starts; a module without one is a library of such programs.
_RUNS_GRAPHS = re.compile(rb"\b(?:Session|InteractiveSession|MonitoredSession|MonitoredTrainingSession"
                          rb"|SingularMonitoredSession|Supervisor|Estimator|TestCase)\b|__name__|\bapp\.run\b"
                          rb"|\bmain\s*\(")


def library_only(data: bytes) -> bool:
    """A library of graph programs whose top level builds nothing (no session, entry point or test
    of its own): with `--native` its compat route leaves v2 behaviour to the programs that call its
    graph code, which turn it off where they start (fixers.compat_route), so an eager test may call
    its pure and model functions (project.graph_imports.eager_imports) without graph mode."""
    return not _RUNS_GRAPHS.search(code_only(data)) and function_kinds(data) is not None


def function_kinds(data: bytes, imported: Optional[Callable[[str], Optional[Dict[str, str]]]] = None
                   ) -> Optional[Dict[str, str]]:
    """Top-level function or class name -> PURE, MODEL or GRAPH (a name the top level assigns:
    PURE); None when the module's own
    top-level code (outside its functions and classes) runs otherwise eagerly, or it does not parse.
    `imported(spec)`: the kinds of a project module's functions that `ops` or `pkg.ops` names
    (WholeModule for one wholly eager, None for a module outside the project): a function calling
    another module's model function is a model function (`model.gcn` calling `layers.graph_conv`:
    one variable store tracks both), one calling what that module has not listed is GRAPH."""
    tree = _parsed(data)
    if tree is None:
        return None
    top = _TopLevel(tree, data)
    if NOT_EAGER.search(code_only(top.rest)):
        return None
    classes = {node.name: node for node in top.defined if isinstance(node, ast.ClassDef)}
    lines = data.splitlines(keepends=True)
    own = {node.name: _class_kind(node, lines) if node.name in classes else _kind(top.text[node.name], False)
           for node in top.defined}
    modules, names = _imports(tree, imported, GRAPH) if imported is not None else ({}, {})
    modules = {local: listed for local, listed in modules.items() if listed is not None}  # (outside the project)
    for node in top.defined:
        called = _called_kinds(node, modules, names, GRAPH, GRAPH)
        if node.name in classes and any(k != PURE for k in _called_kinds(_outside_init(node), modules, names,
                                                                          GRAPH, GRAPH)):
            called.append(GRAPH)  # (a method other than `__init__` calling model code: variables at each call)
        own[node.name] = max([own[node.name]] + called, key=_RANK.__getitem__)
    demoted: set = set()
    while True:  # (a model class is one whose methods besides `__init__` reach only pure code)
        kinds = top.closed({n: GRAPH if n in demoted else k for n, k in own.items()}, _RANK)
        newly = {name for name, node in classes.items() if kinds[name] == MODEL and name not in demoted and any(
            kinds.get(n, PURE) != PURE for n in _names_outside_init(node) if n in own and n != name)}
        if not newly:
            break
        demoted |= newly
    for node in tree.body:  # (constants and namedtuples of the clean top level: `DiagGaussian = ...`)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in kinds:
                kinds[target.id] = PURE
    return kinds


# What a model function a script imports may not do on the model-mapping route of the script
# (native.imported_models): make state that a tracked call does not find again by name at its next
# call (`tf.Variable`, `make_template`, a Keras layer or an RNN cell made at each call), or change
# module state (`global`: a layer-name counter names new variables at each call); nor batch
# normalization, whose moving statistics Keras would update where TF1 ran no UPDATE_OPS.
_UNTRACKED = re.compile(rb"(?<!\w)(?:Variable|make_template)\s*\(|\bkeras\s*\.|rnn_cell|Cell\s*\(|batch_norm"
                        rb"|^[ \t]*global\b", re.MULTILINE)


def untracked_functions(data: bytes, imported: Optional[Callable[[str], Optional[Dict[str, str]]]] = None
                        ) -> Optional[set]:
    """The top-level functions and classes that make untracked state (`_UNTRACKED`), with what they
    call of their module, and of the project's modules it imports (`imported(spec)`: theirs, each
    as "x"; None for a module outside the project); None when the module does not parse."""
    tree = _parsed(data)
    if tree is None:
        return None
    top = _TopLevel(tree, data)
    own = {node.name: "x" if _UNTRACKED.search(code_only(top.text[node.name])) else "" for node in top.defined}
    if imported is not None:
        modules, names = _imports(tree, imported, "")
        modules = {local: listed for local, listed in modules.items() if listed is not None}
        for node in top.defined:
            if "x" in _called_kinds(node, modules, names, "x", ""):
                own[node.name] = "x"
    return {name for name, kind in top.closed(own, {"": 0, "x": 1}).items() if kind}


# Draws at each run: TensorFlow's random ops (`tf.random_normal`, `tf.random.uniform`), dropout,
# sampling (`tf.nn.sampled_softmax_loss`, `tf.nn.nce_loss`), shuffles, called through TensorFlow's
# alias. numpy's draws are not TensorFlow's (its own seed, the same on both routes).
_RUN_DRAWS = re.compile(r"random|dropout|sampl|multinomial|categorical|shuffle|nce_loss|truncated_normal", re.IGNORECASE)
# Draws once, for variables: an initializer that draws, layers (their kernels); and `get_variable`
# without an initializer (TF1's default is glorot_uniform).
_FIXED_INITIALIZERS = re.compile(r"^(?:zeros|ones|constant|identity)(?:_initializer)?$|^(?:Zeros|Ones|Constant|Identity)$")
_PLAIN_IMPORTS = ("numpy", "math", "tensorflow", "collections", "functools", "itertools", "six", "absl",
                  "__future__", "typing", "numbers", "abc", "os", "sys", "re")
_DRAW_RANK = {"": 0, INIT_DRAWS: 1, RUN_DRAWS: 2}


def function_draws(data: bytes, imported: Optional[Callable[[str], Optional[Dict[str, str]]]] = None
                   ) -> Optional[Dict[str, str]]:
    """Top-level function or class name -> INIT_DRAWS or RUN_DRAWS, for those whose TensorFlow
    numbers depend on the graph seed (with what they call of their module, and of the modules it
    imports: `imported(spec)` gives what a module `ops` or `pkg.ops` draws, None when it is not
    one of the project's checked modules: what it calls there may draw, RUN_DRAWS). Under
    `tf.set_random_seed`, TF1 drew each op's numbers from (seed, the op's place in the graph),
    which eager TF2 does not repeat (native.test_files). None when the module does not parse."""
    tree = _parsed(data)
    if tree is None:
        return None
    top = _TopLevel(tree, data)
    modules, names = _imports(tree, imported or (lambda spec: None))
    tf = {(a.asname or a.name).split(".")[0] for node in tree.body if isinstance(node, ast.Import) for a in node.names
          if a.name.split(".")[0] == "tensorflow"} | {a.asname or a.name for node in tree.body
                                                     if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow")
                                                     for a in node.names}
    own = {}
    for node in top.defined:
        found = [""] + [_tf_draw(n, tf) for n in ast.walk(node) if isinstance(n, ast.Call)]
        own[node.name] = max(found + _called_kinds(node, modules, names, RUN_DRAWS, ""), key=_DRAW_RANK.__getitem__)
    return {name: kind for name, kind in top.closed(own, _DRAW_RANK).items() if kind}


def _called_kinds(node: ast.AST, modules: Dict[str, Optional[Dict[str, str]]], names: Dict[str, str], worst: str,
                  unlisted: str) -> list:
    """What `node` reaches of the modules it imports: `mod.f` as `mod` lists it (`unlisted` if it
    does not, `worst` if `mod` is unknown), a module passed on as `worst` (anything of it may be
    called), `f` imported by name as listed."""
    found = []
    attributes = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    named = {id(n) for n in _names_used(node)}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and id(n) not in named:
            continue
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in modules:
            listed = modules[n.value.id]
            found.append(worst if listed is None else listed.get(n.attr, unlisted))
        elif isinstance(n, ast.Name) and n.id in modules and id(n) not in attributes:
            found.append(worst)
        elif isinstance(n, ast.Name) and n.id in names:
            found.append(names[n.id])
    return found


def _imports(tree: ast.Module, imported, unknown: str = RUN_DRAWS) -> Tuple[Dict[str, Optional[Dict[str, str]]],
                                                                          Dict[str, str]]:
    """(local name of an imported module -> what it draws, None if unknown; local name of an
    imported function -> what it draws, `unknown` if its module is not one), for the imports of
    modules outside `_PLAIN_IMPORTS` (`imported`: as `function_draws` or `function_kinds` reads them)."""
    modules: Dict[str, Optional[Dict[str, str]]] = {}
    names: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in _PLAIN_IMPORTS:
                    whole = alias.asname or "." not in alias.name  # (`import a.b` binds `a`: a package's path, unknown)
                    modules[alias.asname or alias.name.split(".")[0]] = imported(alias.name) if whole else None
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] not in _PLAIN_IMPORTS):
            spec = "." * node.level + (node.module or "")
            for alias in node.names:
                local = alias.asname or alias.name
                as_module = imported(f"{spec}.{alias.name}" if node.module else spec + alias.name)
                if as_module is not None:
                    modules[local] = as_module
                    continue
                of_module = imported(spec) if node.module else None
                if unknown == RUN_DRAWS:
                    names[local] = RUN_DRAWS if of_module is None else of_module.get(alias.name, "")
                elif of_module is not None:
                    names[local] = of_module.get(alias.name, unknown)
    return modules, names


def _tf_draw(call: ast.Call, tf: set) -> str:
    """What a call of TensorFlow's draws (RUN_DRAWS, INIT_DRAWS, or "")."""
    parts = []
    func = call.func
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if not (isinstance(func, ast.Name) and func.id in tf and parts):
        # (a dataset's or a distribution's own draws, whatever holds it; numpy's aside)
        methods = parts and parts[-1] in ("shuffle", "sample") and not (isinstance(func, ast.Name) and func.id in ("np", "numpy"))
        return RUN_DRAWS if methods else ""
    last = parts[-1]
    if last == "get_variable":
        return INIT_DRAWS if len(call.args) < 4 and not any(k.arg == "initializer" for k in call.keywords) else ""
    if last.endswith("initializer") or "initializers" in parts[:-1]:
        return "" if _FIXED_INITIALIZERS.match(last) else INIT_DRAWS
    if _RUN_DRAWS.search(".".join(parts)):
        return RUN_DRAWS
    return INIT_DRAWS if "layers" in parts[:-1] or "keras" in parts[:-1] else ""


def shared_by_default(data: bytes, kinds: Dict[str, str], imported=None) -> set:
    """The model functions (`kinds`: function_kinds') whose variables are all made under
    `variable_scope(..., reuse=tf.AUTO_REUSE)` (or `reuse=True`), or a `reuse` parameter defaulting to
    it, or by such functions of the module: what they do outside those scopes reaches pure code only
    (`imported`: as function_kinds reads imports). Called again without `reuse`, TF1 shared their
    variables, and so does one variable store."""
    tree = _parsed(data)
    if tree is None:
        return set()
    lines = data.splitlines(keepends=True)
    modules, names = _imports(tree, imported, GRAPH) if imported is not None else ({}, {})
    modules = {local: listed for local, listed in modules.items() if listed is not None}
    defined = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    found: set = set()
    while True:  # (a function whose variables are all made by such functions of its module shares them too)
        more = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name not in found
                and kinds.get(node.name) == MODEL and _shares(node, lines, kinds, modules, names, found, defined)}
        if not more:
            return found
        found |= more


def _reuse_given(call: ast.Call, callee: Optional[ast.FunctionDef]) -> bool:
    """The call passes the callee's `reuse` (by keyword, by position, or by `*`/`**`)."""
    if any(k.arg in ("reuse", None) for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return True
    params = [a.arg for a in (callee.args.posonlyargs + callee.args.args)] if callee is not None else []
    return "reuse" in params and len(call.args) > params.index("reuse")


def _shares(node: ast.FunctionDef, lines, kinds: Dict[str, str], modules, names, shared: set,
            defined: Dict[str, ast.FunctionDef]) -> bool:
    """Every variable `node` makes is made under a sharing `reuse` (`_auto_reused`), its own or that
    of the module's functions in `shared` it calls; the rest of it reaches pure code only."""
    positional = node.args.posonlyargs + node.args.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(node.args.defaults):]], node.args.defaults))
    defaults.update({a.arg: d for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None})
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
        getattr(node.body[0], "value", None), ast.Constant) else node.body
    own = [s for s in body if isinstance(s, ast.With) and any(_auto_reused(i.context_expr, defaults) for i in s.items)]
    rest = [s for s in body if not any(s is t for t in own)]
    reached = [n for s in rest for n in ast.walk(s)]
    if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in shared
           and _reuse_given(c, defined.get(c.func.id)) for c in reached):
        return False  # (`encode(y, reuse=None)`: not the default the callee shares by)
    called = {n.id for n in reached if isinstance(n, ast.Name) and n.id in shared}
    return bool(own or called) and all(_kind(b"".join(lines[s.lineno - 1:s.end_lineno]), False) == PURE and all(
        k == PURE for k in _called_kinds(s, modules, names, GRAPH, GRAPH)) and all(
        kinds.get(n.id, PURE) == PURE or n.id in shared for n in ast.walk(s) if isinstance(n, ast.Name)) for s in rest)


def _auto_reused(expr: ast.expr, defaults: Dict[str, ast.expr]) -> bool:
    """`tf.variable_scope(..., reuse=tf.AUTO_REUSE)` (or `reuse=True`), or `reuse=reuse` of a parameter
    defaulting to it."""
    if not (isinstance(expr, ast.Call) and (getattr(expr.func, "attr", None) or getattr(expr.func, "id", None))
            == "variable_scope"):
        return False
    reuse = next((k.value for k in expr.keywords if k.arg == "reuse"), None)
    if isinstance(reuse, ast.Name):
        reuse = defaults.get(reuse.id)
    # (`reuse=True` finds the variables an earlier call made: a later call shares them too)
    return isinstance(reuse, ast.Attribute) and reuse.attr == "AUTO_REUSE" or (
        isinstance(reuse, ast.Constant) and reuse.value is True)


def _class_kind(node: ast.ClassDef, lines: List[bytes]) -> str:
    """A class that makes its variables in `__init__` only (`get_variable` under `variable_scope`,
    once per object) and computes in pure methods is MODEL: an eager test makes the object through
    the variable store (native.test_models), which then holds its variables by TF1 name, and calls
    its methods outside it. Anything else of the graph in it makes it GRAPH."""
    init = next((f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "__init__"),
                None)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    span = range(init.lineno - 1, init.end_lineno) if init is not None else range(0)
    rest = b"".join(lines[k] for k in range(first, node.end_lineno) if k not in span)
    if _kind(rest, False) != PURE:
        return GRAPH
    return _kind(b"".join(lines[k] for k in span), False) if init is not None else PURE


def _outside_init(node: ast.ClassDef) -> ast.ClassDef:
    """The class without its `__init__` (its bases kept: a model class may derive from one)."""
    return ast.ClassDef(name=node.name, bases=[], keywords=[], decorator_list=node.decorator_list,
                        body=[f for f in node.body if not (isinstance(f, ast.FunctionDef) and f.name == "__init__")])


def _names_outside_init(node: ast.ClassDef) -> set:
    """The names the class reads other than in `__init__` and its list of bases."""
    return {n.id for n in ast.walk(_outside_init(node)) if isinstance(n, ast.Name)}


# What a function building a training step calls (a TF1 optimizer's `minimize` of a loss tensor, the
# graph's global step): eagerly it raises, or makes a new step at each call. Graph code, though
# facts.eager_calls.NOT_EAGER leaves it to the modules (a TF2 module may well call `minimize`).
_TRAINS = re.compile(rb"\.(?:minimize|compute_gradients)\s*\(|\b(?:get_or_create_global_step|get_global_step"
                     rb"|create_global_step)\s*\(")


def _kind(text: bytes, is_class: bool) -> str:
    text = code_only(text)
    if _TRAINS.search(text):
        return GRAPH
    found = [hit.group(0) for hit in NOT_EAGER.finditer(text)]
    if not found:
        return PURE
    if is_class or not all(_MAKES_VARIABLES.match(hit) for hit in found):
        return GRAPH
    return MODEL
