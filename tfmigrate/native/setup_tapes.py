"""`tf.gradients` of tensors a test class's `setUp` built (native.test_files).

`setUp` keeps tensors on `self` and computes from them; a test takes `tf.gradients(ys, [self.x])`.
Eagerly only a tape records how `ys` came from `x`: `setUp` runs inside
`with tf.GradientTape(persistent=True) as self.tape:` (a new tape for each test, as `setUp` runs
before each), each source watched just after it is made; a test that computes `ys` from what
`setUp` kept records that on the same tape (`with self.tape:` re-enters it) and then asks
`self.tape.gradient(ys, xs)`, which sums `ys` and gives None where nothing connects, as
`tf.gradients` does. Anything else stops (the file keeps the compat route).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.syntax import (assignments_in, bind, calls_in, code, fresh_name, names_assigned, names_read,
                                     self_attribute)

SETUP = "setUp"
# Calls on `self` a test may make between `setUp` and the gradient (they change nothing on `self`).
SELF_CALLS = ("evaluate", "test_session", "cached_session", "session", "subTest")


@dataclass(frozen=True)
class SetupTape:
    """The tape `setUp` records on (`self.<attribute>`) and the `self` tensors it watches."""
    attribute: str
    sources: FrozenSet[str]
    inherited: bool = False  # the tape is the base's: `setUp` re-enters it after `super().setUp()`
    # sources `setUp` sets to a Python number (`self.lambda_ = 0.65`): a tape cannot watch one, and
    # TF1's gradient with respect to it (a new constant) is None, as the tape's of a tensor of it
    numbers: FrozenSet[str] = frozenset()


def module_tapes(classes: Dict[str, cst.ClassDef], names) -> Dict[str, SetupTape]:
    """Each test class's tape (`classes`: the module's test classes by name), where a subclass's
    `setUp` starts with `super().setUp()` and takes gradients with respect to tensors its base's
    `setUp` made (trfl's shape: the base makes the inputs, each subclass the op on them). The base
    then records on the tape, watching those too, and the subclass's `setUp` goes on recording on
    it (`with self.tape:`): one tape name for the family."""
    tapes: Dict[str, SetupTape] = {}
    family: Dict[str, Set[str]] = {}  # base -> the sources its subclasses need from it
    for name, node in classes.items():
        sources = _gradient_sources(node, names)
        setup = _setup(node)
        if not sources or setup is None:
            continue
        base = _only_base(node, classes)
        own = self_assigned(setup)
        if base is not None and sources - own and _starts_with_super(setup) and \
                sources - own <= self_assigned(_setup(classes[base]) or cst.Pass()):
            family.setdefault(base, set()).update(sources - own)
            tapes[name] = SetupTape("", frozenset(sources), inherited=True)
        else:
            tapes[name] = SetupTape("", frozenset(sources))
    for base, sources in family.items():
        before = tapes.get(base)
        tapes[base] = SetupTape("", frozenset(sources | (before.sources if before else set())))
    taken = {a.attr.value for node in classes.values() for a in m.findall(node, m.Attribute(value=m.Name("self")))}
    attribute = fresh_name(taken, "tape")
    numbers = frozenset(_numbers(classes.values()))
    return {name: SetupTape(attribute, tape.sources, tape.inherited, numbers & tape.sources)
            for name, tape in tapes.items()}


def _numbers(classes) -> Set[str]:
    """`x` of each `self.x = <number>` in a `setUp` of `classes`."""
    found = set()
    for node in classes:
        setup = _setup(node)
        for assign in assignments_in(setup) if setup is not None else ():
            value = assign.value.expression if isinstance(assign.value, cst.UnaryOperation) else assign.value
            if isinstance(value, (cst.Integer, cst.Float)) and len(assign.targets) == 1 \
                    and self_attribute(assign.targets[0].target):
                found.add(assign.targets[0].target.attr.value)
    return found


def _gradient_sources(node: cst.ClassDef, names) -> Set[str]:
    sources: Set[str] = set()
    for method in node.body.body:
        if isinstance(method, cst.FunctionDef):
            for call in calls_in(method):
                if names.api(call.func) == "gradients":
                    sources.update(self_sources(call, method) or ())
    return sources


def _setup(node: cst.ClassDef) -> Optional[cst.FunctionDef]:
    return next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == SETUP), None)


def _only_base(node: cst.ClassDef, classes: Dict[str, cst.ClassDef]) -> Optional[str]:
    """The test class of the module `node` derives from, when it is one (other bases: mixins
    such as `parameterized.TestCase` do not set up tensors)."""
    found = [b.value.value for b in node.bases if isinstance(b.value, cst.Name) and b.value.value in classes]
    return found[0] if len(found) == 1 else None


def _starts_with_super(setup: cst.FunctionDef) -> bool:
    """`super(...).setUp()` is the first statement (after a docstring)."""
    for statement in setup.body.body:
        if m.matches(statement, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])):
            continue
        return _is_super_setup(statement)
    return False


def _is_super_setup(statement: cst.BaseStatement) -> bool:
    return m.matches(statement, m.SimpleStatementLine(body=[m.Expr(value=m.Call(
        func=m.Attribute(value=m.Call(func=m.Name("super")), attr=m.Name(SETUP)), args=[]))]))


def self_sources(gradient: cst.Call, function: cst.FunctionDef) -> Optional[List[str]]:
    """`x`, `y` of `tf.gradients(ys, [self.x, self.y])` (or of `self.x` alone, or of a name the
    method binds once to such a list and does not change), else None."""
    try:
        xs = bind(gradient, ("ys", "xs")).get("xs")
    except ValueError:
        return None
    if isinstance(xs, cst.Name):
        xs = _listed(xs.value, function)
        if xs is None:
            return None
    elements = [e.value for e in xs.elements] if isinstance(xs, (cst.List, cst.Tuple)) else [xs]
    if not elements or not all(self_attribute(e) for e in elements):
        return None
    return [e.attr.value for e in elements]


def _listed(name: str, function: cst.FunctionDef) -> Optional[cst.List]:
    """The list `name = [...]` binds, when that is its only assignment in the method and
    nothing reads an attribute of it (`name.append`)."""
    bound = [a for a in assignments_in(function) if any(
        isinstance(t.target, cst.Name) and t.target.value == name for t in a.targets)]
    if len(bound) != 1 or len(bound[0].targets) != 1 or not isinstance(bound[0].value, cst.List):
        return None
    if name in names_assigned(function.body.with_changes(body=[
            s for s in function.body.body if not any(a is bound[0] for a in assignments_in(s))])):
        return None
    if m.findall(function, m.Attribute(value=m.Name(name))):
        return None
    return bound[0].value


def self_assigned(node: cst.CSTNode) -> Set[str]:
    """`x` of each `self.x = ...` (or `self.x += ...`, `for self.x in`, `with ... as self.x`) under `node`."""
    found: Set[str] = set()
    for target in [*m.findall(node, m.AssignTarget()), *m.findall(node, m.AugAssign()),
                   *m.findall(node, m.For()), *m.findall(node, m.AsName())]:
        inner = target.target if not isinstance(target, cst.AsName) else target.name
        for each in m.findall(inner, m.Attribute(value=m.Name("self"))) if not self_attribute(inner) else [inner]:
            found.add(each.attr.value)
    return found


def taped_setup(setup: cst.FunctionDef, tape: SetupTape, tf: str, stop) -> cst.FunctionDef:
    """`setUp` with its statements from the first source made on inside the tape, each source
    watched just after its statement."""
    body = list(setup.body.body)
    made = {}
    for index, statement in enumerate(body):
        assigned = self_assigned(statement) & tape.sources
        if assigned and not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                             and isinstance(statement.body[0], cst.Assign)):
            stop(statement, f"`tf.gradients` with respect to `self.{sorted(assigned)[0]}`, made in `setUp` "
                            "other than by a plain assignment")
        for name in assigned:
            if name in made:
                stop(statement, f"`tf.gradients` with respect to `self.{name}`, assigned twice in `setUp`")
            made[name] = index
    missing = sorted(tape.sources - set(made))
    if missing and not tape.inherited:  # (an inherited tape's base made the others: module_tapes)
        stop(setup, f"`tf.gradients` with respect to `self.{missing[0]}`, which `setUp` does not make")
    if tape.inherited:  # (the base's tape, made by `super().setUp()`: all that follows it recorded)
        start = next(i for i, s in enumerate(body) if _is_super_setup(s)) + 1
        if start == len(body):
            return setup
    else:
        start = min(made.values())
    inner: List[cst.BaseStatement] = []
    for index, statement in enumerate(body[start:], start):
        inner.append(statement if index != start else statement.with_changes(leading_lines=[]))
        inner.extend(cst.parse_statement(f"self.{tape.attribute}.watch(self.{name})\n")
                     for name in sorted(n for n, at in made.items() if at == index and n not in tape.numbers))
    header = cst.parse_statement(f"with self.{tape.attribute}:\n    pass\n" if tape.inherited else
                                 f"with {tf}.GradientTape(persistent=True) as self.{tape.attribute}:\n    pass\n")
    block = header.with_changes(body=header.body.with_changes(body=inner, indent=None),
                                leading_lines=body[start].leading_lines)
    return setup.with_changes(body=setup.body.with_changes(body=[*body[:start], block]))


def check_test(function: cst.FunctionDef, gradients: List[cst.Call], stop) -> None:
    """What the test does between `setUp` and its gradients changes nothing `setUp` kept: it
    assigns no attribute of `self` its gradients read, and calls on `self` only assertions and
    the test session (another method could make the tensors anew, off the tape)."""
    assigned = self_assigned(function)
    for gradient in gradients:
        read = {a.attr.value for a in m.findall(gradient, m.Attribute(value=m.Name("self")))}
        if read & assigned:
            stop(gradient, f"`tf.gradients` of `self.{sorted(read & assigned)[0]}`, which the test makes anew "
                           "after `setUp` (off its tape)")
    for call in calls_in(function):
        func = call.func
        if self_attribute(func) and not (func.attr.value.startswith("assert") or func.attr.value in SELF_CALLS):
            stop(call, f"`{code(func)}(...)` in a test taking `tf.gradients` of what `setUp` made "
                       "(it may make those tensors anew, off the tape)")


def recorded(ys: cst.BaseExpression) -> bool:
    """Whether `ys` computes anything (else it only names tensors already on the tape)."""
    if isinstance(ys, (cst.List, cst.Tuple)):
        return any(recorded(e.value) for e in ys.elements)
    return not isinstance(ys, (cst.Name, cst.Attribute))


def ys_reads_only_self(ys: cst.BaseExpression, tf: str) -> bool:
    """`ys` computed only from what `setUp` kept (and TensorFlow): nothing of the test's own."""
    return names_read(ys) <= {"self", tf}


def tape_gradient(attribute: str, gradient: cst.Call, ys_name: Optional[str], numbers=frozenset(),
                  tf: str = "tf") -> cst.BaseExpression:
    """`tf.gradients(ys, xs)` as `self.<tape>.gradient(...)`, in the same list structure (a source
    that is a Python number, `numbers`, given as the tensor TF1 made of it)."""
    bound = bind(gradient, ("ys", "xs"))
    ys = ys_name or code(bound["ys"])
    xs = bound["xs"]

    def source(node) -> str:
        if self_attribute(node) and node.attr.value in numbers:
            return f"{tf}.convert_to_tensor({code(node)})"
        return code(node)
    if isinstance(xs, (cst.List, cst.Tuple)):
        return cst.parse_expression(f"self.{attribute}.gradient({ys}, [{', '.join(source(e.value) for e in xs.elements)}])")
    if isinstance(xs, cst.Name):  # (a name bound to a list of sources: a list of gradients)
        return cst.parse_expression(f"self.{attribute}.gradient({ys}, {xs.value})")
    return cst.parse_expression(f"[self.{attribute}.gradient({ys}, {source(xs)})]")


def recording(attribute: str, ys_name: str, gradient: cst.Call, leading) -> cst.With:
    """`with self.<tape>:\\n    ys = <ys>`: the test's part of `ys` recorded on the tape."""
    ys = code(bind(gradient, ("ys", "xs"))["ys"])
    return cst.parse_statement(f"with self.{attribute}:\n    {ys_name} = {ys}\n").with_changes(leading_lines=leading)
