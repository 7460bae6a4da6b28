"""Shape tests of a `tf.test.TestCase` made eager (native.test_files).

A TF1 test that never runs anything builds ops on placeholders of partly unknown shape and checks
what graph construction gives: static shapes (`y.get_shape().as_list()`), or the error a shape
function raises (`assertRaises(ValueError)` around the op). Eagerly there is no placeholder, but
tracing a `tf.function` builds the same ops in a graph from `tf.TensorSpec`s: each run of
placeholders and the statements after it (up to the next placeholders) become a function traced
once with `get_concrete_function`, its placeholders the function's parameters (a part that reads
what the one before made is traced with it). `tf.gradients` there are the traced graph's, as TF1's
were its own graph's. The function is
traced without AutoGraph (`autograph=False`), so its Python runs as TF1's did when it built the
graph, and nothing is run: no value, state or random draw differs. TensorFlow's own assertions
(`assertAllEqual`, ...) become a `py_func` inside a function, checked only if it ran: a statement
that calls one, and builds nothing, is put under `tf.init_scope()`, where it checks at the trace.
"""
from __future__ import annotations

from typing import Callable, List, Sequence, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.syntax import code, fresh_name, names_assigned, names_read, tensor_spec

# (name, its statement, its bound arguments: a list of them, one a key, for a dict of placeholders)
Placeholder = Tuple[str, cst.SimpleStatementLine, object]


def traced_shapes(statements: Sequence[cst.BaseStatement], placeholders: List[Placeholder], tf: str,
                  stop: Callable[[cst.CSTNode, str], None], taken: Set[str],
                  helpers: Tuple[Set[str], Set[str]] = (set(), set())) -> List[cst.BaseStatement]:
    """The method's body with each run of placeholders and what follows it traced (`stop` refuses).
    `helpers`: (the methods the test file defines, those of them a trace may call: they check
    with nothing TensorFlow defers, see test_files.traced_helpers)."""
    index = {id(s): i for i, s in enumerate(statements)}
    at = {index[id(statement)]: (name, statement, bound) for name, statement, bound in placeholders}
    groups: List[List[int]] = []
    for i in sorted(at):
        if groups and groups[-1][-1] == i - 1:
            groups[-1].append(i)
        else:
            groups.append([i])
    ends = [group[0] for group in groups[1:]] + [len(statements)]
    prefix = list(statements[:groups[0][0]])
    segments = _joined([(group, list(statements[group[-1] + 1:end])) for group, end in zip(groups, ends)], at)
    outside = set().union(*(names_assigned(s) for s in prefix)) if prefix else set()
    local = [({at[i][0] for i in group} | set().union(set(), *(names_assigned(s) for s in body)))
             for group, body in segments]
    for k, (group, body) in enumerate(segments):
        params = [at[i][0] for i in group]
        if len(set(params)) != len(params):
            stop(at[group[0]][1], f"the name `{params[0]}` given to two placeholders made together")
        for statement in body:
            _check_plain(statement, stop)
        read = set().union(set(), *(names_read(s) for s in body))
        others = set().union(set(), *(names for j, names in enumerate(local) if j != k))
        crossed = sorted((read & others) - local[k])
        if crossed:
            stop(body[0] if body else at[group[0]][1],
                 f"`{crossed[0]}`, made in one traced part of a shape test and read in another")
        inner = sorted(_spec_reads(group, at) & others - set(params))
        if inner:  # (the specs are made outside the traced functions)
            stop(at[group[0]][1], f"a placeholder's shape reading `{inner[0]}`, made in a traced part of a shape test")
        shadowed = sorted(local[k] & outside)
        if shadowed:
            stop(at[group[0]][1], f"`{shadowed[0]}`, assigned before the placeholders and again after them")
    body_out: List[cst.BaseStatement] = prefix
    for group, body in segments:
        body_out.extend(_traced(group, body, at, tf, taken, stop, helpers))
    return body_out


def _joined(segments, at) -> list:
    """A part that reads what a part before it made is traced with it (and those between): one
    function, the placeholders of all its parameters (`samples = a.sample(n1)`, ..., `b = Normal(...)`, `b.sample(n2)`).
    Making a placeholder earlier changes only op names; not when its shape reads the earlier part."""
    out: list = []
    for group, body in segments:
        own = set().union({at[i][0] for i in group}, *(names_assigned(s) for s in body))
        read = set().union(set(), *(names_read(s) for s in body)) - own
        made = [set().union({at[i][0] for i in g}, *(names_assigned(s) for s in b)) for g, b in out]
        first = next((j for j, names in enumerate(made) if read & names), None)
        if first is not None and not _spec_reads(group, at) & set().union(*made[first:]):
            joined = [i for g, _ in out[first:] for i in g] + group, [s for _, b in out[first:] for s in b] + body
            out[first:] = [joined]
        else:
            out.append((group, body))
    return out


def _spec_reads(group: List[int], at) -> Set[str]:
    """What the placeholders' own calls read (their specs are made outside the traced function)."""
    return set().union(set(), *(names_read(at[i][1].body[0].value) for i in group))


def _check_plain(statement: cst.BaseStatement, stop) -> None:
    """What a nested function would change: returns, yields, scope declarations, `:=`."""
    for kind, what in ((m.Return(), "`return`"), (m.Yield(), "`yield`"), (m.Global(), "`global`"),
                       (m.Nonlocal(), "`nonlocal`"), (m.NamedExpr(), "`:=`")):
        found = m.findall(statement, kind)
        if found:
            stop(found[0], f"{what} in a shape test (its statements are traced in a function)")


def _traced(group: List[int], body: List[cst.BaseStatement], at, tf: str, taken: Set[str],
            stop, helpers) -> List[cst.BaseStatement]:
    """`def shapes(<placeholders>): <body>` and its trace from the placeholders' `tf.TensorSpec`s."""
    first = at[group[0]][1]
    name = fresh_name(taken, "shapes")
    params = ", ".join(at[i][0] for i in group)
    comments = [line for i in group[1:] for line in at[i][1].leading_lines]
    inner = _checked_now(body, tf, stop, helpers) or [cst.SimpleStatementLine([cst.Pass()])]
    inner[0] = inner[0].with_changes(leading_lines=[*comments, *inner[0].leading_lines])
    header = cst.parse_statement(f"def {name}({params}):\n    pass\n")
    function = header.with_changes(body=header.body.with_changes(body=inner), leading_lines=first.leading_lines)
    specs = ", ".join(_spec_of(at[i][1], at[i][2], tf) for i in group)
    trace = cst.parse_statement(f"{tf}.function({name}, autograph=False).get_concrete_function({specs})\n")
    if len(group) > 1:  # (a spec a line)
        trace = trace.visit(_SpecLines())
    return [function, trace.with_changes(leading_lines=[cst.EmptyLine(indent=False)])]


class _SpecLines(cst.CSTTransformer):
    """`get_concrete_function(` followed by one argument a line, indented once more."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not (isinstance(updated.func, cst.Attribute) and updated.func.attr.value == "get_concrete_function"):
            return updated
        newline = cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace("    "))
        args = [arg.with_changes(comma=arg.comma.with_changes(whitespace_after=newline))
                if isinstance(arg.comma, cst.Comma) else arg for arg in updated.args]
        return updated.with_changes(args=args, whitespace_before_args=newline)


def _spec_of(statement: cst.SimpleStatementLine, bound, tf: str) -> str:
    """The spec of `x = tf.placeholder(...)`; the list of specs of `x = [tf.placeholder(...) for
    ...]` (the same comprehension, evaluated where the placeholders were made: one spec each);
    the dict of specs of `x = {"k": tf.placeholder(...), ...}` (`bound`: one per key, in order)."""
    value = statement.body[0].value
    if isinstance(value, cst.ListComp):
        return code(value.with_changes(elt=cst.parse_expression(_spec(bound, tf))))
    if isinstance(value, cst.Dict):
        elements = [e.with_changes(value=cst.parse_expression(_spec(b, tf))) for e, b in zip(value.elements, bound)]
        return code(value.with_changes(elements=elements))
    return _spec(bound, tf)


def _spec(bound: dict, tf: str) -> str:
    """`tf.placeholder(dtype, shape, name)` as `tf.TensorSpec(shape, dtype, name)`."""
    return tensor_spec(bound, tf, named=True)


# test_util.TensorFlowTestCase's assertions decorated with `py_func_if_in_function` (TF 2.21).
DEFERRED_ASSERTIONS = {"assertNear", "assertArrayNear", "assertNDArrayNear", "assertAllClose",
                       "assertAllCloseAccordingToType", "assertNotAllClose", "assertAllEqual", "assertNotAllEqual",
                       "assertAllGreater", "assertAllLess", "assertAllGreaterEqual", "assertAllLessEqual",
                       "assertAllInRange", "assertAllInSet", "assertDTypeEqual", "assertDictEqual"}
# What a statement checked at the trace may call: it reads static facts, builds no op.
STATIC_METHODS = {"get_shape", "as_list", "is_fully_defined", "num_elements", "is_compatible_with"}
STATIC_BUILTINS = {"list", "tuple", "len", "int", "str", "sorted"}


def _checked_now(body: List[cst.BaseStatement], tf: str, stop, helpers) -> List[cst.BaseStatement]:
    """The body with each top-level statement calling a deferred assertion under `tf.init_scope()`."""
    defined, allowed = helpers
    out: List[cst.BaseStatement] = []
    for call in (c for s in body for c in m.findall(s, m.Call())):
        on_self = isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) \
            and call.func.value.value == "self"
        helper = on_self and (not call.func.attr.value.startswith("assert") or call.func.attr.value in defined) \
            and call.func.attr.value not in allowed
        if helper or any(isinstance(arg.value, cst.Name) and arg.value.value == "self" for arg in call.args):
            stop(call, f"`{code(call.func)}(...)` given the test in a shape test (an assertion of TensorFlow's "
                       "there would check only when the traced function runs)")
    for statement in body:
        deferred = [c for c in m.findall(statement, m.Call(func=m.Attribute(value=m.Name("self"))))
                    if c.func.attr.value in DEFERRED_ASSERTIONS]
        if not deferred:
            out.append(statement)
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            stop(deferred[0], f"`self.{deferred[0].func.attr.value}` in a block of a shape test (inside the "
                              "traced function it checks only when the function runs)")
        for call in m.findall(statement, m.Call()):
            func = call.func
            static = (isinstance(func, cst.Attribute) and (
                (isinstance(func.value, cst.Name) and func.value.value == "self" and func.attr.value.startswith("assert"))
                or func.attr.value in STATIC_METHODS)) or (isinstance(func, cst.Name) and func.value in STATIC_BUILTINS)
            if not static:
                stop(call, f"`{code(func)}(...)` inside `self.{deferred[0].func.attr.value}` of a shape test (the "
                           "assertion checks at the trace only if it builds nothing)")
        scope = cst.parse_statement(f"with {tf}.init_scope():  # (checks at the trace, not when it runs)\n    pass\n")
        out.append(scope.with_changes(body=scope.body.with_changes(body=[statement.with_changes(leading_lines=[])]),
                                      leading_lines=statement.leading_lines))
    return out


def named_placeholders(statements: Sequence[cst.BaseStatement], is_placeholder: Callable[[cst.Call], bool],
                       taken: Set[str]) -> List[cst.BaseStatement]:
    """Each placeholder given straight as an argument of the call a top-level statement makes
    (`y = f(x=tf.placeholder(...))`) assigned to a fresh name just before that statement, so it
    is traced as a parameter like one the test named itself. Making a placeholder changes
    nothing but the graph's op names, so making it before the call's other arguments is exact;
    one in a loop, a comprehension or a block is left where it is (and refused)."""
    out: List[cst.BaseStatement] = []
    for statement in statements:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        call = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        while isinstance(call, (cst.Attribute, cst.Subscript)):  # (`f(...).loss`, `f(...)[0]`)
            call = call.value
        if not isinstance(call, cst.Call) or is_placeholder(call):
            out.append(statement)
            continue
        made, args = [], []
        for arg in call.args:
            if isinstance(arg.value, cst.Call) and is_placeholder(arg.value) and not arg.star:
                name = fresh_name(taken, arg.keyword.value if arg.keyword is not None else "tensor")
                made.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], arg.value)]))
                arg = arg.with_changes(value=cst.Name(name))
            args.append(arg)
        if made:
            made[0] = made[0].with_changes(leading_lines=statement.leading_lines)
            statement = statement.deep_replace(call, call.with_changes(args=args)).with_changes(leading_lines=[])
        out.extend([*made, statement])
    return out
