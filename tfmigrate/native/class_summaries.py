"""TF1 summaries of a graph class, fetched by its runs and written by a FileWriter (issue 21), as
native.script writes them at module level:

    with tf.name_scope("summaries"):                       (in build_graph)
        tf.summary.scalar("loss", self.loss)         ->    self.summary_op = {"scalar:summaries/loss": self.loss}
        self.summary_op = tf.summary.merge_all()
    writer = tf.summary.FileWriter(path, graph)            writer = tf.summary.create_file_writer(path)
    _, s = sess.run([self.opt, self.summary_op])           s = self.train_step(...)   (the values, by tag)
    writer.add_summary(s, global_step=step)                write_summaries(writer, s, step)

The values are the same, written under the same tags (TF1 prefixed its name scopes); the graph
itself is no longer written (eager code has none), which TensorBoard alone showed.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tfmigrate.native.class_facts import GraphClass, self_attr
from tfmigrate.native.script import SUMMARY_OPS, Blocked
from tfmigrate.native.syntax import bind, code

WRITER = "summary.FileWriter"


def merged(script, cls: GraphClass, statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """The statements with each `tf.summary.<kind>("name", tensor)` gone and `self.<s> =
    tf.summary.merge_all()` as the dict of what it merged (under a `tf.name_scope` block holding
    only those, the block gone and its name the tags' prefix)."""
    entries: List[str] = []
    out: List[cst.BaseStatement] = []
    for statement in statements:
        scope, inner = "", [statement]
        if isinstance(statement, cst.With) and len(statement.items) == 1 and statement.items[0].asname is None \
                and script.tf_call(statement.items[0].item) == "name_scope" and statement.body.body \
                and all(_summary(script, s) is not None or _merge_all(script, s) is not None
                        for s in statement.body.body):
            name = statement.items[0].item.args[0].value if statement.items[0].item.args else None
            if not isinstance(name, cst.SimpleString):
                raise Blocked(script.line_of(statement), "summaries under a name scope whose name is not a literal")
            scope, inner = name.evaluated_value + "/", list(statement.body.body)
        for each in inner:
            summary = _summary(script, each)
            if summary is not None:
                kind, name, tensor = summary
                entries.append(f"{kind + ':' + scope + name!r}: {code(tensor)}")
                continue
            attr = _merge_all(script, each)
            if attr is not None:
                if not entries:
                    raise Blocked(script.line_of(each), "`tf.summary.merge_all()` of no summary (TF1 returned None)")
                cls.summaries.add(attr)
                out.append(cst.parse_statement(f"self.{attr} = {{{', '.join(entries)}}}\n"))
                continue
            out.append(each)
    return out


def _summary(script, statement) -> Optional[Tuple[str, str, cst.BaseExpression]]:
    """(kind, name, tensor) of a statement `tf.summary.<kind>("name", tensor)`, or None."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Expr) and script.tf_call(small.value) in SUMMARY_OPS):
        return None
    kind = script.tf_call(small.value)[len("summary."):]
    try:
        bound = bind(small.value, ("name", "tensor", "collections", "family") if kind != "image"
                     else ("name", "tensor", "max_outputs", "collections", "family"))
    except ValueError:
        return None
    if set(bound) - {"name", "tensor"} or not isinstance(bound.get("name"), cst.SimpleString) or "tensor" not in bound:
        return None
    return kind, bound["name"].evaluated_value, bound["tensor"]


def _merge_all(script, statement) -> Optional[str]:
    """`<s>` of `self.<s> = tf.summary.merge_all()`, or None."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and script.tf_call(small.value) == "summary.merge_all" \
            and not small.value.args:
        return self_attr(small.targets[0].target)
    return None


def writer_calls(script, node) -> List[int]:
    """The ids of the nodes of `node` this route rewrites for summaries, recorded: `FileWriter(logdir,
    ...)` (its other arguments dropped: eager code has no graph to write) and `w.add_summary(s, step)`."""
    from tfmigrate.native.class_facts import subtree

    if not any(cls.summaries for cls in script.classes.values()):
        return []
    inside: List[int] = []
    for call in (n for n in subtree(node) if isinstance(n, cst.Call)):
        if script.tf_call(call) == WRITER:
            if not call.args or call.args[0].keyword is not None and call.args[0].keyword.value != "logdir":
                raise Blocked(script.line_of(call), "a `FileWriter` without a log directory")
            script.writers[id(call)] = f"{script.tf}.summary.create_file_writer({code(call.args[0].value)})"
            inside.extend(id(n) for n in subtree(call))
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_summary":
            try:
                bound = bind(call, ("summary", "global_step"))
            except ValueError:
                bound = {}
            if set(bound) != {"summary", "global_step"}:
                raise Blocked(script.line_of(call), "`add_summary` without a step")
            script.writers[id(call)] = (f"write_summaries({code(call.func.value)}, {code(bound['summary'])}, "
                                        f"{code(bound['global_step'])})")
    return inside
