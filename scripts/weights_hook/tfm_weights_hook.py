"""Weight dump (reference run) and weight injection (native run); loaded by sitecustomize.py.

    TFMIGRATE_WEIGHTS_DUMP=F.npz  after each Session.run (tf.compat.v1 graph mode) whose fetches hold
        a global_variables_initializer / initialize_all_variables op, append the values of that
        session's graph's trainable variables not dumped yet, in creation order (the
        TRAINABLE_VARIABLES collection), to F as arrays v0000, v0001, ... (F is rewritten each time:
        a program that builds a second graph after reset_default_graph adds its variables after the
        first graph's); F.dump.json says what was dumped (names, shapes) or why nothing was.
    TFMIGRATE_WEIGHTS_LOAD=F.npz  at TensorFlow's import, enter tf.variable_creator_scope(creator) for
        good; creator gives each TRAINABLE variable created (in this thread, eagerly or inside a
        tf.function: Keras 3 builds layer weights through tf.Variable) the next array of F as its
        initial value. The first shape mismatch stops the injection. F.load.json: injected N of M,
        mismatch at i (with both shapes), trainable variables created after F ran out.

Nothing happens until the program imports tensorflow: a meta-path finder waits for that import
and then patches (so the other Python processes of a run do not pay for TensorFlow's import).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import re
import sys

DUMP_ENV = "TFMIGRATE_WEIGHTS_DUMP"
LOAD_ENV = "TFMIGRATE_WEIGHTS_LOAD"
_INIT_NAME_RE = re.compile(r"(^|/)init(_\d+)?$")  # the name TF1 gives global_variables_initializer's op

_installed = False
_load_scope = None  # the variable creator scope of a native run, entered for good


def install() -> None:
    """Act now if TensorFlow is already imported, else when it is."""
    global _installed
    if _installed:
        return
    _installed = True
    if "tensorflow" in sys.modules:
        _on_tensorflow(sys.modules["tensorflow"])
    else:
        sys.meta_path.insert(0, _TensorFlowFinder())


class _TensorFlowFinder(importlib.abc.MetaPathFinder):
    """Finds `tensorflow` through the other finders and runs _on_tensorflow once it is executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            _on_tensorflow(module)

        spec.loader.exec_module = exec_module
        return spec


def _on_tensorflow(tf) -> None:
    try:
        if os.environ.get(DUMP_ENV):
            _install_dump(tf, os.environ[DUMP_ENV])
        if os.environ.get(LOAD_ENV):
            _install_load(tf, os.environ[LOAD_ENV])
    except Exception as exc:  # the program must run as it would without the hook
        print(f"tfm_weights_hook: {type(exc).__name__}: {exc}", file=sys.stderr)


def _write_json(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# reference run: dump

class _DumpState:
    def __init__(self, path: str):
        self.path = path
        self.status_path = path + ".dump.json"
        self.init_ops: set = set()  # (graph key, op name) of the initializer ops the program made
        self.dumped = False  # something was dumped
        self.keys: set = set()  # (graph key, variable name) dumped
        self.values: list = []
        self.variables: list = []  # {"name", "shape", "dtype"} of each dumped value


_graph_keys = iter(range(1, 1 << 62))


def _graph_key(graph) -> object:
    """A key of a graph that outlives it (id() is reused once a reset_default_graph frees one)."""
    key = getattr(graph, "_tfm_weights_key", None)
    if key is None:
        try:
            key = next(_graph_keys)
            graph._tfm_weights_key = key
        except Exception:
            return id(graph)
    return key


def _install_dump(tf, path: str) -> None:
    from tensorflow.python.client import session as session_lib

    state = _DumpState(path)
    _write_json(state.status_path, {"dumped": False, "reason": "no Session.run of global_variables_initializer seen"})

    def remember(factory):
        def wrapper(*args, **kwargs):
            op = factory(*args, **kwargs)
            try:
                state.init_ops.add((_graph_key(op.graph), op.name))
            except Exception:
                pass
            return op

        wrapper.__wrapped__ = factory
        wrapper.__name__ = getattr(factory, "__name__", "initializer")
        wrapper.__doc__ = getattr(factory, "__doc__", None)
        return wrapper

    modules = []
    for candidate in (sys.modules.get("tensorflow.compat.v1"), getattr(getattr(tf, "compat", None), "v1", None)):
        if candidate is not None and all(candidate is not m for m in modules):
            modules.append(candidate)
    for module in modules:
        for name in ("global_variables_initializer", "initialize_all_variables"):
            factory = getattr(module, name, None)
            if factory is not None and not hasattr(factory, "__wrapped__"):
                setattr(module, name, remember(factory))

    original_run = session_lib.BaseSession.run

    def run(self, fetches, *args, **kwargs):
        result = original_run(self, fetches, *args, **kwargs)
        try:
            if _fetches_initializer(tf, fetches, state):
                _dump(self, original_run, state)
        except Exception as exc:
            _write_json(state.status_path, {"dumped": state.dumped, "count": len(state.values),
                                            "variables": state.variables,
                                            "error": f"{type(exc).__name__}: {exc}"})
        return result

    run.__wrapped__ = original_run
    session_lib.BaseSession.run = run


def _fetches_initializer(tf, fetches, state: _DumpState) -> bool:
    try:
        items = tf.nest.flatten(fetches)
    except Exception:
        items = [fetches]
    for item in items:
        graph = getattr(item, "graph", None)
        name = getattr(item, "name", None)
        if graph is None or not isinstance(name, str):
            continue
        if (_graph_key(graph), name) in state.init_ops:
            return True
        if getattr(item, "type", None) == "NoOp" and _INIT_NAME_RE.search(name):  # made by TF itself
            return True
        inputs = list(getattr(item, "control_inputs", None) or ())  # `tf.group(init, local_init)`
        if inputs and _fetches_initializer(tf, inputs, state):
            return True
    return False


def _dump(session, original_run, state: _DumpState) -> None:
    import numpy as np

    graph = session.graph
    key = _graph_key(graph)
    variables = [v for v in graph.get_collection("trainable_variables") if (key, v.name) not in state.keys]
    if not variables:
        return
    values = original_run(session, variables)
    for v, x in zip(variables, values):
        state.keys.add((key, v.name))
        state.values.append(np.asarray(x))
        state.variables.append({"name": v.name, "shape": list(np.shape(x)), "dtype": str(np.asarray(x).dtype)})
    np.savez(state.path, **{f"v{i:04d}": x for i, x in enumerate(state.values)})
    state.dumped = True
    _write_json(state.status_path, {"dumped": True, "count": len(state.values), "variables": state.variables})


# ---------------------------------------------------------------------------------------------
# native run: inject

class _LoadState:
    def __init__(self, path: str, arrays: list):
        self.status_path = path + ".load.json"
        self.arrays = arrays
        self.next = 0
        self.active = True
        self.injected = 0
        self.mismatch = None
        self.extra = 0  # trainable variables created after the arrays ran out
        self.skipped_after_mismatch = 0

    def status(self) -> dict:
        return {"injected": self.injected, "of": len(self.arrays), "mismatch": self.mismatch,
                "extra_trainable": self.extra, "not_injected_after_mismatch": self.skipped_after_mismatch}

    def save(self) -> None:
        _write_json(self.status_path, self.status())


def load_arrays(path: str) -> list:
    import numpy as np

    with np.load(path) as data:
        return [data[k] for k in sorted(data.files)]


def make_creator(tf, state: _LoadState):
    """The variable creator: tf.variable_creator_scope(make_creator(tf, state))."""
    import numpy as np

    def creator(next_creator, **kwargs):
        trainable = kwargs.get("trainable")
        if trainable is None:
            trainable = kwargs.get("synchronization") != tf.VariableSynchronization.ON_READ
        if not trainable:
            return next_creator(**kwargs)
        if not state.active:
            state.skipped_after_mismatch += 1
        elif state.next >= len(state.arrays):
            state.extra += 1
        else:
            value = kwargs.get("initial_value")
            if callable(value):
                with tf.init_scope():
                    value = value()
                kwargs["initial_value"] = value  # computed once, here
            dtype = kwargs.get("dtype") or getattr(value, "dtype", None)
            shape = getattr(value, "shape", None)
            if shape is None:
                shape = np.shape(value)
            got = tuple(shape) if shape is not None and None not in tuple(shape) else None
            array = state.arrays[state.next]
            if got == tuple(array.shape):
                if dtype is not None:
                    array = array.astype(tf.as_dtype(dtype).as_numpy_dtype)
                kwargs["initial_value"] = array
                state.injected += 1
                state.next += 1
            else:
                state.active = False
                state.mismatch = {"index": state.next, "name": kwargs.get("name"),
                                  "variable_shape": None if got is None else list(got),
                                  "dumped_shape": list(array.shape)}
        state.save()
        return next_creator(**kwargs)

    return creator


def _install_load(tf, path: str) -> None:
    state = _LoadState(path, load_arrays(path))
    state.save()
    scope = tf.variable_creator_scope(make_creator(tf, state))
    scope.__enter__()  # for the whole run, never exited
    global _load_scope
    _load_scope = scope
