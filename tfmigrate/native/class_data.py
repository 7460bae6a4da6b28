"""A graph class that reads its batches from a reinitializable `tf.data` iterator (issue 21):

    train, test = make_datasets(batch)                 train, test = make_datasets(batch)   (`__init__`)
    it = tf.data.Iterator.from_structure(...)          (gone)
    x, self.y = it.get_next()                     ->   x, self.y = element         (build_graph's parameter)
    self.train_init = it.make_initializer(train)       self.train_init = train      (`__init__`)
    sess.run(self.train_init)                          self.iterator = iter(self.train_init)
    sess.run([self.opt, self.loss])                    self.train_step(self.iterator.get_next())

TF1's run drew one element for all its fetches; the run method is given one. An eager iterator's
`get_next()` raises the same `tf.errors.OutOfRangeError` at the end of the data, so the program's
`except` stays. The datasets themselves are made once, in `__init__`, as TF1 made them once.
"""
from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from tfmigrate.native.class_facts import GraphClass, Placeholder, plain, self_attr
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import calls_in, code, fresh_name, names_read

FROM_STRUCTURE = "data.Iterator.from_structure"


def unscoped(script, cls: GraphClass, statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """`with tf.name_scope("data"):` around the iterator: its statements (a name scope names ops,
    which eager code does not have), when none of them makes variables (whose names it gives)."""
    out: List[cst.BaseStatement] = []
    for statement in statements:
        if isinstance(statement, cst.With) and len(statement.items) == 1 and statement.items[0].asname is None \
                and script.tf_call(statement.items[0].item) == "name_scope" \
                and any(script.tf_call(c) == FROM_STRUCTURE for c in calls_in(statement)) \
                and not any(script.tf_call(c) in ("Variable", "get_variable") for c in calls_in(statement)) \
                and not any(script.makes_variables(cls, inner) for inner in statement.body.body):
            out.extend(statement.body.body)
        else:
            out.append(statement)
    return out


def datasets_only(script, statement) -> bool:
    """A statement whose only TensorFlow is `tf.data.Dataset` making (Python data in): made once."""
    apis = script.tensor_apis(statement)
    return bool(apis) and all(path.startswith("data.Dataset") for path, _ in apis)


def data_statement(script, cls: GraphClass, statements: List[cst.BaseStatement], index: int,
                   python_locals: Set[str]) -> Optional[str]:
    """What an iterator statement of `__init__` becomes: "gone" (`from_structure`), "input"
    (`get_next()`, replaced in `statements` by the assignment of a parameter), "python"
    (`make_initializer`, replaced by the dataset it starts); None: not one."""
    statement = statements[index]
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return None
    at = script.line_of(statement)
    target, value = small.targets[0].target, small.value
    name = cls.node.name.value
    if script.tf_call(value) == FROM_STRUCTURE:
        if not isinstance(target, cst.Name):
            raise Blocked(at, f"a `tf.data.Iterator.from_structure` of `{name}` kept other than in a local name")
        cls.iterators[target.value] = cls.fresh("iterator")
        return "gone"
    func = value.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in cls.iterators):
        return None
    iterator = cls.iterators[func.value.value]
    if func.attr.value == "get_next" and not value.args:
        taken = set(cls.members) | set().union(*(names_read(s) for s in statements))
        param = fresh_name(taken, "element")
        cls.placeholders.append(Placeholder(param, param, None, own=False, iterator=iterator))
        statements[index] = statement.with_changes(body=[small.with_changes(value=cst.Name(param))])
        return "input"
    if func.attr.value == "make_initializer" and len(value.args) == 1 and value.args[0].keyword is None:
        dataset = value.args[0].value
        attr = self_attr(target)
        python = isinstance(dataset, cst.Name) and dataset.value in python_locals or (
            self_attr(dataset) is not None and self_attr(dataset) not in cls.graph_attrs)
        if attr is None or not python:
            raise Blocked(at, f"`make_initializer` in `{name}` other than `self.<init> = iterator.make_initializer("
                              "<dataset>)` of a dataset made in Python")
        cls.initializers[attr] = iterator
        statements[index] = statement.with_changes(body=[small.with_changes(value=dataset)])
        return "python"
    raise Blocked(at, f"`{code(func)}` of a `tf.data.Iterator.from_structure` in `{name}` (this route rewrites "
                      "`get_next()` and `make_initializer(<dataset>)`)")


def iterators_consumed(script, cls: GraphClass) -> None:
    """An iterator used other than by `get_next()` / `make_initializer` stops the route."""
    for statement in cls.graph + cls.python:
        used = names_read(statement) & set(cls.iterators)
        if used:
            raise Blocked(script.line_of(statement), f"the iterator `{sorted(used)[0]}` of `{cls.node.name.value}` "
                                                     "used other than by `get_next()` / `make_initializer`")


def restart(script, call: cst.Call) -> Optional[str]:
    """`sess.run(<obj>.train_init)` (or of a parameter every caller gives `self.train_init`): the
    statement that starts the class's iterator on that dataset, or None (not an initializer run)."""
    if len(call.args) != 1 or call.args[0].keyword is not None:
        return None
    fetch = call.args[0].value
    for cls in script.classes.values():
        if isinstance(fetch, cst.Attribute) and plain(fetch.value) and fetch.attr.value in cls.initializers:
            instance = code(fetch.value)
            return f"{instance}.{cls.initializers[fetch.attr.value]} = iter({code(fetch)})"
    current = script.current_class
    if not (isinstance(fetch, cst.Name) and current is not None and current.initializers):
        return None
    method = next((m for m in current.node.body.body if isinstance(m, cst.FunctionDef)
                   and m.name.value == script.current_method), None)
    params = [p.name.value for p in method.params.params] if method is not None else []
    if fetch.value not in params[1:]:
        return None
    position = params.index(fetch.value) - 1
    given = set()
    for other in calls_in(script.module):
        if not (isinstance(other.func, cst.Attribute) and other.func.attr.value == script.current_method):
            continue
        arg = next((a.value for a in other.args if a.keyword is not None and a.keyword.value == fetch.value), None)
        positional = [a for a in other.args if a.keyword is None]
        if arg is None and not any(a.star for a in positional) and position < len(positional):
            arg = positional[position].value
        if not (isinstance(arg, cst.Attribute) and arg.attr.value in current.initializers
                and code(arg.value) == code(other.func.value)):
            raise Blocked(script.line_of(call), f"`sess.run({fetch.value})` of a parameter given other than the "
                                                "caller's own `make_initializer` attribute")
        given.add(current.initializers[arg.attr.value])
    if len(given) != 1:
        return None
    return f"self.{given.pop()} = iter({fetch.value})"


def draws(placeholder: Placeholder, instance: str) -> str:
    """What a run passes for the iterator's element: the next one, as TF1's run drew it."""
    return f"{instance}.{placeholder.iterator}.get_next()"
