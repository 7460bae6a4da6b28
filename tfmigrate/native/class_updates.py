"""`tf.layers.batch_normalization` in a graph class (issue 21), with native.batch_norm's proof.

    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)       (goes)
    with tf.control_dependencies(update_ops):                     (goes; the training op it held
        self.train = opt.minimize(self.loss)                       runs the updates)

The layer stays TF1's, tracked in `build_graph` as in a model function: it updates its moving
statistics in each call in training mode. That is what TF1 did when every run computing the class
in training mode is its training step made under the dependency, and no other run is
(`check_run`). UPDATE_OPS held the layers of every object made before; so a class with batch norm
may be made once (a second object's training op would have run the first's updates too).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

import tfmigrate.native.batch_norm as batch_norm
from tfmigrate.fixers import layers as layer_specs
from tfmigrate.native.class_facts import GraphClass, attrs_of, self_attr, subtree
from tfmigrate.native.class_joint_runs import objects_of
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import bind, calls_in, code

_NORM = "layers.batch_normalization"


def unwrapped(script, cls: GraphClass, statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """`__init__`'s statements without the UPDATE_OPS collection and the `control_dependencies`
    around its training ops (whose ids go to `cls.updating`)."""
    out: List[cst.BaseStatement] = []
    collections: Dict[str, int] = {}
    methods = {m.name.value for m in cls.node.body.body if isinstance(m, cst.FunctionDef)
               and m.name.value in cls.graph_methods and _norms(script, m)}
    for statement in statements:
        if _collection_read(script, statement):
            collections[statement.body[0].targets[0].target.value] = 0
            if _later_norms(script, statements[statements.index(statement) + 1:], methods):
                raise Blocked(script.line_of(statement), batch_norm.MADE_AFTER)
            continue
        if isinstance(statement, cst.With) and batch_norm.updates_with(script, statement, collections):
            value = statement.items[0].item.args[0].value
            if isinstance(value, cst.Name):
                collections[value.value] += 1
            elif _later_norms(script, statements[statements.index(statement) + 1:], methods):
                raise Blocked(script.line_of(statement), batch_norm.MADE_AFTER)
            for inner in statement.body.body:
                small = inner.body[0] if isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1 else None
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and self_attr(small.targets[0].target) and isinstance(small.value, cst.Call)
                        and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "minimize"):
                    raise Blocked(script.line_of(inner), "`tf.control_dependencies(update_ops)` around something "
                                                         "other than `self.<op> = optimizer.minimize(self.<loss>)`")
                cls.updating.add(id(inner))
                out.append(inner)
            continue
        out.append(statement)
    for name, uses in collections.items():
        if uses != 1 or any(isinstance(n, cst.Name) and n.value == name for s in out for n in subtree(s)):
            raise Blocked(script.line_of(cls.init), f"`{name}`, the UPDATE_OPS collection, used other than by one "
                                                    "`with tf.control_dependencies(...)` around a training op")
    return out


def _collection_read(script, statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
            and isinstance(statement.body[0].targets[0].target, cst.Name)
            and batch_norm.is_update_collection(script, statement.body[0].value))


def _norms(script, node) -> List[cst.Call]:
    return [c for c in calls_in(node) if script.tf_call(c) == _NORM]


def _later_norms(script, statements, methods: Set[str]) -> bool:
    """Whether these statements make batch norm, themselves or by a graph method in `methods`."""
    return any(_norms(script, s) or attrs_of(s)[0] & methods for s in statements)


def check_class(script, cls: GraphClass, graph_nodes) -> None:
    """The class's batch-norm calls, each with a `training=` this route can read per run (a
    literal, or a placeholder), and the class made once when it has any."""
    for node in graph_nodes:
        for call in _norms(script, node):
            at = script.line_of(call)
            try:
                bound = bind(call, ("inputs",) + layer_specs.SPECS["batch_normalization"].params)
            except ValueError:
                raise Blocked(at, "`tf.layers.batch_normalization(*args)`")
            other = sorted(set(bound) - set(batch_norm.ARGUMENTS) - {"inputs", "training"})
            if other:
                raise Blocked(at, f"`tf.layers.batch_normalization({other[0]}=...)`")
            training = bound.get("training")
            if training is not None and not (isinstance(training, cst.Name) and training.value in ("True", "False")
                                             or _placeholder_of(script, cls, training) is not None):
                raise Blocked(at, f"`tf.layers.batch_normalization(training={code(training)})`: a training flag "
                                  "other than a literal or a placeholder")
            cls.batch_norms.append(call)
    if cls.batch_norms:
        cls.objects = objects_of(script, cls)


def _placeholder_of(script, cls: GraphClass, node) -> Optional[str]:
    """The placeholder `node` names (`tf_is_train`, `self.training`): its attr, or None."""
    if isinstance(node, cst.Name) and node.value in script.module_placeholders:
        return node.value
    attr = self_attr(node)
    return attr if attr is not None and attr in {p.attr for p in cls.placeholders if p.own} else None


def check_run(script, cls: GraphClass, train, values: Dict[str, cst.BaseExpression], at: int, instance: str) -> None:
    """Refuse a run in which Keras would update the moving statistics where TF1 did not, or the
    reverse: one computing the class in training mode must be its training step made under
    `control_dependencies(update_ops)` (`values`: what the run feeds each placeholder). Of a class
    made more than once, a run's training ops are those of all its objects (native.class_joint_runs):
    TF1's collection held the layers of the objects made before, which their training ran too."""
    if train is not None and len(cls.objects) > 1 and not set(cls.objects) <= script.joint_trains | {instance}:
        raise Blocked(at, f"a run of the training op of `{instance}` without those of the other objects of "
                          f"`{cls.node.name.value}` (TF1's UPDATE_OPS, read by each object, held the batch-norm "
                          "layers of every object made before it; one run of all the training ops updates them all)")
    training = []
    for call in cls.batch_norms:
        flag = bind(call, ("inputs",) + layer_specs.SPECS["batch_normalization"].params).get("training")
        if flag is None:
            continue
        attr = _placeholder_of(script, cls, flag)
        given = values.get(attr) if attr is not None else flag
        if given is None:
            default = next((p.default for p in cls.placeholders if p.attr == attr), None)
            given = cst.parse_expression(default) if default else None
        if given is None or code(given) != "False":
            training.append(call)
    if not training:
        return
    if train is None:
        raise Blocked(at, "a run that computes `tf.layers.batch_normalization` in training mode without its update "
                          "ops (Keras would update the moving statistics in it; TF1 did not)")
    if id(train.node) not in cls.updating:
        raise Blocked(at, "a training op that does not run the UPDATE_OPS of its `tf.layers.batch_normalization` "
                          "(`with tf.control_dependencies(update_ops):`): TF1 never updated the moving statistics, "
                          "Keras would")
