"""What the class route knows about a graph class: its placeholders, training ops and per-run
methods (native.classes fills them, native.class_writer writes them), and the small syntax
questions both ask (is this `self.<attr>`, which attributes does this read or write).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.native.syntax import calls_in, fresh_name


@dataclass
class Placeholder:
    attr: str                      # `self.<attr>`, or the module-level name
    param: str                     # the parameter of build_graph and the run methods
    dtype: Optional[str]           # cast to it (None: placeholder_with_default, passed as it is)
    default: Optional[str] = None  # placeholder_with_default's value
    own: bool = True               # made in `__init__` (else a module-level placeholder)
    optional: bool = False         # some run leaves it unfed: None, and what it feeds is skipped
    fed_tensor: Optional[str] = None  # a tensor of the graph fed by a run: the attribute holding what it was fed
    iterator: Optional[str] = None  # `x, y = iterator.get_next()`: the attribute of the Python iterator runs draw from
    elements: bool = False  # a tuple of tensors fed element by element (`feed[net.state[i]] = s`): {index: value}

    @property
    def default_code(self) -> Optional[str]:
        return "None" if self.optional else self.default


@dataclass
class Train:
    attr: str        # `self.<attr> = <optimizer>.minimize(self.<loss>)`
    optimizer: str   # the receiver of `minimize`, made once in `__init__`
    loss: str
    node: cst.CSTNode
    global_step: Optional[str] = None  # `self.<attr>`, a state variable `apply_gradients` counts in
    negated: bool = False  # `minimize(-self.<loss>)` (maximising it)
    # `var_list=tf.get_collection(TRAINABLE_VARIABLES, scope="disc")`: the class's variables whose
    # TF1 names start with it (a GAN's two optimizers, native.collection_lists)
    var_scope: Optional[str] = None
    # gradients clipped by their global norm between minimize's halves (native.class_clips): the norm as
    # `__init__` reads it, and `self.<norm_attr>`, which the step sets where the program reads it
    clip_norm: Optional[cst.BaseExpression] = None
    norm_attr: Optional[str] = None


@dataclass
class RunMethod:
    name: str
    fetches: cst.BaseExpression   # the fetches with the instance as `self`
    train: Optional[Train]


@dataclass
class GraphClass:
    node: cst.ClassDef
    init: cst.FunctionDef
    python: List[cst.BaseStatement] = field(default_factory=list)   # stay in `__init__`
    graph: List[cst.BaseStatement] = field(default_factory=list)    # run by build_graph
    placeholders: List[Placeholder] = field(default_factory=list)
    trains: Dict[str, Train] = field(default_factory=dict)
    graph_attrs: Set[str] = field(default_factory=set)
    state: Set[str] = field(default_factory=set)  # `self.<a> = tf.Variable(..., trainable=False)`: made once
    graph_methods: Set[str] = field(default_factory=set)
    members: Set[str] = field(default_factory=set)
    build: str = "build_graph"
    captured: Dict[str, str] = field(default_factory=dict)  # `__init__`'s names the graph reads -> attribute
    methods: Dict[str, RunMethod] = field(default_factory=dict)    # key of a run -> its method
    session_methods: Dict[str, Tuple[int, str]] = field(default_factory=dict)  # method -> its Session parameter
    variables: Dict[int, str] = field(default_factory=dict)  # id(tf.Variable call) -> its get_variable
    variable_counts: Dict[str, int] = field(default_factory=dict)
    loop_variables: bool = False  # `tf.Variable`s made in a loop, named where made (`tf1_unique_name`)
    held_session: Optional[object] = None  # the Session it keeps (native.class_sessions.HeldSession)
    feed_methods: Set[str] = field(default_factory=set)  # methods returning a feed dict (native.class_feeds)
    order: List[cst.BaseStatement] = field(default_factory=list)  # `__init__`'s statements, scopes of inputs undone
    python_read: Set[str] = field(default_factory=set)  # Python attributes the graph reads (fixed after __init__)
    body: List[cst.BaseStatement] = field(default_factory=list)  # `__init__`'s, then those of `inlined`
    inlined: List[str] = field(default_factory=list)  # methods called right after construction (`model.build()`)
    runners: Set[str] = field(default_factory=set)  # methods that open their own Session, run once
    iterators: Dict[str, str] = field(default_factory=dict)  # local `Iterator.from_structure` -> its attribute
    initializers: Dict[str, str] = field(default_factory=dict)  # `self.<a> = it.make_initializer(ds)` -> it's attribute
    summaries: Set[str] = field(default_factory=set)  # `self.<s> = tf.summary.merge_all()`: a dict of values by tag
    frozen: Dict[str, str] = field(default_factory=dict)  # Python attribute the graph reads, changed later -> its copy
    method_inputs: Dict[str, str] = field(default_factory=dict)  # module placeholder a graph method reads -> its copy
    updating: Set[int] = field(default_factory=set)  # id of `minimize` statements under control_dependencies(UPDATE_OPS)
    batch_norms: List[cst.Call] = field(default_factory=list)  # its `tf.layers.batch_normalization` calls
    objects: Dict[str, int] = field(default_factory=dict)  # (a class with batch norm) its objects, by the program's name
    # `self.saver = tf.train.Saver()` at the end of `__init__` (native.class_savers), and the code it becomes
    init_saver: Optional[cst.SimpleStatementLine] = None
    init_saver_code: str = ""

    def fresh(self, preferred: str) -> str:
        return fresh_name(self.members, preferred)


def session_parameter(method: cst.FunctionDef, given: Optional[Dict[str, Tuple[int, str]]] = None
                      ) -> Optional[Tuple[int, str]]:
    """(index after `self`, name) of the method's parameter used only as `<it>.run(...)`, or passed on
    to a method of `given` in the place of its Session: a Session it is given (None: none is)."""
    given = given or {}
    for index, param in enumerate(method.params.params[1:]):
        name = param.name.value
        uses = [n for n in subtree(method.body) if isinstance(n, cst.Name) and n.value == name]
        runs = [c for c in calls_in(method.body) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "run"
                and isinstance(c.func.value, cst.Name) and c.func.value.value == name]
        savers = [c for c in calls_in(method.body) if isinstance(c.func, cst.Attribute)  # `saver.save(sess, path)`
                  and c.func.attr.value in ("save", "restore") and c.args and isinstance(c.args[0].value, cst.Name)
                  and c.args[0].value.value == name]
        passed = [c for c in calls_in(method.body) if isinstance(c.func, cst.Attribute)  # `self.run_epoch(sess, x)`
                  and isinstance(c.func.value, cst.Name) and c.func.value.value == "self"
                  and c.func.attr.value in given and _gives(c, given[c.func.attr.value], name)]
        if param.default is None and (runs or passed) and len(uses) == len(runs) + len(savers) + len(passed):
            return index, name
    return None


def session_parameters(methods: Dict[str, cst.FunctionDef]) -> Dict[str, Tuple[int, str]]:
    """The methods given a Session (`session_parameter`), those that pass theirs on included."""
    found: Dict[str, Tuple[int, str]] = {}
    changed = True
    while changed:
        changed = False
        for name, method in methods.items():
            if name != "__init__" and name not in found:
                session = session_parameter(method, found)
                if session is not None:
                    found[name] = session
                    changed = True
    return found


def _gives(call: cst.Call, session: Tuple[int, str], name: str) -> bool:
    """Whether `call` passes the Name `name` as the Session parameter `session` (and nowhere else)."""
    index, param = session
    passed = [a for position, a in enumerate(call.args) if isinstance(a.value, cst.Name) and a.value.value == name]
    return len(passed) == 1 and not passed[0].star and (
        passed[0].keyword is not None and passed[0].keyword.value == param
        or passed[0].keyword is None and call.args.index(passed[0]) == index)


def self_attr(node) -> Optional[str]:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def attrs_of(node: cst.CSTNode, of: str = "self") -> Tuple[Set[str], Set[str]]:
    """The attributes of `of` that `node` reads and those it assigns (`x.a = ...`, `x.a.append(...)`)."""
    reads: Set[str] = set()
    writes: Set[str] = set()

    class _Visit(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            for value in ([e.value for e in target.target.elements]
                          if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]):
                if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == of:
                    writes.add(value.attr.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:  # self.a += 1
            if isinstance(node.target, cst.Attribute) and isinstance(node.target.value, cst.Name) \
                    and node.target.value.value == of:
                writes.add(node.target.attr.value)

        def visit_Call(self, call: cst.Call) -> None:  # self.a.append(x): a change of `a`
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
                inner = func.value
                if isinstance(inner.value, cst.Name) and inner.value.value == of:
                    writes.add(inner.attr.value)

        def visit_Attribute(self, attr: cst.Attribute) -> None:
            if isinstance(attr.value, cst.Name) and attr.value.value == of:
                reads.add(attr.attr.value)

    node.visit(_Visit())
    return reads, writes


def is_docstring(statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


def ordered(placeholders: List[Placeholder]) -> List[Placeholder]:
    """Parameters without a default first (Python's rule), each group in the order TF1 made them."""
    return [p for p in placeholders if p.default_code is None] + [p for p in placeholders if p.default_code is not None]


def plain(node) -> bool:
    """An object expression without side effects: `net`, `self.net`, `nets[0]`."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return plain(node.value)
    if isinstance(node, cst.Subscript):
        return plain(node.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.SimpleString, cst.Name))
            for e in node.slice)
    return False


def root_name(node) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def subtree(node) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []

    class _All(cst.CSTVisitor):
        def on_visit(self, each) -> bool:
            found.append(each)
            return True

    node.visit(_All())
    return found


def instance_of(fetches) -> cst.BaseExpression:
    for node in subtree(fetches):
        if isinstance(node, cst.Attribute) and plain(node.value):
            return node.value
    raise AssertionError("a run site without its object")
