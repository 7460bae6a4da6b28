"""TF1 queue input pipelines as `tf.data`, so that `fix --native` can take the program eager (issue 22).

A pre-pass of the native rewrite, on the source: where a queue pipeline yields the same elements in
the same order as a `tf.data` dataset, it is rewritten into one (still TF1 graph code, read by
`tf.compat.v1.data.make_one_shot_iterator(ds).get_next()`), and the Coordinator and queue runners go.
The native route (native.script / entry_functions) then takes the module eager, or refuses it, and
the module keeps the compat route as before. Measured under TF 2.21 (tests/fixtures/TFM216):

- `string_input_producer(files, num_epochs=n, shuffle=False)` + a reader's `read` yields each file's
  records, file after file, epoch after epoch: `from_tensor_slices(files).repeat(n).flat_map(...)`;
  `TextLineReader(skip_header_lines=k)` skips k lines of *each* file (`TextLineDataset(f).skip(k)`
  inside the `flat_map`); `num_epochs=None` repeats forever; the end is the same OutOfRangeError.
- `tf.train.batch(tensors, n)` (one thread) batches in that order and drops a last smaller batch
  unless `allow_smaller_final_batch=True` (`batch(n, drop_remainder=...)`); `batch([t])` of a
  one-tensor list returns the tensor itself, a dict a dict. The per-record ops between `read` and
  `batch` become the dataset's `map` function.
- `slice_input_producer([xs, ys], shuffle=False)`: the slices in order, `from_tensor_slices((xs, ys))`.
- A `FIFOQueue` filled by a `QueueRunner` of `enqueue_many(constants)` ops: attempts to enqueue are
  served in order, so whatever the number of threads the queue holds the data again and again:
  `from_tensor_slices(...).repeat()` in the queue's dtypes.
- A function that builds the pipeline, and one that runs the Session on its tensors, each called
  once, are written where they are called (`_inline`): the iterator is then made once. A reader
  function given the queue (`read_cifar_files(filename_queue)`), called once, is written into its
  caller first. A pipeline function called more than once (train and test files) returns its
  dataset, and each call site makes its own iterator, as each call made its own queue.
- The per-record ops may hold an `if` on a Python flag, and a `tf.cond` on the record (the `map`
  function is a graph of its own); they may not read a placeholder or variable (TF1's runner
  threads never saw a fed value).

Random order (a shuffling `string_input_producer` of more than one file, `shuffle_batch`, several
reader threads) is only equal in distribution: converted with `--unsafe-fixes` (a comment in the
code says what changes), else a `Blocked` that says why.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tfmigrate.facts import api_table
from tfmigrate.facts.names import ImportTable
from tfmigrate.native.inline import (Refused, Replace, assignment, inline, names_of, nodes_in,
                                      only_statement, original_line, stmt)
from tfmigrate.native.script import Blocked, Script
from tfmigrate.native.syntax import bind, calls_in, code, names_assigned, names_read

READERS = ("TextLineReader", "TFRecordReader", "FixedLengthRecordReader", "WholeFileReader")
# Every queue construct: one left after the conversion keeps the module on the compat route.
QUEUE_APIS = {
    "train.string_input_producer": "`tf.train.string_input_producer`",
    "train.slice_input_producer": "`tf.train.slice_input_producer`",
    "train.input_producer": "`tf.train.input_producer`",
    "train.range_input_producer": "`tf.train.range_input_producer`",
    "train.batch": "`tf.train.batch`",
    "train.shuffle_batch": "`tf.train.shuffle_batch`",
    "train.batch_join": "`tf.train.batch_join`",
    "train.shuffle_batch_join": "`tf.train.shuffle_batch_join`",
    "train.maybe_batch": "`tf.train.maybe_batch`",
    "train.maybe_shuffle_batch": "`tf.train.maybe_shuffle_batch`",
    "train.start_queue_runners": "`tf.train.start_queue_runners`",
    "train.add_queue_runner": "`tf.train.add_queue_runner`",
    "train.QueueRunner": "a `tf.train.QueueRunner`",
    "train.queue_runner.QueueRunner": "a `tf.train.QueueRunner`",
    "train.Coordinator": "a `tf.train.Coordinator`",
    "FIFOQueue": "a `tf.FIFOQueue`",
    "RandomShuffleQueue": "a `tf.RandomShuffleQueue`",
    "PaddingFIFOQueue": "a `tf.PaddingFIFOQueue`",
    "PriorityQueue": "a `tf.PriorityQueue`",
    "queue.FIFOQueue": "a `tf.queue.FIFOQueue`",
    "queue.RandomShuffleQueue": "a `tf.queue.RandomShuffleQueue`",
    **{name: f"a queue reader (`{name}`)" for name in READERS + ("IdentityReader", "LMDBReader", "ReaderBase")},
}
PRODUCER = ("string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name", "cancel_op")
BATCH = ("tensors", "batch_size", "num_threads", "capacity", "enqueue_many", "shapes", "dynamic_pad",
         "allow_smaller_final_batch", "shared_name", "name")
SHUFFLE_BATCH = ("tensors", "batch_size", "capacity", "min_after_dequeue", "num_threads", "seed", "enqueue_many",
                 "shapes", "allow_smaller_final_batch", "shared_name", "name")
QUEUE = ("capacity", "dtypes", "shapes", "names", "shared_name", "name")
SLICES = ("tensor_list", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name")
# Calls that make graph state: not per-record code a dataset's `map` function may run.
STATEFUL_WORDS = ("Variable", "get_variable", "placeholder", "layers.", "Session", "train.", "summary.",
                  "variable_scope", "collection", "assign", "py_func")
UNSAFE_NOTE = "# tfmigrate (unsafe fix, --unsafe-fixes): "


@dataclass
class Converted:
    text: str
    notes: List[str] = field(default_factory=list)  # what an unsafe conversion changed

    def original_line(self, original: str, line: int) -> int:
        """The line of the original source that line `line` of the converted text came from."""
        return original_line(original, self.text, line)


def convert(module: cst.Module, source: str, line_of, unsafe: bool = False) -> Optional[Converted]:
    """The module with its queue pipelines as `tf.data`; None when it has no queue construct;
    `Blocked` when it has one that cannot be converted (exactly, or at all)."""
    names = ImportTable(module, source)
    if not _queue_nodes(module, names):
        return None
    inlined = module
    for name in _reader_functions(module, names):
        inlined = _inline(inlined, name, None)[0]
    if inlined is not module:  # read again, its lines named as the source's
        text = inlined.code
        wrapper = MetadataWrapper(cst.parse_module(text))
        positions = wrapper.resolve(PositionProvider)

        def inlined_line_of(node) -> int:
            position = positions.get(node)
            return Converted(text).original_line(source, position.start.line if position is not None else 1)

        return _Conversion(wrapper.module, ImportTable(wrapper.module, text), inlined_line_of, unsafe).run()
    return _Conversion(module, names, line_of, unsafe).run()


def _reader_functions(module: cst.Module, names: ImportTable) -> List[str]:
    """The module's functions whose reader reads a queue given as a parameter
    (`read_cifar_files(filename_queue)`, called by the function that made the queue): written where
    they are called (once), the pipeline is one body again."""
    found = []
    for function in module.body:
        if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
            continue
        params = {p.name.value for p in function.params.params}
        readers = set()
        for statement in function.body.body:
            assigned = assignment(statement)
            if assigned is None:
                continue
            value = assigned[2]
            if isinstance(value, cst.Call) and names.api(value.func) in READERS and len(assigned[0]) == 1:
                readers.add(assigned[0][0])
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "read" and isinstance(value.func.value, cst.Name) \
                    and value.func.value.value in readers and len(value.args) == 1 \
                    and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value in params:
                found.append(function.name.value)
                break
    return found


def _queue_nodes(node: cst.CSTNode, names: ImportTable) -> List[Tuple[cst.CSTNode, str]]:
    """The queue constructs under `node`, in source order, with their API path."""
    found: List[Tuple[cst.CSTNode, str]] = []

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
            path = names.api(attr)
            if path in QUEUE_APIS:
                found.append((attr, path))
                return False
            return None

        def visit_Name(self, name: cst.Name) -> None:
            path = names.api(name)
            if path in QUEUE_APIS:
                found.append((name, path))

    node.visit(_Find())
    return found


def _batch_statement(statement):
    """`assignment` of `a, b = tf.train.batch(...)`, or ([], None, call) of `return tf.train.batch(...)`."""
    small = only_statement(statement)
    if isinstance(small, cst.Return) and isinstance(small.value, cst.Call):
        return [], None, small.value
    return assignment(statement)


def _literal_bool(node, default: bool) -> Optional[bool]:
    if node is None:
        return default
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _is_none(node) -> bool:
    return node is None or (isinstance(node, cst.Name) and node.value == "None")


@dataclass
class _Pipeline:
    """One `string_input_producer` + reader + `read` (+ `batch`) of one body."""
    producer: cst.BaseStatement
    queue: str
    files: cst.BaseExpression
    reader: Optional[cst.BaseStatement] = None
    reader_path: str = ""
    reader_args: Dict[str, cst.BaseExpression] = field(default_factory=dict)
    read: Optional[cst.BaseStatement] = None
    key: Optional[str] = None
    value: str = ""
    epochs: Optional[cst.BaseExpression] = None
    shuffled: bool = False
    seed: Optional[cst.BaseExpression] = None


class _Conversion:
    def __init__(self, module: cst.Module, names: ImportTable, line_of, unsafe: bool):
        self.module = module
        self.names = names
        self.line_of = line_of
        self.unsafe = unsafe
        aliases = names.tensorflow_aliases()
        if not aliases:
            raise Blocked(1, "a queue pipeline in a module without `import tensorflow as tf`")
        self.tf = aliases[0]
        self.replace: Dict[int, List[cst.BaseStatement]] = {}  # id(statement) -> what stands in its place
        self.notes: List[str] = []
        self.runners: Set[str] = set()  # QueueRunner objects converted (their `create_threads` go)
        self.builders: Set[str] = set()  # module-level functions that build a converted pipeline
        self.taken = names_assigned(module) | names_read(module)

    fresh = Script.fresh  # a name not taken yet (`records`, `records_2`), as the rewrite names its own

    def call(self, node, *paths: str) -> Optional[str]:
        if isinstance(node, cst.Call):
            path = self.names.api(node.func)
            if path is not None and path in paths:
                return path
        return None

    def blocked(self, node, why: str):
        raise Blocked(self.line_of(node), why)

    # -- the whole module ---------------------------------------------------------------------
    def run(self) -> Converted:
        for owner, body, params in self._bodies():
            self.owner = owner
            self._body(body, params)
        coordinators = _Coordinators(self)
        coordinators.check(self.module)
        module = self.module.visit(Replace(self.replace))
        for name in sorted(self.builders):
            module, targets, scope = _inline(module, name, self)
            if scope is not None:
                for consumer in _consumers(module, scope, targets, self.names):
                    module = _inline(module, consumer, self)[0]
            else:
                module = _iterators_at_call_sites(module, name, self)
        module = module.visit(_CoordinatorRemover(coordinators))
        left = _queue_nodes(module, self.names)
        if left:
            node, path = left[0]
            original = next((n for n, p in _queue_nodes(self.module, self.names) if p == path), None)
            line = self.line_of(original) if original is not None else 1
            raise Blocked(line, f"{QUEUE_APIS[path]}, in a queue pipeline of a shape tfmigrate does not convert "
                                "to `tf.data`")
        return Converted(module.code, self.notes)

    def _bodies(self):
        """Each statement list with the names a queue may come in by (a function's parameters)."""
        found = [(self.module, list(self.module.body), set())]

        class _Functions(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                if isinstance(node.body, cst.IndentedBlock):
                    params = {p.name.value for p in node.params.params + node.params.kwonly_params
                              + node.params.posonly_params}
                    found.append((node, list(node.body.body), params))

        self.module.visit(_Functions())
        return found

    # -- one body -------------------------------------------------------------------------------
    def _body(self, body: List[cst.BaseStatement], params: Set[str]) -> None:
        producers: Dict[str, _Pipeline] = {}
        readers: Dict[str, Tuple[cst.BaseStatement, str, Dict[str, cst.BaseExpression]]] = {}
        for index, statement in enumerate(body):
            assigned = assignment(statement)
            if assigned is None:
                continue
            targets, _, value = assigned
            if self.call(value, "train.string_input_producer") and len(targets) == 1:
                producers[targets[0]] = self._producer(statement, targets[0], value)
            elif self.call(value, *READERS) and len(targets) == 1:
                path = self.names.api(value.func)
                readers[targets[0]] = (statement, path, self._reader_args(value, path))
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "read" and isinstance(value.func.value, cst.Name) \
                    and value.func.value.value in readers:
                if len(targets) != 2 or len(value.args) != 1 or not isinstance(value.args[0].value, cst.Name):
                    self.blocked(statement, "a queue reader's `read` other than `key, value = reader.read(queue)`")
                queue = value.args[0].value.value
                if queue not in producers:
                    where = ("a parameter of its function, which could not be written where it is called (called "
                             "more than once, as by several readers of one queue, or its names clash with the "
                             "caller's): a queue pipeline split so") if queue in params \
                        else "not made by `string_input_producer` here: a queue pipeline split across functions"
                    self.blocked(statement, f"a queue reader reading `{queue}`, {where} is not converted to `tf.data`")
                pipeline = producers.pop(queue)
                reader, path, args = readers.pop(value.func.value.value)
                pipeline.reader, pipeline.reader_path, pipeline.reader_args = reader, path, args
                pipeline.read, pipeline.key, pipeline.value = statement, targets[0], targets[1]
                self._records(body, index, pipeline)
            elif self.call(value, "train.slice_input_producer"):
                self._slices(body, index, targets, assigned[1], value)
            elif self.call(value, "FIFOQueue", "queue.FIFOQueue") and len(targets) == 1:
                self._fifo(body, index, targets[0], value)

    def _producer(self, statement, name: str, call: cst.Call) -> _Pipeline:
        try:
            args = bind(call, PRODUCER)
        except ValueError as why:
            self.blocked(statement, f"`string_input_producer` with {why}")
        for key in ("shared_name", "cancel_op"):
            if key in args:
                self.blocked(statement, f"`string_input_producer({key}=...)`")
        shuffle = _literal_bool(args.get("shuffle"), True)
        if shuffle is None:
            self.blocked(statement, "`string_input_producer(shuffle=...)` that is not `True` or `False`")
        files = args["string_tensor"]
        one_file = _one_element(files) or self._one_file_given(files)
        epochs = args.get("num_epochs")
        return _Pipeline(statement, name, files, epochs=None if _is_none(epochs) else epochs,
                         shuffled=shuffle and not one_file, seed=args.get("seed"))

    def _one_file_given(self, files) -> bool:
        """`files` is a parameter of the pipeline's function, which every call in the module gives a
        list of one file (`read_from_tfrecord([path])`): shuffling one file name changes nothing."""
        owner = self.owner
        if not isinstance(files, cst.Name) or not isinstance(owner, cst.FunctionDef):
            return False
        params = [p.name.value for p in owner.params.params]
        if files.value not in params or owner.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
            return False
        calls = [c for c in calls_in(self.module) if isinstance(c.func, cst.Name) and c.func.value == owner.name.value]
        uses = [n for n in names_of(self.module) if n.value == owner.name.value]
        if not calls or len(uses) != len(calls) + 1:  # the `def` and its calls, nothing else
            return False
        for call in calls:
            try:
                given = bind(call, params).get(files.value)
            except ValueError:
                return False
            if not _one_element(given):
                return False
        return True

    def _reader_args(self, call: cst.Call, path: str) -> Dict[str, cst.BaseExpression]:
        params = {"TextLineReader": ("skip_header_lines", "name"), "TFRecordReader": ("name", "options"),
                  "FixedLengthRecordReader": ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes", "name",
                                              "encoding"),
                  "WholeFileReader": ("name",)}[path]
        try:
            args = bind(call, params)
        except ValueError as why:
            self.blocked(call, f"`{path}` with {why}")
        for key in ("options", "hop_bytes", "encoding"):
            if key in args and not _is_none(args[key]):
                self.blocked(call, f"`{path}({key}=...)`")
        args.pop("name", None)
        return args

    # -- reader pipelines ---------------------------------------------------------------------------
    def _records(self, body: List[cst.BaseStatement], read_at: int, pipeline: _Pipeline) -> None:
        """The reader's records as a dataset: read one by one (`get_next()` where `read` was), or
        through the per-record ops into a `tf.train.batch` / `shuffle_batch` (a `map`, a `batch`)."""
        tf = self.tf
        key_used = pipeline.key != "_" and self._read_elsewhere(pipeline.key, [pipeline.read])
        batch_at = self._batch_after(body, read_at, pipeline)
        files = f"{tf}.data.Dataset.from_tensor_slices({code(pipeline.files)})"
        notes: List[str] = []
        if pipeline.shuffled:
            seed = f", seed={code(pipeline.seed)}" if pipeline.seed is not None else ""
            count = str(len(pipeline.files.elements)) if isinstance(pipeline.files, (cst.List, cst.Tuple)) and not any(
                isinstance(e, cst.StarredElement) for e in pipeline.files.elements) \
                else f"{tf}.size({code(pipeline.files)}, out_type={tf}.int64)"
            files += f".shuffle({count}{seed})"
            notes.append("`string_input_producer` shuffled the file names of each epoch in its own random order; "
                         "`shuffle` draws another (each epoch is still a random permutation of the files)")
            self._require_unsafe(pipeline.producer, "`string_input_producer` shuffles its file names by default "
                                                    "(`shuffle=True`)")
        files += f".repeat({code(pipeline.epochs)})" if pipeline.epochs is not None else ".repeat()"
        records = self._reader_dataset(pipeline, key_used)
        producer = stmt(f"{pipeline.queue} = {files}")
        self.replace[id(pipeline.producer)] = [producer.with_changes(leading_lines=pipeline.producer.leading_lines)]
        self.replace[id(pipeline.reader)] = []
        if batch_at is None:
            dataset = self.fresh("records")
            targets = f"{pipeline.key}, {pipeline.value}" if key_used else pipeline.value
            new = [stmt(f"{dataset} = {pipeline.queue}.{records}"),
                   stmt(f"{targets} = {tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()")]
            self.replace[id(pipeline.read)] = self._noted(new, notes, pipeline.read)
            self._built_in_function()
            self._respell_records(body, read_at, {pipeline.value} | ({pipeline.key} if key_used else set()))
            return
        elements = [pipeline.key, pipeline.value] if key_used else [pipeline.value]
        self._batched(body, read_at, batch_at, elements, f"{pipeline.queue}.{records}", [], notes)

    def _slices(self, body, at: int, targets: List[str], target_node, call: cst.Call) -> None:
        """`x, y = tf.train.slice_input_producer([xs, ys], num_epochs=n, shuffle=False)`: the slices
        in order, epoch after epoch (`from_tensor_slices((xs, ys)).repeat(n)`), one per run or
        through the per-slice ops into a `tf.train.batch`."""
        tf, statement = self.tf, body[at]
        try:
            args = bind(call, SLICES)
        except ValueError as why:
            self.blocked(statement, f"`slice_input_producer` with {why}")
        tensors = args.get("tensor_list")
        if not isinstance(tensors, (cst.List, cst.Tuple)) or not isinstance(target_node, (cst.Tuple, cst.List)) \
                or len(tensors.elements) != len(targets) or any(isinstance(e, cst.StarredElement)
                                                                for e in tensors.elements):
            self.blocked(statement, "`slice_input_producer` other than `x, y = slice_input_producer([xs, ys], ...)`")
        if "shared_name" in args:
            self.blocked(statement, "`slice_input_producer(shared_name=...)`")
        shuffle = _literal_bool(args.get("shuffle"), True)
        if shuffle is None:
            self.blocked(statement, "`slice_input_producer(shuffle=...)` that is not `True` or `False`")
        parts = [code(e.value) for e in tensors.elements]
        source = f"{tf}.data.Dataset.from_tensor_slices(({', '.join(parts)},))" if len(parts) == 1 else \
            f"{tf}.data.Dataset.from_tensor_slices(({', '.join(parts)}))"
        notes: List[str] = []
        if shuffle:
            seed = f", seed={code(args['seed'])}" if "seed" in args and not _is_none(args["seed"]) else ""
            source += f".shuffle({tf}.shape({parts[0]}, out_type={tf}.int64)[0]{seed})"
            notes.append("`slice_input_producer` shuffled the slices of each epoch in its own random order; "
                         "`shuffle` draws another (each epoch is still a random permutation of the slices)")
            self._require_unsafe(statement, "`slice_input_producer` shuffles its slices by default (`shuffle=True`)")
        epochs = args.get("num_epochs")
        source += ".repeat()" if _is_none(epochs) else f".repeat({code(epochs)})"
        dataset = self.fresh("slices")
        head = [stmt(f"{dataset} = {source}")]
        batch_at = self._batch_after(body, at, None)
        if batch_at is not None:
            self._batched(body, at, batch_at, targets, dataset, head, notes)
            return
        head[0] = head[0].with_changes(leading_lines=statement.leading_lines)
        new = [*head, stmt(f"{code(target_node)} = {tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()")]
        self.replace[id(statement)] = self._noted(new, notes, statement)
        self._built_in_function()
        self._respell_records(body, at, set(targets))

    def _reader_dataset(self, pipeline: _Pipeline, key_used: bool) -> str:
        tf, path, args = self.tf, pipeline.reader_path, pipeline.reader_args
        if key_used and path != "WholeFileReader":
            self.blocked(pipeline.read, f"the key of `{path}.read` (`{pipeline.key}`), which a dataset does not give")
        if path == "TextLineReader":
            skip = args.get("skip_header_lines")
            tail = "" if skip is None or (isinstance(skip, cst.Integer) and skip.evaluated_value == 0) \
                else f".skip({code(skip)})"
            return (f"flat_map(lambda filename: {tf}.data.TextLineDataset(filename){tail})" if tail
                    else f"flat_map({tf}.data.TextLineDataset)")
        if path == "TFRecordReader":
            return f"flat_map({tf}.data.TFRecordDataset)"
        if path == "FixedLengthRecordReader":
            if "record_bytes" not in args:
                self.blocked(pipeline.reader, "`FixedLengthRecordReader` without `record_bytes`")
            extra = "".join(f", {k}={code(args[k])}" for k in ("header_bytes", "footer_bytes")
                            if k in args and not _is_none(args[k]))
            return (f"flat_map(lambda filename: {tf}.data.FixedLengthRecordDataset(filename, "
                    f"{code(args['record_bytes'])}{extra}))")
        if key_used:  # WholeFileReader: the key is the file name
            return f"map(lambda filename: (filename, {tf}.io.read_file(filename)))"
        return f"map({tf}.io.read_file)"

    def _batch_after(self, body, read_at: int, pipeline: _Pipeline) -> Optional[int]:
        """The index of the `tf.train.batch` / `shuffle_batch` of this read's records, if any."""
        for index in range(read_at + 1, len(body)):
            assigned = _batch_statement(body[index])
            if assigned is not None and self.call(assigned[2], "train.batch", "train.shuffle_batch"):
                return index
        return None

    def _batched(self, body, read_at: int, batch_at: int, elements: List[str], source: str,
                 head: List[cst.BaseStatement], notes: List[str]) -> None:
        """`body[read_at]` gave one record as `elements`; the statements computing from them up to
        the batch at `batch_at` become the `map` function of the records dataset `source` (made by
        `head`, written first)."""
        tf = self.tf
        read = body[read_at]
        statement = body[batch_at]
        targets, target_node, call = _batch_statement(statement)
        path = self.names.api(call.func)
        try:
            args = bind(call, BATCH if path == "train.batch" else SHUFFLE_BATCH)
        except ValueError as why:
            self.blocked(statement, f"`{path}` with {why}")
        for key in ("enqueue_many", "dynamic_pad"):
            if _literal_bool(args.get(key), False) is not False:
                self.blocked(statement, f"`{path}({key}=...)`")
        if "shapes" in args and not _is_none(args["shapes"]):
            self.blocked(statement, f"`{path}(shapes=...)`")
        if "shared_name" in args:
            self.blocked(statement, f"`{path}(shared_name=...)`")
        smaller = _literal_bool(args.get("allow_smaller_final_batch"), False)
        if smaller is None:
            self.blocked(statement, f"`{path}(allow_smaller_final_batch=...)` that is not `True` or `False`")
        threads = args.get("num_threads")
        if threads is not None and not (isinstance(threads, cst.Integer) and threads.evaluated_value == 1):
            notes.append(f"`tf.{path}` ran its per-record ops in {code(threads)} threads, whose records came in no "
                         "fixed order; `map` keeps the files' order")
            self._require_unsafe(statement, f"`tf.{path}(num_threads={code(threads)})` reads the records in no "
                                            "fixed order")
        tensors = args["tensors"]
        # the per-record statements between `read` and the batch: those computing from the record
        tainted = set(elements)
        moved: List[cst.BaseStatement] = []
        for between in body[read_at + 1:batch_at]:
            touched = names_read(between) | names_assigned(between)
            if touched & tainted:
                if not (isinstance(between, cst.SimpleStatementLine) or self._python_if(between, tainted)):
                    self.blocked(between, "a compound statement in the per-record ops of a queue pipeline")
                moved.append(between)
                tainted |= names_assigned(between)
        if not names_read(tensors) & tainted:
            self.blocked(statement, f"`{path}` of tensors that are not computed from the reader's records")
        for between in moved:
            for call_node in calls_in(between):
                what = self.names.api(call_node.func) or ""
                if any(word in what for word in STATEFUL_WORDS):
                    self.blocked(between, f"`{what}` in the per-record ops of a queue pipeline (a dataset's `map` "
                                          "function would make it on each trace)")
        free = set().union(*(names_read(s) for s in moved)) - tainted if moved else set()
        for name in sorted(free):
            made = self._made_by_stateful_call(name, body[:read_at])
            if made is not None:
                self.blocked(read, f"`{name}` (`tf.{made}`) read by the per-record ops of a queue pipeline: TF1's "
                                   "queue runner threads computed the records apart from `sess.run` (a fed value "
                                   "never reached them), and a dataset's `map` function cannot read graph state")
        for name in sorted(tainted):
            if self._read_elsewhere(name, moved + [read, statement]):
                self.blocked(statement, f"`{name}`, a per-record tensor of a queue pipeline also used after its "
                                        f"`{path.split('.')[-1]}`")
        function = self.fresh("parse_record")
        parameters = ", ".join(elements)
        if isinstance(tensors, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in tensors.elements):
                self.blocked(statement, f"`{path}` of a starred list")
            parts = [code(e.value) for e in tensors.elements]
            returned = parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"  # batch([t]) returns t
        elif isinstance(tensors, cst.Dict):
            returned = code(tensors)
        else:
            self.blocked(statement, f"`{path}` of something other than a list, tuple or dict literal")
        inside = [*moved, stmt(f"return {returned}")]
        lines = list(inside[0].leading_lines)
        while lines and lines[0].comment is None:  # (no blank line after the `def` line)
            lines.pop(0)
        inside[0] = inside[0].with_changes(leading_lines=lines)
        definition = cst.FunctionDef(
            name=cst.Name(function),
            params=cst.parse_expression(f"lambda {parameters}: 0").params,
            body=cst.IndentedBlock(body=inside),
            leading_lines=[*([cst.EmptyLine(indent=False)] * (2 if self.owner is self.module else 1)),
                           *([] if head else read.leading_lines)])
        drop = "" if smaller else ", drop_remainder=True"
        batch = f".batch({code(args['batch_size'])}{drop})"
        if path == "train.shuffle_batch":
            seed = f", seed={code(args['seed'])}" if "seed" in args and not _is_none(args["seed"]) else ""
            if "capacity" not in args:
                self.blocked(statement, "`shuffle_batch` without `capacity`")
            batch = f".shuffle({code(args['capacity'])}{seed})" + batch
            notes.append("`shuffle_batch` drew each batch from the records in its queue in its own random order; "
                         "`shuffle` draws another from a buffer of `capacity` records (the same records, epoch "
                         "for epoch, another order)")
            self._require_unsafe(statement, "`shuffle_batch` draws its batches in a random order")
        dataset = self.fresh("batches")
        if head:
            head[0] = head[0].with_changes(leading_lines=read.leading_lines)
        # the record function where the per-record ops were, or, when other statements stood
        # between them and the batch (`record_defaults = ...`), after those, next to its `map`
        later = any(all(between is not m for m in moved) for between in body[read_at + 1:batch_at])
        definition = definition.visit(_CompatSpelling(self))
        self.replace[id(read)] = head if later else [*head, definition]
        self._built_in_function()
        for between in moved:
            self.replace[id(between)] = []
        fetch = f"{tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()"
        new = [stmt(f"{dataset} = {source}.map({function}){batch}"),
               stmt(f"return {fetch}" if target_node is None else f"{code(target_node)} = {fetch}")]
        blank = [] if self.owner is self.module or (statement.leading_lines and statement.leading_lines[0].comment
                                                    is None) else [cst.EmptyLine(indent=False)]  # after the `def`
        new[0] = new[0].with_changes(leading_lines=[*blank, *statement.leading_lines])
        self.replace[id(statement)] = [*([definition] if later else []), *self._noted(new, notes, statement)]

    def _python_if(self, statement, tainted: Set[str]) -> bool:
        """`if distort_images: image = tf.image.random_flip_left_right(image)`: an `if` on a Python
        value (not on a record's tensor) of simple statements, which the `map` function runs as
        TF1's graph building did, once."""
        if not isinstance(statement, cst.If) or names_read(statement.test) & tainted:
            return False
        branches = [statement.body]
        orelse = statement.orelse
        while isinstance(orelse, cst.If):
            if names_read(orelse.test) & tainted:
                return False
            branches.append(orelse.body)
            orelse = orelse.orelse
        if orelse is not None:
            branches.append(orelse.body)
        return all(isinstance(branch, cst.IndentedBlock) and all(isinstance(s, cst.SimpleStatementLine)
                                                                 for s in branch.body) for branch in branches)

    def _made_by_stateful_call(self, name: str, before: List[cst.BaseStatement]) -> Optional[str]:
        """The graph-state API (`placeholder_with_default`, `Variable`) whose result `name` is, in
        the pipeline's body before the read or at module level."""
        for statement in [*before, *self.module.body]:
            assigned = assignment(statement)
            if assigned is None or name not in assigned[0]:
                continue
            for call in calls_in(assigned[2]):
                what = self.names.api(call.func) or ""
                if any(word in what for word in STATEFUL_WORDS):
                    return what
        return None

    def _built_in_function(self) -> None:
        if isinstance(self.owner, cst.FunctionDef) and self.owner in self.module.body:
            self.builders.add(self.owner.name.value)

    def _respell_records(self, body, read_at: int, tainted: Set[str]) -> None:
        """The per-record ops after a `read` in TF1's spelling that TF2 lacks (`tf.decode_csv`):
        `tf.compat.v1.*`, which runs eagerly, instead of a name eager TF2 does not have."""
        for later in body[read_at + 1:]:
            if (names_read(later) | names_assigned(later)) & tainted and id(later) not in self.replace:
                tainted |= names_assigned(later)
                respelled = later.visit(_CompatSpelling(self))
                if respelled is not later:
                    self.replace[id(later)] = [respelled]

    def _read_elsewhere(self, name: str, inside: List[cst.CSTNode]) -> bool:
        """Whether `name` is read in the function (or module) of the pipeline outside the statements `inside`."""
        skip = {id(node) for node in inside}

        class _Reads(cst.CSTVisitor):
            found = False

            def on_visit(self, node) -> bool:
                if id(node) in skip:
                    return False
                if isinstance(node, cst.Name) and node.value == name:
                    _Reads.found = True
                return super().on_visit(node)

            def visit_Attribute(self, attr: cst.Attribute) -> bool:
                attr.value.visit(self)
                return False

            def visit_AssignTarget(self, target) -> bool:
                return not isinstance(target.target, (cst.Name, cst.Tuple, cst.List))

            def visit_Arg(self, arg: cst.Arg) -> bool:
                arg.value.visit(self)  # (not its keyword: `FixedLengthRecordReader(record_bytes=...)`)
                return False

        self.owner.visit(_Reads())
        return _Reads.found

    def _require_unsafe(self, node, why: str) -> None:
        if not self.unsafe:
            self.blocked(node, f"a queue pipeline whose order is random: {why}, and `tf.data` would give another "
                               "order of the same elements; `fix --native --unsafe-fixes` converts it (the order "
                               "changes)")

    def _noted(self, new: List[cst.BaseStatement], notes: List[str], at) -> List[cst.BaseStatement]:
        """The statements, with a comment saying what an unsafe conversion changed."""
        if not notes:
            return new
        self.notes += notes
        comments = [cst.EmptyLine(comment=cst.Comment(line)) for note in notes
                    for line in textwrap.wrap(UNSAFE_NOTE + note, 100, subsequent_indent="#   ")]
        first = new[0]
        new[0] = first.with_changes(leading_lines=[*first.leading_lines, *comments])
        return new

    # -- FIFO queues filled by queue runners -------------------------------------------------------------
    def _fifo(self, body: List[cst.BaseStatement], at: int, queue: str, call: cst.Call) -> None:
        """`q = tf.FIFOQueue(...)`, `e = q.enqueue_many(constants)`, `x, y = q.dequeue()`, a
        `QueueRunner(q, [e] * n)`: the constants, again and again, in the queue's dtypes."""
        statement = body[at]
        try:
            args = bind(call, QUEUE)
        except ValueError as why:
            self.blocked(statement, f"`FIFOQueue` with {why}")
        if "dtypes" not in args or any(k in args for k in ("names", "shared_name")):
            self.blocked(statement, "a `FIFOQueue` with `names` / `shared_name`, or without `dtypes`")
        dtypes = args["dtypes"]
        single = not isinstance(dtypes, (cst.List, cst.Tuple))
        dtype_list = [dtypes] if single else [e.value for e in dtypes.elements]
        uses: Dict[str, List[Tuple[cst.BaseStatement, List[str], cst.Call]]] = {}
        for later in body[at + 1:]:
            assigned = assignment(later)
            small = only_statement(later)
            value = assigned[2] if assigned else (small.value if isinstance(small, cst.Expr) else None)
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and isinstance(value.func.value, cst.Name) and value.func.value.value == queue:
                uses.setdefault(value.func.attr.value, []).append((later, assigned[0] if assigned else [], value))
        if set(uses) - {"enqueue_many", "dequeue"} or len(uses.get("enqueue_many", [])) != 1 \
                or len(uses.get("dequeue", [])) != 1:
            self.blocked(statement, f"a `FIFOQueue` used other than by one `enqueue_many` of constants, one "
                                    f"`dequeue()` and a `QueueRunner` ({', '.join(sorted(uses)) or 'no use'})")
        enqueue_statement, enqueue_targets, enqueue = uses["enqueue_many"][0]
        dequeue_statement, dequeue_targets, dequeue = uses["dequeue"][0]
        if len(enqueue_targets) != 1 or len(enqueue.args) != 1 or dequeue.args or not dequeue_targets:
            self.blocked(enqueue_statement, "a `FIFOQueue`'s `enqueue_many` / `dequeue` of another shape")
        values = enqueue.args[0].value
        value_list = [values] if single else [e.value for e in getattr(values, "elements", [])]
        if len(value_list) != len(dtype_list) or (not single and not isinstance(values, (cst.List, cst.Tuple))):
            self.blocked(enqueue_statement, "an `enqueue_many` whose values do not match the queue's dtypes")
        for value in value_list:
            if not self._constant(value):
                self.blocked(enqueue_statement, f"`enqueue_many` of `{code(value)}`, which is not Python or numpy "
                                                "data (a tensor is evaluated anew at each enqueue)")
        runner = self._runner_of(body, queue, enqueue_targets[0])
        tensors = [f"{self.tf}.constant({code(v)}, {code(d)})" for v, d in zip(value_list, dtype_list)]
        slices = tensors[0] if single else "(" + ", ".join(tensors) + ")"
        dataset = self.fresh(f"{queue}_data")
        self.replace[id(statement)] = []
        self.replace[id(enqueue_statement)] = []
        self.replace[id(runner)] = []
        targets = assignment(dequeue_statement)[1]
        new = [stmt(f"{dataset} = {self.tf}.data.Dataset.from_tensor_slices({slices}).repeat()"),
               stmt(f"{code(targets)} = {self.tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()")]
        new[0] = new[0].with_changes(leading_lines=dequeue_statement.leading_lines)
        self.replace[id(dequeue_statement)] = new
        self._built_in_function()

    def _runner_of(self, body, queue: str, enqueue: str) -> cst.BaseStatement:
        for statement in body:
            assigned = assignment(statement)
            if assigned and self.call(assigned[2], "train.QueueRunner", "train.queue_runner.QueueRunner"):
                call = assigned[2]
                first = call.args[0].value if call.args else None
                ops = call.args[1].value if len(call.args) > 1 else None
                ops_ok = isinstance(ops, cst.List) and len(ops.elements) == 1 and code(ops.elements[0].value) == enqueue \
                    or isinstance(ops, cst.BinaryOperation) and isinstance(ops.operator, cst.Multiply) \
                    and isinstance(ops.left, cst.List) and len(ops.left.elements) == 1 \
                    and code(ops.left.elements[0].value) == enqueue
                if isinstance(first, cst.Name) and first.value == queue and ops_ok and len(call.args) == 2 \
                        and len(assigned[0]) == 1:
                    self.runners.add(assigned[0][0])
                    return statement
        self.blocked(body[0], f"the queue `{queue}` without a `QueueRunner(queue, [enqueue] * n)` made next to it")

    def _constant(self, value) -> bool:
        """Python or numpy data: names bound only at module level, by code that does not use TensorFlow."""
        aliases = {local for local in self.names.aliases}
        for name in names_read(value):
            if name in aliases:
                return False
            bound = [s for s in self.module.body if name in names_assigned(s)]
            if not bound or any(names_read(s) & aliases for s in bound):
                return False
        return not any(isinstance(n, cst.Call) and self.names.api(n.func) is not None for n in calls_in(value))


def _one_element(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == 1 \
        and not isinstance(node.elements[0], cst.StarredElement)


def _inline(module: cst.Module, name: str, conversion: "_Conversion") -> Tuple[cst.Module, Set[str], object]:
    """The function `name`, called once (`x, y = name(args)`, or `name(args)` alone), written where
    it is called (native.inline, without renaming); the module as it was when that cannot be done
    plainly. Returns the module, the names the call site assigns, and the scope it is in (None: not
    inlined).

    A function that builds a pipeline is inlined so that its iterator is made once, where TF1
    made its queue: left in a function, the native route would call it, and make a new iterator,
    in every `tf.function` that reads its tensors (native.script refuses that). A function that
    runs the Session on the pipeline's tensors (`generate_batches(data_batch, label_batch)`) is
    inlined so that the pipeline and its runs are in one body, as native.entry_functions reads one."""
    try:
        done = inline(module, name, rename=False)
    except Refused:
        return module, set(), None
    return done.module, done.targets, done.scope


def _iterators_at_call_sites(module: cst.Module, name: str, conversion: "_Conversion") -> cst.Module:
    """The function `name` that builds a pipeline, called more than once (`input_pipeline(batch_size,
    train_logical=False)` for the test batches too): it returns its dataset, and each call site
    makes the iterator (`images, targets = input_pipeline(...)` becomes `images_data = ...` and
    `images, targets = make_one_shot_iterator(images_data).get_next()`). TF1 made a queue per call;
    each call site reads its own iterator, once, as it read its own queue. Left in the function, the
    iterator would be made anew wherever the function is evaluated (native.script refuses that).
    The module as it was when the function is used other than so."""
    tf = conversion.tf
    definition = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
    if definition is None or not isinstance(definition.body, cst.IndentedBlock):
        return module
    body = list(definition.body.body)
    last = only_statement(body[-1]) if body else None
    fetch = last.value if isinstance(last, cst.Return) else None
    fetched = [body[-1]]
    before = assignment(body[-2]) if len(body) > 1 and fetch is not None else None
    if before is not None and code(fetch) in (code(before[1]), ", ".join(before[0])):  # `batch = ...; return batch`
        fetch, fetched = before[2], body[-2:]
    made = fetch.func.value if isinstance(fetch, cst.Call) and isinstance(fetch.func, cst.Attribute) \
        and fetch.func.attr.value == "get_next" and not fetch.args else None
    if not (isinstance(made, cst.Call) and conversion.names.api(made.func) in ("data.make_one_shot_iterator", "compat.v1.data.make_one_shot_iterator")
            and len(made.args) == 1 and isinstance(made.args[0].value, cst.Name)):
        return module
    if any(isinstance(n, (cst.Return, cst.Yield)) for s in body[:-len(fetched)] for n in nodes_in(s)):
        return module
    sites = []

    class _Sites(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line) -> None:
            assigned = assignment(line)
            if assigned is not None and isinstance(assigned[2], cst.Call) and isinstance(assigned[2].func, cst.Name) \
                    and assigned[2].func.value == name:
                sites.append((line, assigned))

    module.visit(_Sites())
    if not sites or len([n for n in names_of(module) if n.value == name]) != len(sites) + 1:
        return module
    replace = {id(fetched[0]): [stmt(f"return {code(made.args[0].value)}").with_changes(
        leading_lines=fetched[0].leading_lines)]}
    if len(fetched) == 2:
        replace[id(fetched[1])] = []
    for line, (targets, target_node, call) in sites:
        dataset = conversion.fresh(f"{targets[0]}_data")
        new = [stmt(f"{dataset} = {code(call)}").with_changes(leading_lines=line.leading_lines),
               stmt(f"{code(target_node)} = {tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()")]
        replace[id(line)] = new
    return module.visit(Replace(replace))


def _consumers(module: cst.Module, scope: str, tainted: Set[str], names: ImportTable) -> List[str]:
    """The module's functions that the body `scope` (a function's name, "" for the module) calls
    with the pipeline's tensors (`tainted`, followed through its assignments) and that run a
    Session: inlined there too, so that the pipeline and its runs are in one body."""
    owner = module if not scope else next((s for s in module.body if isinstance(s, cst.FunctionDef)
                                            and s.name.value == scope), None)
    if owner is None:
        return []
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    found = []
    for statement in (owner.body if owner is module else owner.body.body):
        reads = names_read(statement)
        if not reads & tainted:
            continue
        tainted = tainted | names_assigned(statement)
        for call in calls_in(statement):
            if isinstance(call.func, cst.Name) and call.func.value in functions and names_read(call) & tainted:
                runs = any(names.api(c.func) in ("Session", "InteractiveSession") for c in calls_in(functions[call.func.value]))
                if runs and call.func.value not in found:
                    found.append(call.func.value)
    return found


class _CompatSpelling(cst.CSTTransformer):
    """`tf.decode_csv(...)` -> `tf.compat.v1.decode_csv(...)` for calls TF2 removed and
    `tf.compat.v1` still has: per-record ops that run eagerly inside a dataset's `map`."""

    def __init__(self, conversion: "_Conversion"):
        super().__init__()
        self.conversion = conversion

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        names = self.conversion.names
        path = names.api(original.func)
        head = original.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if path and isinstance(head, cst.Name) and names.aliases.get(head.value) == "tensorflow" \
                and api_table.v1_available(path):
            return updated.with_changes(func=cst.parse_expression(f"{head.value}.compat.v1.{path}"))
        return updated


class _Coordinators:
    """The Coordinator and the queue runners' threads go: `coord.should_stop()` is False until a
    `request_stop()`, which only ends the threads (none are left); `join` re-raised an exception
    that `request_stop(e)` recorded unless it was an OutOfRangeError, so `except Exception as e:
    coord.request_stop(e)` becomes `except tf.errors.OutOfRangeError: pass`."""

    def __init__(self, conversion: _Conversion):
        self.conversion = conversion
        self.call = conversion.call
        self.coords: Set[str] = set()
        self.threads: Set[str] = set()

    def check(self, module: cst.Module) -> None:
        """Each use of a coordinator or of the threads list (in the original module, whose lines
        a Blocked names) is one that `_CoordinatorRemover` removes."""
        for assign in _assigns(module):
            if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
                continue
            name = assign.targets[0].target.value
            if self.call(assign.value, "train.Coordinator"):
                self.coords.add(name)
            elif self.call(assign.value, "train.start_queue_runners") or self.creates_threads(assign.value):
                self.threads.add(name)
        module.visit(_Uses(self))

    def creates_threads(self, value) -> bool:
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "create_threads" and isinstance(value.func.value, cst.Name) \
            and value.func.value.value in self.conversion.runners

    def coord_call(self, node, *methods: str) -> bool:
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and isinstance(node.func.value, cst.Name) and node.func.value.value in self.coords \
            and node.func.attr.value in methods

    def stops_with(self, line, handler: cst.ExceptHandler) -> bool:
        """`except ... as e: coord.request_stop(e)`."""
        small = only_statement(line)
        if not (isinstance(small, cst.Expr) and self.coord_call(small.value, "request_stop")):
            return False
        args = small.value.args
        return len(args) == 1 and handler.name is not None and code(args[0].value) == code(handler.name.name)


class _Uses(cst.CSTVisitor):
    def __init__(self, owner: _Coordinators):
        super().__init__()
        self.owner = owner
        self.loops = 0
        self.line_of = owner.conversion.line_of

    def visit_While(self, node) -> None:
        self.loops += 1

    def leave_While(self, node) -> None:
        self.loops -= 1

    visit_For, leave_For = visit_While, leave_While

    def visit_ExceptHandler(self, handler: cst.ExceptHandler) -> None:
        body = handler.body.body if isinstance(handler.body, cst.IndentedBlock) else ()
        if any(self.owner.coord_call(getattr(only_statement(s), "value", None), "request_stop") and only_statement(s).value.args
               for s in body):
            if not (len(body) == 1 and self.owner.stops_with(body[0], handler)) or (
                    handler.type is not None and code(handler.type) not in ("Exception", "BaseException")):
                raise Blocked(self.line_of(handler), "`coord.request_stop(e)` in an `except` other than "
                                                     "`except Exception as e: coord.request_stop(e)`")

    def visit_Call(self, call: cst.Call) -> Optional[bool]:
        func = call.func
        if self.owner.coord_call(call, "should_stop", "request_stop", "join"):
            method = func.attr.value
            if method == "request_stop" and self.loops:
                raise Blocked(self.line_of(call), f"`{func.value.value}.request_stop()` inside a loop (it would end "
                                                  "a `should_stop()` loop; the rewrite removes it)")
            if method == "join":
                for arg in call.args:
                    if not (isinstance(arg.value, cst.Name) and arg.value.value in self.owner.threads):
                        arg.value.visit(self)
            return False
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in self.owner.coords:
            raise Blocked(self.line_of(call), f"`{func.value.value}.{func.attr.value}(...)`, a Coordinator used "
                                              "other than by `should_stop`, `request_stop` and `join`")
        return None

    def visit_Name(self, name: cst.Name) -> None:
        if name.value in self.owner.coords:
            raise Blocked(self.line_of(name), f"the Coordinator `{name.value}` used other than by `should_stop`, "
                                              "`request_stop` and `join` (given to a function, stored, ...)")
        if name.value in self.owner.threads:
            raise Blocked(self.line_of(name), f"the queue runners' threads `{name.value}` used other than by `join`")

    def visit_Arg(self, arg: cst.Arg) -> Optional[bool]:
        if arg.keyword is not None and arg.keyword.value == "coord" and isinstance(arg.value, cst.Name):
            return False  # start_queue_runners(coord=coord), create_threads(sess, coord=coord)
        return None

    def visit_AssignTarget(self, target: cst.AssignTarget) -> Optional[bool]:
        if isinstance(target.target, cst.Name) and target.target.value in self.owner.coords | self.owner.threads:
            return False  # the statements that make them, removed
        return None


def _assigns(node) -> List[cst.Assign]:
    found: List[cst.Assign] = []
    node.visit(type("A", (cst.CSTVisitor,), {"visit_Assign": lambda self, a: found.append(a)})())
    return found


class _CoordinatorRemover(cst.CSTTransformer):
    def __init__(self, owner: _Coordinators):
        super().__init__()
        self.owner = owner
        self.tf = owner.conversion.tf

    def _coord_call(self, node, *methods: str) -> bool:
        return self.owner.coord_call(node, *methods)

    def _removable(self, statement) -> bool:
        small = only_statement(statement)
        if isinstance(small, cst.Expr):
            value = small.value
            return self._coord_call(value, "request_stop", "join") or bool(
                self.owner.call(value, "train.start_queue_runners")) or self.owner.creates_threads(value) or bool(
                self.owner.call(value, "train.add_queue_runner") and len(value.args) == 1
                and code(value.args[0].value) in self.owner.conversion.runners)
        if isinstance(small, cst.Assign):
            return bool(names_assigned(small) & (self.owner.coords | self.owner.threads))
        return False

    def leave_UnaryOperation(self, original, updated):
        if isinstance(updated.operator, cst.Not) and self._coord_call(original.expression, "should_stop"):
            return cst.Name("True")
        return updated

    def leave_Call(self, original, updated):
        if self._coord_call(updated, "should_stop"):
            return cst.Name("False")
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if self._removable(original):
            return cst.RemoveFromParent()
        return updated

    def leave_If(self, original, updated):
        if isinstance(updated.test, cst.Name) and updated.test.value == "False" and updated.orelse is None:
            return cst.RemoveFromParent()  # `if coord.should_stop(): break`
        return updated

    def leave_ExceptHandler(self, original, updated):
        body = original.body.body if isinstance(original.body, cst.IndentedBlock) else ()
        if len(body) == 1 and self.owner.stops_with(body[0], original):
            return updated.with_changes(type=cst.parse_expression(f"{self.tf}.errors.OutOfRangeError"), name=None,
                                        body=updated.body.with_changes(body=[stmt("pass")]))
        return updated

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:
            return updated.with_changes(body=[stmt("pass")])
        return updated

    def leave_Try(self, original, updated):
        final = updated.finalbody
        if final is not None and all(_is_pass(s) for s in final.body.body):
            updated = updated.with_changes(finalbody=None)
        if not updated.handlers and updated.finalbody is None:
            return cst.FlattenSentinel(list(updated.body.body))
        return updated


def _is_pass(statement) -> bool:
    small = only_statement(statement)
    return isinstance(small, cst.Pass)
