"""`fix --keras3`: the model-mapping route's TF1 layers as Keras layers, where measured equal
(issue 22, item 4).

It reads what `fix --native` wrote. A TF1 model function called through `TF1Model(f)` becomes a
`tf.keras.layers.Layer` whose `__init__` makes one Keras layer per `tf.compat.v1.layers` call and
whose `call` is the function's body calling them, as the migration guide's incremental step does:

    def generator(z):                                  class Generator(tf.keras.layers.Layer):
        with tf.compat.v1.variable_scope("g"):             def __init__(self):
            return tf.compat.v1.layers.dense(z, 4)  ->         super().__init__(name="generator")
    generator_model = TF1Model(generator)                      self.dense = tf.keras.layers.Dense(4, ...)
                                                           def call(self, z):
                                                               return self.dense(z)
                                                       generator_model = Generator()

Numbers stay equal (measured under TF 2.21, tests/test_native_keras3.py): the weights start as TF1
started them (a kernel without an initializer keeps TF1's default, `glorot_uniform_initializer`,
which draws what the tracked layer drew; Keras's own GlorotUniform draws other numbers) and the
layer computes the same. What the function keeps of TF1 (`get_variable`, other layers, RNN cells)
still runs tracked, under `track_tf1_style_variables` on `call`; a file left with no TF1 model code
at all drops `TF_USE_LEGACY_KERAS` and runs on Keras 3 without tf-keras. What stays TF1 is named
per construct in `Upgrade.kept` (and reported by TFM101 / TFM210 as migration debt).

A graph class (native.classes: a `tf.Module` whose tracked `build_graph` builds the TF1 graph at each
call) gets the same: the layers `build_graph` and the helper methods it calls once make become Keras
layers made once at the end of `__init__` (where their arguments, literals, module names and
attributes only `__init__` sets, mean what they meant), and with no TF1 variable left `build_graph`
loses `track_tf1_style_variables`. Such a file keeps tf-keras (`_CLASS_OPTIMIZER`, measured).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.program import LEGACY_KERAS_LINE
from tfmigrate.fixers.layers import KERAS_ATTRIBUTES, SPECS, map_call
from tfmigrate.native.syntax import calls_in, code

# `tf.compat.v1.layers.<function>` replaced, each measured equal at level 2 and 3 (tests/test_native_keras3.py:
# CONSTRUCTS, CLASS_CONSTRUCTS).
REPLACED = ("dense", "conv2d", "max_pooling2d", "dropout", "conv1d", "max_pooling1d", "average_pooling1d",
            "average_pooling2d", "flatten")
_WITH_KERNEL = ("dense", "conv2d", "conv1d")
# TF1 initializers whose TF2 spelling computes the same values (no random draw).
_TF2_INITIALIZERS = ("constant_initializer", "zeros_initializer", "ones_initializer")
# Why an embedding table stays a tracked `get_variable` (measured, tests/test_native_keras3.py).
_EMBEDDING = ("`tf.nn.embedding_lookup` over its `get_variable` table stays TF1: a Keras Embedding computes the "
              "same gather, but Keras 3's Adam updates a sparse gradient with repeated ids otherwise than TF1's "
              "and tf-keras's (a fixture printed loss=0.00650 against 0.00434), so the file keeps the tracked table")
# What, left in a function, still needs the tracked call (variables made by TF1 name).
_TRACKED = re.compile(r"compat\.v1\.(get_variable\b|layers\.|nn\.rnn_cell\.|nn\.(static_|dynamic_|bidirectional_)"
                      r"|Variable\b|keras\.)")
_NEEDS_LEGACY = re.compile(r"compat\.v1\.(layers\.|nn\.rnn_cell\.|keras\.)|track_tf1_style_variables")


@dataclass
class Upgrade:
    code: str                                   # the module, with what could be replaced replaced
    replaced: List[str] = field(default_factory=list)   # "generator: dense, dense"
    kept: List[str] = field(default_factory=list)       # "discriminator: `get_variable` (why)"


def upgrade(text: str) -> Upgrade:
    """`text` (what `fix --native` wrote) with its tracked TF1 layers as Keras layers, where exact."""
    module = cst.parse_module(text)
    model = next((n for n in module.body if isinstance(n, cst.ClassDef) and n.name.value == "TF1Model"), None)
    graph_classes = [n for n in module.body if isinstance(n, cst.ClassDef) and n is not model
                     and _tracked_method(n)[0] is not None]
    result = Upgrade(text)
    if model is None and not graph_classes:
        return result
    if "Saver(" in text:
        result.kept.append(f"every {'model function' if model is not None else 'graph class'}: a `tf.train.Saver` "
                           "reads the variables by TF1's names, which Keras layers do not keep")
        return result
    if "float64" in text:
        result.kept.append(f"every {'model function' if model is not None else 'graph class'}: float64 data (a "
                           "Keras layer computes in float32 where TF1's took its input's dtype)")
        return result
    taken = _names(module)
    changed: Dict[int, cst.CSTNode] = {}  # id of a module statement -> what it becomes
    if model is not None:
        changed.update(_model_functions(module, model, taken, result))
    for node in graph_classes:
        upgraded = _graph_class(node, module, result)
        if upgraded is not None:
            changed[id(node)] = upgraded
    if not changed:
        return result
    module = module.with_changes(body=[changed.get(id(n), n) for n in module.body])
    if model is not None and _references(module, "TF1Model") == 1:  # only its own class statement
        module = module.with_changes(body=[n for n in module.body if n is not model])
    written_text = module.code
    if not graph_classes and not _NEEDS_LEGACY.search(written_text):
        written_text = _without_legacy_keras(written_text)
    result.code = written_text
    return result


def _model_functions(module: cst.Module, model: cst.ClassDef, taken: Set[str],
                     result: Upgrade) -> Dict[int, cst.CSTNode]:
    """The model functions called through `TF1Model(f)` as Keras layers: id of each statement
    replaced (the def, each `m = TF1Model(f)`) -> its replacement."""
    tf = code(model.bases[0].value).rsplit(".", 1)[0]
    functions = {n.name.value: n for n in module.body if isinstance(n, cst.FunctionDef)}
    sites = _sites(module)
    classes: Dict[str, cst.ClassDef] = {}
    for name, sited in sites.items():
        function = functions.get(name)
        if function is None:
            continue
        refs = _references(module, name)
        if refs != len(sited) + 1:  # its def, and each TF1Model(f)
            result.kept.append(f"`{name}`: it is also called as a function")
            continue
        written = _Layers(tf, name, functions).convert(function)
        result.kept.extend(f"`{name}`: {why}" for why in written.kept)
        if not written.layers:
            continue
        cls = _class_name(name, taken)
        taken.add(cls)
        classes[name] = _class(tf, cls, function, written)
        result.replaced.append(f"`{name}`: " + ", ".join(f"`{kind}`" for kind, _, _ in written.layers))
    changed: Dict[int, cst.CSTNode] = {}
    for node in module.body:
        if isinstance(node, cst.FunctionDef) and node.name.value in classes:
            changed[id(node)] = classes[node.name.value].with_changes(leading_lines=node.leading_lines)
        elif isinstance(node, cst.SimpleStatementLine) and _site_of(node) in classes:
            made = code(classes[_site_of(node)].name)
            assign = node.body[0]
            changed[id(node)] = node.with_changes(
                body=[assign.with_changes(value=cst.parse_expression(f"{made}()"))])
    return changed


@dataclass
class _Written:
    body: cst.BaseSuite
    layers: List[Tuple[str, str, str]]  # (TF1 function, attribute, Keras constructor)
    kept: List[str]
    tracked: bool


class _Layers(cst.CSTTransformer):
    """The function's body with each replaceable layer call as a call of `self.<attribute>`."""

    def __init__(self, tf: str, name: str, functions: Dict[str, cst.FunctionDef]):
        self.tf, self.name, self.functions = tf, name, functions
        self.depth = 0  # loops, comprehensions, lambdas and inner functions around a call
        self.layers: List[Tuple[str, str, str]] = []
        self.kept: List[str] = []
        self.used: Set[str] = set()
        self.repeated = ""  # why each layer call of the code converted stays tracked (a method run more than once)
        self.outside: Optional[Callable[[List[cst.Arg]], Optional[str]]] = None  # why a constructor cannot move

    def convert(self, function: cst.FunctionDef) -> _Written:
        scopes = [c for c in calls_in(function) if code(c.func) == f"{self.tf}.compat.v1.variable_scope"]
        for scope in scopes:
            first = scope.args[0].value if scope.args and scope.args[0].keyword is None else None
            extra = [a.keyword.value for a in scope.args[1:] if a.keyword is not None and a.keyword.value != "reuse"]
            if not isinstance(first, cst.SimpleString) or extra or any(a.keyword is None for a in scope.args[1:]):
                return _Written(function.body, [], ["its variable scope is named by a parameter or sets defaults "
                                                    "(one Keras layer per call would share what TF1 kept apart)"],
                                True)
        for inner in calls_in(function):
            callee = code(inner.func)
            if callee in self.functions and "compat.v1" in code(self.functions[callee]):
                return _Written(function.body, [], [f"it calls the model function `{callee}`"], True)
        if any(code(c.func) == f"{self.tf}.nn.embedding_lookup" for c in calls_in(function)):
            self.kept.append(_EMBEDDING)
        body = function.body.visit(self)
        rest = code(body)
        for match in sorted(set(m.group(0) for m in _TRACKED.finditer(rest))):
            if not match.startswith("compat.v1.layers."):
                self.kept.append(f"`{self.tf}.{match.rstrip('.')}` stays TF1 (no Keras layer holds its variables by "
                                 "TF1's name); it runs tracked")
        return _Written(body, self.layers, self.kept, bool(_TRACKED.search(rest)))

    def _enter(self, _node) -> None:
        self.depth += 1

    def _leave(self, _original, updated):
        self.depth -= 1
        return updated

    visit_For = visit_While = visit_ListComp = visit_GeneratorExp = visit_DictComp = visit_SetComp = _enter
    visit_Lambda = visit_FunctionDef = _enter
    leave_For = leave_While = leave_ListComp = leave_GeneratorExp = leave_DictComp = leave_SetComp = _leave
    leave_Lambda = leave_FunctionDef = _leave

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        spelled = code(original.func)
        prefix = f"{self.tf}.compat.v1.layers."
        if not spelled.startswith(prefix):
            return updated
        kind = spelled[len(prefix):]
        if kind not in REPLACED:
            self.kept.append(f"`{spelled}` has no measured Keras mapping here; it runs tracked")
            return updated
        if self.repeated:
            self.kept.append(f"`{spelled}` {self.repeated}; it runs tracked")
            return updated
        if self.depth:
            self.kept.append(f"`{spelled}` in a loop, comprehension or inner function (one Keras layer would "
                             "not be the layers TF1 made there); it runs tracked")
            return updated
        mapped = map_call(kind, updated)
        if isinstance(mapped, str):
            self.kept.append(f"`{spelled}`: {mapped}; it runs tracked")
            return updated
        if kind == "dropout" and any(code(a.value) != "False" for a in mapped.call_args if a.keyword
                                     and a.keyword.value == "training"):
            self.kept.append(f"`{spelled}` in training mode (Keras draws another random mask); it runs tracked")
            return updated
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in mapped.ctor_args]
        args = [a.with_changes(value=a.value.visit(_Initializers(self.tf))) for a in args]
        why = self.outside(args) if self.outside is not None else None
        if why:
            self.kept.append(f"`{spelled}`: {why}; it runs tracked")
            return updated
        given = {a.keyword.value for a in args if a.keyword is not None}
        if kind in _WITH_KERNEL and "kernel_initializer" not in given:
            # TF1Model's scope default: Keras's GlorotUniform would draw other numbers (measured).
            args.append(cst.Arg(cst.parse_expression(f"{self.tf}.compat.v1.glorot_uniform_initializer()"),
                                keyword=cst.Name("kernel_initializer"),
                                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                      whitespace_after=cst.SimpleWhitespace(""))))
        attr = mapped.name if mapped.name and mapped.name.isidentifier() else kind
        base, n = attr, 0
        while attr in self.used or attr in KERAS_ATTRIBUTES:
            n += 1
            attr = f"{base}_{n}"
        self.used.add(attr)
        keras = SPECS[kind].cls
        ctor = f"{self.tf}.keras.layers.{keras}({', '.join(code(a) for a in args)})"
        self.layers.append((kind, attr, ctor))
        call_args = [cst.Arg(mapped.inputs)] + [a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                                for a in mapped.call_args]
        return cst.Call(func=cst.parse_expression(f"self.{attr}"),
                        args=[a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                              for a in call_args[:-1]] + call_args[-1:],
                        lpar=updated.lpar, rpar=updated.rpar)


class _Initializers(cst.CSTTransformer):
    """`tf.compat.v1.constant_initializer(v)` as TF2's `tf.constant_initializer(v)` (the same values)."""

    def __init__(self, tf: str):
        self.tf = tf

    def leave_Attribute(self, original, updated):
        for name in _TF2_INITIALIZERS:
            if code(original) == f"{self.tf}.compat.v1.{name}":
                return cst.parse_expression(f"{self.tf}.{name}")
        return updated


class _Unscoped(cst.CSTTransformer):
    """`with tf.compat.v1.variable_scope(...):` blocks dropped, their bodies kept: with no TF1
    variable left inside, the scope names nothing."""

    def __init__(self, tf: str):
        self.tf = tf

    def leave_With(self, original: cst.With, updated: cst.With):
        if len(updated.items) != 1 or not isinstance(updated.items[0].item, cst.Call) or updated.items[0].asname or \
                code(updated.items[0].item.func) != f"{self.tf}.compat.v1.variable_scope":
            return updated
        return cst.FlattenSentinel(list(updated.body.body))


def _class(tf: str, cls: str, function: cst.FunctionDef, written: _Written) -> cst.ClassDef:
    name = function.name.value
    params = code(function.params)
    made = "".join(f"        self.{attr} = {ctor}\n" for _, attr, ctor in written.layers)
    doc = (f'    """`{name}`, TF1 model code, with its `tf.layers` calls as Keras layers made once'
           + ("; what stays\n    TF1 runs tracked, by TF1 name" if written.tracked else "") + '."""\n')
    text = (f"class {cls}({tf}.keras.layers.Layer):\n{doc}\n"
            f"    def __init__(self):\n"
            f'        super().__init__(name="{name}")\n{made}\n'
            + (f"    @{tf}.compat.v1.keras.utils.track_tf1_style_variables\n" if written.tracked else "")
            + f"    def call(self{', ' if params else ''}{params}):\n        pass\n")
    node = cst.ensure_type(cst.parse_statement(text), cst.ClassDef)
    call = node.body.body[-1]
    body = written.body
    if written.tracked:
        scope = cst.parse_statement(
            f"with {tf}.compat.v1.variable_scope({tf}.compat.v1.get_variable_scope(), initializer=default):\n"
            f"    pass\n")
        default = cst.parse_statement(f"default = {tf}.compat.v1.glorot_uniform_initializer()\n")
        inner = list(body.body)
        if inner and _is_docstring(inner[0]):
            inner = inner[1:]
        body = body.with_changes(body=[default, scope.with_changes(body=scope.body.with_changes(body=inner))])
    else:
        body = body.visit(_Unscoped(tf))
    call = call.with_changes(body=body)
    return node.with_changes(body=node.body.with_changes(body=[*node.body.body[:-1], call]))


def _is_docstring(node) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Expr) \
        and isinstance(node.body[0].value, cst.SimpleString)


def _site_of(node) -> Optional[str]:
    """`f` of a statement `name = TF1Model(f)`."""
    if not isinstance(node, cst.SimpleStatementLine) or len(node.body) != 1 or not isinstance(node.body[0], cst.Assign):
        return None
    value = node.body[0].value
    if isinstance(value, cst.Call) and code(value.func) == "TF1Model" and len(value.args) == 1 \
            and isinstance(value.args[0].value, cst.Name) and value.args[0].keyword is None:
        return value.args[0].value.value
    return None


def _sites(module: cst.Module) -> Dict[str, List[cst.SimpleStatementLine]]:
    sites: Dict[str, List[cst.SimpleStatementLine]] = {}
    for node in module.body:
        name = _site_of(node)
        if name is not None:
            sites.setdefault(name, []).append(node)
    return sites


def _references(module: cst.Module, name: str) -> int:
    """How often `name` occurs as a name (its definition included)."""
    count = 0

    class _Count(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            nonlocal count
            count += node.value == name

    module.visit(_Count())
    return count


def _names(module: cst.Module) -> Set[str]:
    names: Set[str] = set()

    class _All(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    module.visit(_All())
    return names


def _class_name(function: str, taken: Set[str]) -> str:
    name = "".join(part[:1].upper() + part[1:] for part in function.split("_") if part) or "Model"
    while name in taken:
        name += "Layer"
    return name


def _without_legacy_keras(text: str) -> str:
    """The module without the legacy-Keras switch `fix --native` set (and its `import os` when
    nothing else uses `os`)."""
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if line.strip() != LEGACY_KERAS_LINE]
    rest = "".join(kept)
    if not re.search(r"\bos\.", rest):
        for index, line in enumerate(kept):
            if line.strip() == "import os":
                del kept[index]
                break
    return "".join(kept)


# A graph class (native.classes): `class Net(tf.Module)` whose tracked `build_graph` (and the helper
# methods it calls) builds the TF1 graph at each call. Its layers become Keras layers made once, at
# the end of `__init__`, where their arguments mean what they meant in the graph code.
_TRACK = "compat.v1.keras.utils.track_tf1_style_variables"
_MODULE_MEMBERS = ("name", "name_scope", "variables", "trainable_variables", "non_trainable_variables",
                   "submodules", "with_name_scope")
# Why a graph class's file keeps tf-keras (measured under TF 2.21 with `TF_USE_LEGACY_KERAS` dropped).
_CLASS_OPTIMIZER = ("the class stays a `tf.Module` trained by TF1's optimizer (`tf.compat.v1.train`), so the file "
                    "keeps tf-keras and its Keras layers are tf-keras's: a `tf.Module` does not list Keras 3 layers' "
                    "variables (`ValueError: No variables provided`), and TF1's optimizer does not update them "
                    "(`'Variable' object has no attribute '_in_graph_mode'`)")


def _tracked_method(node: cst.ClassDef) -> Tuple[Optional[cst.FunctionDef], str]:
    """The one method of a graph class that `track_tf1_style_variables` decorates, and the TF alias."""
    found = [(m, code(d.decorator)) for m in node.body.body if isinstance(m, cst.FunctionDef)
             for d in m.decorators if code(d.decorator).endswith("." + _TRACK)]
    if len(found) != 1 or not node.bases or not code(node.bases[0].value).endswith(".Module"):
        return None, ""
    return found[0][0], found[0][1][:-len(_TRACK) - 1]


def _graph_class(node: cst.ClassDef, module: cst.Module, result: Upgrade) -> Optional[cst.ClassDef]:
    """The graph class `node` with its replaceable layers as Keras layers made once in `__init__`,
    and without the tracking decorator when no TF1 variable is left; None when nothing changes."""
    tracked, tf = _tracked_method(node)
    cls = node.name.value
    methods = {m.name.value: m for m in node.body.body if isinstance(m, cst.FunctionDef)}
    init = methods.get("__init__")
    if tracked is None or init is None:
        return None
    if any(isinstance(n, cst.ClassDef) and any(code(b.value) == cls for b in n.bases) for n in module.body):
        result.kept.append(f"`{cls}`: another class derives from it (its `__init__` would make layers the "
                           "subclass's graph does not call); its layers run tracked")
        return None
    refs = _self_references(node)
    graph = [tracked.name.value]
    for name in graph:  # the helper methods the graph code calls, and theirs
        for callee in sorted({c for c, _ in _self_calls(methods[name])}):
            if callee in methods and callee not in graph and callee != "__init__":
                graph.append(callee)
    once = {tracked.name.value}
    for name in graph[1:]:  # a helper called once, not in a loop, by a method run once per graph
        sites = [(caller, depth) for caller in graph for c, depth in _self_calls(methods[caller]) if c == name]
        if refs.get(name, 0) == 1 and len(sites) == 1 and sites[0][1] == 0 and sites[0][0] in once:
            once.add(name)
    for scope in (c for m in graph for c in calls_in(methods[m]) if code(c.func) == f"{tf}.compat.v1.variable_scope"):
        keywords = {a.keyword.value: code(a.value) for a in scope.args if a.keyword is not None}
        ours = code(scope.args[0].value) == f"{tf}.compat.v1.get_variable_scope()" and keywords == {
            "initializer": "default"}
        if not ours and (set(keywords) - {"default_name"} or len(scope.args) - len(keywords) > 1):
            result.kept.append(f"`{cls}`: a variable scope sets defaults or reuse (one Keras layer per call would "
                               "not share what TF1 shared by name); its layers run tracked")
            return None
    attributes = {a for m in methods.values() for a in _self_assigned(m)}
    in_init = _self_assigned(init) - {a for name, m in methods.items() if name != "__init__" for a in _self_assigned(m)}
    module_names = _module_names(module)
    init_locals = _locals(init)
    layers = _Layers(tf, cls, {})
    layers.used = set(methods) | attributes | set(refs) | set(_MODULE_MEMBERS)
    written: Dict[str, cst.FunctionDef] = {}
    for name in graph:
        method = methods[name]
        local = _locals(method)
        layers.outside = lambda args, local=local: _outside(args, local, init_locals, module_names, in_init, tf)
        layers.repeated = "" if name in once else (
            f"in method `{name}`, which runs more than once per graph (one Keras layer would be shared where TF1 "
            "made one per call)")
        body = method.body.visit(layers)
        if body is not method.body:
            written[name] = method.with_changes(body=body)
    result.kept.extend(f"`{cls}`: {why}" for why in dict.fromkeys(layers.kept))
    if not layers.layers:
        return None
    result.replaced.append(f"`{cls}`: " + ", ".join(f"`{kind}`" for kind, _, _ in layers.layers))
    made = [cst.parse_statement(f"self.{attr} = {ctor}\n") for _, attr, ctor in layers.layers]
    written["__init__"] = init.with_changes(body=init.body.with_changes(body=[*init.body.body, *made]))
    body = [written.get(m.name.value, m) if isinstance(m, cst.FunctionDef) else m for m in node.body.body]
    upgraded = node.with_changes(body=node.body.with_changes(body=body))
    called = {code(c.func) for c in calls_in(upgraded) if isinstance(c.func, cst.Name)}
    functions = [n for n in module.body if isinstance(n, cst.FunctionDef) and n.name.value in called]
    undecorated = upgraded.visit(_Untracked(tf, tracked.name.value))
    rest = code(undecorated) + "".join(code(f) for f in functions)
    left = sorted(set(m.group(0) for m in _TRACKED.finditer(rest)))
    result.kept.extend(f"`{cls}`: `{tf}.{match.rstrip('.')}` stays TF1 (no Keras layer holds its variables by TF1's "
                       "name); it runs tracked" for match in left if not match.startswith("compat.v1.layers."))
    result.kept.append(f"`{cls}`: {_CLASS_OPTIMIZER}")
    return upgraded if left else undecorated


class _Untracked(cst.CSTTransformer):
    """The graph class without `track_tf1_style_variables` on its graph method, nor the scope that
    gave TF1's default initializer, nor the variable scopes that named nothing left."""

    def __init__(self, tf: str, method: str):
        self.tf, self.method = tf, method

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if original.name.value != self.method:
            return updated.visit(_Unscoped(self.tf))
        decorators = [d for d in updated.decorators if not code(d.decorator).endswith("." + _TRACK)]
        inner = []
        for statement in updated.body.body:
            if not inner and _is_docstring(statement) and "by TF1 name" in code(statement):
                inner.append(cst.parse_statement(
                    '"""The graph of TF1\'s `__init__`, built at each call with the Keras layers `__init__` made."""\n'))
                continue
            if code(statement).strip() == f"default = {self.tf}.compat.v1.glorot_uniform_initializer()":
                continue
            if isinstance(statement, cst.With) and code(statement).startswith(
                    f"with {self.tf}.compat.v1.variable_scope({self.tf}.compat.v1.get_variable_scope(), "
                    "initializer=default)"):
                inner.extend(statement.body.body)
                continue
            inner.append(statement)
        body = updated.body.with_changes(body=inner).visit(_Unscoped(self.tf))
        return updated.with_changes(decorators=decorators, body=body)


def _outside(args: List[cst.Arg], local: Set[str], init_locals: Set[str], module_names: Set[str],
             in_init: Set[str], tf: str) -> Optional[str]:
    """Why the constructor arguments `args` of a layer in a graph method cannot be written at the end
    of `__init__` (a name local to the graph code, an attribute the graph code sets), or None."""
    names: Set[str] = set()
    attributes: Set[str] = set()

    class _Read(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                attributes.add(node.attr.value)
            else:
                node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            names.add("lambda")
            return False

    for arg in args:
        arg.value.visit(_Read())
    import builtins

    for name in sorted(names):
        if name == "self" or name in local or name in init_locals or not (
                name == tf or name in module_names or hasattr(builtins, name)):
            return f"its arguments read `{name}`, which the graph code computes"
    for attr in sorted(attributes - in_init):
        return f"its arguments read `self.{attr}`, which the graph code sets"
    return None


def _self_calls(method: cst.FunctionDef) -> List[Tuple[str, int]]:
    """(name, depth) of each `self.<name>(...)` call in `method`, depth counting the loops,
    comprehensions, lambdas and inner functions around it."""
    found: List[Tuple[str, int]] = []

    class _Calls(cst.CSTVisitor):
        def __init__(self):
            self.depth = 0

        def _enter(self, _node) -> None:
            self.depth += 1

        def _leave(self, _node) -> None:
            self.depth -= 1

        visit_For = visit_While = visit_ListComp = visit_GeneratorExp = visit_DictComp = visit_SetComp = _enter
        visit_Lambda = visit_FunctionDef = _enter
        leave_For = leave_While = leave_ListComp = leave_GeneratorExp = leave_DictComp = leave_SetComp = _leave
        leave_Lambda = leave_FunctionDef = _leave

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                found.append((func.attr.value, self.depth - 1))  # the method's own def counts one

    method.visit(_Calls())
    return found


def _self_references(node: cst.ClassDef) -> Dict[str, int]:
    """How often each `self.<name>` occurs in the class."""
    counts: Dict[str, int] = {}

    class _Refs(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            if isinstance(attribute.value, cst.Name) and attribute.value.value == "self":
                counts[attribute.attr.value] = counts.get(attribute.attr.value, 0) + 1

    node.visit(_Refs())
    return counts


def _self_assigned(method: cst.FunctionDef) -> Set[str]:
    """The attributes `self.<name>` that `method` assigns (or augments, or binds in a `for` or `with`)."""
    found: Set[str] = set()

    def target(node) -> None:
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            found.add(node.attr.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                target(element.value)
        elif isinstance(node, cst.StarredElement):
            target(node.value)

    class _Assigned(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            target(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            target(node.target)

        def visit_For(self, node: cst.For) -> None:
            target(node.target)

        def visit_AsName(self, node: cst.AsName) -> None:
            target(node.name)

    method.visit(_Assigned())
    return found


def _locals(method: cst.FunctionDef) -> Set[str]:
    """The names a method binds: its parameters and every plain name it assigns, anywhere in it."""
    found: Set[str] = {p.name.value for p in (*method.params.params, *method.params.kwonly_params,
                                              *method.params.posonly_params)}
    for star in (method.params.star_arg, method.params.star_kwarg):
        if isinstance(star, cst.Param):
            found.add(star.name.value)

    class _Bound(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            pass

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            found.update(_plain_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            found.update(_plain_names(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            found.update(_plain_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            found.update(_plain_names(node.target))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            found.update(_plain_names(node.target))

        def visit_AsName(self, node: cst.AsName) -> None:
            found.update(_plain_names(node.name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            found.update(_plain_names(node.target))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if node is not method:
                found.add(node.name.value)

        def visit_Import(self, node: cst.Import) -> None:
            found.update(code(a.asname.name if a.asname else a.name).split(".")[0] for a in node.names)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if not isinstance(node.names, cst.ImportStar):
                found.update(code(a.asname.name if a.asname else a.name) for a in node.names)

    method.visit(_Bound())
    return found


def _plain_names(node) -> Set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        return {n for e in node.elements for n in _plain_names(e.value)}
    if isinstance(node, cst.StarredElement):
        return _plain_names(node.value)
    return set()


def _module_names(module: cst.Module) -> Set[str]:
    """The names the module binds at its top level (imports, defs, classes, assignments)."""
    names: Set[str] = set()
    for node in module.body:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            names.add(node.name.value)
            continue
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        names.update(_plain_names(t.target))
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    names.update(_plain_names(small.target))
                elif isinstance(small, cst.Import):
                    names.update(code(a.asname.name if a.asname else a.name).split(".")[0] for a in small.names)
                elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    names.update(code(a.asname.name if a.asname else a.name) for a in small.names)
    return names
