"""The program side of the class route: where the module makes its Session, feeds built ahead,
and each `sess.run` over an object of a graph class, read as a call of a per-run method
(`net.train_step(x, y)`). A mixin of native.classes.ClassScript, whose state it fills.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

import tfmigrate.native.class_data as class_data
import tfmigrate.native.class_feeds as class_feeds
import tfmigrate.native.class_sessions as class_sessions
import tfmigrate.native.class_joint_runs as class_joint_runs
import tfmigrate.native.class_savers as class_savers
import tfmigrate.native.class_summaries as class_summaries
import tfmigrate.native.class_updates as class_updates
from tfmigrate.native.checkpoints import CHECKPOINT_FILES
from tfmigrate.native.class_facts import GraphClass, Placeholder, RunMethod, plain, root_name, self_attr, subtree
from tfmigrate.native.model_mapping import local_names
from tfmigrate.native.feed_builds import escape_reason, feed_uses, set_key, update_dict
from tfmigrate.native.script import EAGER_STATEMENTS, INITIALIZERS, SESSIONS, Blocked
from tfmigrate.native.syntax import assignments_in, bind, calls_in, code, names_read


class ProgramRuns:
    """The module's runs of graph classes (methods of ClassScript)."""

    def _no_other_graphs(self) -> None:
        """A class's graph may not read another object's tensors through what `__init__` was given
        (`Discriminator(generator)` reading `generator.output`): each object builds its own graph
        at each call, so the other's tensors would be those of another call."""
        tensors = set().union(*(c.graph_attrs | set(c.trains) for c in self.classes.values()))
        for cls in self.classes.values():
            for statement in cls.graph:
                for node in subtree(statement):
                    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                            and node.value.value in cls.captured and node.attr.value in tensors:
                        raise Blocked(self.line_of(node), f"`{code(node)}`, a tensor of another object's graph, read "
                                                          f"by `{cls.node.name.value}.__init__`")

    def _session_names(self) -> None:
        """The names Sessions are bound to anywhere, and the functions given one (`train(model, sess)`):
        the parameter and the argument go with the Session."""
        for node in subtree(self.module):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and self.tf_call(node.value) in SESSIONS:
                self.sessions.add(node.targets[0].target.value)
            elif isinstance(node, cst.WithItem) and self.tf_call(node.item) in SESSIONS and node.asname is not None \
                    and isinstance(node.asname.name, cst.Name):
                self.sessions.add(node.asname.name.value)
        for node in self.module.body:
            if isinstance(node, cst.FunctionDef):
                params = node.params.params
                for index, param in enumerate(params):
                    if param.name.value in self.sessions and param.default is None:
                        self.session_params[node.name.value] = (index, param.name.value)
                        self.session_defs[id(node)] = index
        for cls in self.classes.values():
            for node in cls.node.body.body:
                if isinstance(node, cst.FunctionDef) and node.name.value in cls.session_methods:
                    index, param = cls.session_methods[node.name.value]
                    if index < 0:  # (it runs the Session the object holds)
                        continue
                    if self.session_params.get(node.name.value, (index, param)) != (index, param):
                        raise Blocked(self.line_of(node), f"`{node.name.value}`, a function and a method given a "
                                                          "Session in other places")
                    self.sessions.add(param)
                    self.session_methods[node.name.value] = (index, param)
                    self.session_defs[id(node)] = index + 1  # (after `self`)

    def _feeds_built_ahead(self) -> None:
        """`feed = {model.x: a, model.y: b}` used only as the feed of runs: its keys become the
        parameters' names (`{"x": a, "y": b}`) and the runs call `model.train_step(**feed)`, so the
        values are taken where the program took them."""
        placeholders: Dict[str, Set[str]] = {}
        for cls in self.classes.values():
            for p in cls.placeholders:
                placeholders.setdefault(p.attr, set()).add(p.param)
        feeds_given = set()
        for call in calls_in(self.module):
            if self._session_method(call, "run"):
                try:
                    feed = bind(call, ("fetches", "feed_dict", "options", "run_metadata")).get("feed_dict")
                except ValueError:
                    continue
                if isinstance(feed, cst.Name):
                    feeds_given.add(id(feed))
        candidates: Dict[str, List[cst.Assign]] = {}
        in_feed_methods = {id(n) for c in self.classes.values() for m in c.node.body.body
                           if isinstance(m, cst.FunctionDef) and m.name.value in c.feed_methods for n in subtree(m)}
        for assign in assignments_in(self.module):
            if id(assign) in in_feed_methods:
                continue
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if isinstance(target, cst.Name) and isinstance(assign.value, cst.Dict) and assign.value.elements:
                candidates.setdefault(target.value, []).append(assign)
        for name, assigns in candidates.items():
            params: Dict[int, str] = {}
            if not all(self._key_param(e.key if isinstance(e, cst.DictElement) else None, params, placeholders)
                       for a in assigns for e in a.value.elements):
                continue
            targets = {id(a.targets[0].target) for a in assigns}
            uses = feed_uses(self.module, name, targets, feeds_given)
            if uses.escape is not None and (uses.updates or uses.sets):
                raise Blocked(self.line_of(uses.escape), escape_reason(name))
            if uses.escape is not None:
                continue  # (a plain dict of tensors read by Python: blocked where it is read)
            for call in uses.updates:
                keys = [e.key if isinstance(e, cst.DictElement) else None for e in update_dict(call).elements]
                self._extension(name, call, keys, params, placeholders)
            for target in uses.sets:
                self._extension(name, target, [set_key(target)], params, placeholders)
            self.feed_names[name] = [a.value for a in assigns]
            self.key_params.update(params)

    def _extension(self, name: str, node, keys, params: Dict[int, str], placeholders: Dict[str, Set[str]]) -> None:
        """`feed.update({...})` or `feed[key] = value`: keys of placeholders, or all elements of one tuple
        of tensors (`self.in_state[i]`), which the run is given as a dict `{i: value}`."""
        elements = {self._element_param(k) for k in keys}
        if len(elements) == 1 and None not in elements:
            param = elements.pop()
            params.update({id(k): param for k in keys})
            self.element_feeds[id(node)] = param
            return
        for key in keys:
            if not self._key_param(key, params, placeholders):
                raise Blocked(self.line_of(node), f"a feed of `{code(key) if key is not None else '**'}` added to "
                                                  f"`{name}`, not a placeholder of a class (or all elements of one "
                                                  "tuple of its tensors)")

    def _element_param(self, key) -> Optional[str]:
        """`net.state[i]`, an element of a tuple of the graph's tensors (an RNN's initial states, each a
        `placeholder_with_default`): the parameter of the whole tuple, fed element by element."""
        if not (isinstance(key, cst.Subscript) and isinstance(key.value, cst.Attribute) and plain(key.value.value)
                and len(key.slice) == 1 and isinstance(key.slice[0].slice, cst.Index)):
            return None
        attr = key.value.attr.value
        owners = [c for c in self.classes.values() if attr in c.graph_attrs and attr not in c.trains
                  and all(p.attr != attr or p.fed_tensor for p in c.placeholders)]
        if len(owners) != 1:
            return None
        made = [a.value for a in assignments_in(owners[0].node) if len(a.targets) == 1
                and self_attr(a.targets[0].target) == attr]
        if not made or not all(isinstance(v, cst.Tuple) or isinstance(v, cst.Call) and isinstance(v.func, cst.Name)
                               and v.func.value == "tuple" for v in made):
            raise Blocked(self.line_of(key), f"`{code(key)}` fed element by element, `{attr}` not made as a tuple "
                                             "(`tuple(...)`) the eager graph can rebuild with the fed elements")
        return self._fed_tensor(owners[0], attr, self.line_of(key), elements=True)

    def _key_param(self, key, params: Dict[int, str], placeholders: Dict[str, Set[str]]) -> bool:
        """Whether `key` of a feed built ahead is a placeholder (or a tensor) of a class: its parameter
        goes into `params`."""
        if isinstance(key, cst.Name) and key.value in self.module_placeholders:
            params[id(key)] = key.value
        elif isinstance(key, cst.Attribute) and plain(key.value) and len(placeholders.get(key.attr.value, ())) == 1:
            params[id(key)] = next(iter(placeholders[key.attr.value]))
        elif isinstance(key, cst.Attribute) and plain(key.value) and not placeholders.get(key.attr.value) and len(
                owners := [c for c in self.classes.values() if key.attr.value in c.graph_attrs]) == 1:
            params[id(key)] = self._fed_tensor(owners[0], key.attr.value, self.line_of(key))
        else:
            return False
        return True

    def _session_argument(self, call: cst.Call) -> Optional[cst.Arg]:
        """The argument of `call` that gives a function or a method its Session (None: none does)."""
        constructors = class_sessions.constructor_sessions(self)
        if isinstance(call.func, cst.Name) and call.func.value in constructors:  # `Actor(sess, ...)`
            index, name = constructors[call.func.value]
        elif isinstance(call.func, cst.Name) and call.func.value in self.session_params:
            index, name = self.session_params[call.func.value]
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value in self.session_methods:
            index, name = self.session_methods[call.func.attr.value]
        else:
            return None
        for position, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == name or arg.keyword is None and position == index \
                    and not arg.star:
                return arg if isinstance(arg.value, cst.Name) and arg.value.value in self.sessions else None
        return None

    def _module_placeholders_made(self) -> None:
        """`x = tf.placeholder(...)` at module level (read before the classes: a statement of
        `__init__` reading one is graph code)."""
        for node in self.module.body:
            if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
                    and isinstance(node.body[0], cst.Assign) and len(node.body[0].targets) == 1
                    and isinstance(node.body[0].targets[0].target, cst.Name)):
                continue
            value = node.body[0].value
            path = self.tf_call(value)
            if path in ("placeholder", "placeholder_with_default"):
                name = node.body[0].targets[0].target.value
                placeholder = self._placeholder(value, path, name, self.line_of(node))
                placeholder.own = False
                self.module_placeholders[name] = placeholder
                self.removed.add(id(node))

    def _module_placeholders(self) -> None:
        """The module-level placeholders a class's graph reads: parameters of it."""
        for cls in self.classes.values():
            read = set().union(*(names_read(s) for s in cls.graph)) if cls.graph else set()
            for method in sorted(cls.graph_methods):
                node = next(s for s in cls.node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == method)
                inputs = names_read(node) & set(self.module_placeholders)
                if inputs & local_names(node):
                    raise Blocked(self.line_of(node), f"the method `{cls.node.name.value}.{method}` binds "
                                                      f"`{sorted(inputs & local_names(node))[0]}`, the name of a "
                                                      "module-level placeholder")
                for name in sorted(inputs):  # read there as `self.<copy>`, which build_graph sets
                    cls.method_inputs.setdefault(name, cls.fresh(f"{name}_input"))
                read |= inputs
            for name, placeholder in self.module_placeholders.items():
                if name in read:
                    cls.placeholders.append(placeholder)

    def _top(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.ClassDef) and node.name.value in self.classes or id(node) in self.removed:
            return
        if isinstance(node, cst.FunctionDef) and class_data.datasets_only(self, node) and not any(
                self._session_method(c, "run") for c in calls_in(node)):
            return  # `def make_datasets(batch): ... tf.data.Dataset...`: Python data in, datasets out
        if isinstance(node, cst.FunctionDef) and self._graph_helper(node):
            return  # `def xavier_init(n, m): return tf.random_uniform(...)`, called by graph code only
        if isinstance(node, cst.FunctionDef) and not node.decorators or _is_main_block(node):
            for inner in node.body.body:  # `main()`, `if __name__ == "__main__":`: its statements, as the module's
                self._top(inner)
            return
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if self._mentions_tf(node):
                raise Blocked(self.line_of(node), f"`{node.name.value}`, a function or class that uses TensorFlow "
                                                  "beside the classes that build the graph")
            return
        if isinstance(node, cst.With) and len(node.items) == 1 and self.tf_call(node.items[0].item) in SESSIONS:
            item = node.items[0]
            if item.asname is None or not isinstance(item.asname.name, cst.Name):
                raise Blocked(self.line_of(node), "a Session entered without a name")
            self.sessions.add(item.asname.name.value)
            self.unwrapped.add(id(node))
            for inner in node.body.body:
                self._top(inner)
            return
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            small = node.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                path = self.tf_call(small.value)
                if path in SESSIONS:
                    self.sessions.add(small.targets[0].target.value)
                    self.removed.add(id(node))
                    return
                if path in INITIALIZERS:
                    self.initializers.add(small.targets[0].target.value)
                    self.removed.add(id(node))
                    return
            if isinstance(small, cst.Assign) and self._graph_writer(small):
                self.graph_writers[id(node)] = small
                return
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                call = small.value
                if self._session_method(call, "close"):
                    self.removed.add(id(node))
                    return
                if self._session_method(call, "run") and call.args and (
                        self.tf_call(call.args[0].value) in INITIALIZERS
                        or isinstance(call.args[0].value, cst.Name) and call.args[0].value.value in self.initializers):
                    self.removed.add(id(node))
                    return
                if self.tf_call(call) in EAGER_STATEMENTS:
                    return
                if self.tf_call(call, "disable_v2_behavior", "disable_eager_execution"):
                    self.removed.add(id(node))  # (the compat route's switch)
                    return
        self._python(node)

    def _graph_helper(self, function: cst.FunctionDef) -> bool:
        """A module function that uses TensorFlow, called only by the classes' graph code (their
        `__init__` graph and graph methods): graph code itself, run inside the tracked build."""
        name = function.name.value
        if function.decorators or not self._mentions_tf(function):
            return False
        graph = {id(n) for cls in self.classes.values() for piece in cls.graph + [
            m for m in cls.node.body.body if isinstance(m, cst.FunctionDef) and m.name.value in cls.graph_methods]
            for n in subtree(piece)}
        calls = [c for c in calls_in(self.module) if isinstance(c.func, cst.Name) and c.func.value == name]
        uses = [n for n in subtree(self.module) if isinstance(n, cst.Name) and n.value == name]
        if not calls or len(uses) != len(calls) + 1 or not all(id(c) in graph for c in calls):
            return False
        self._refused_in(function, f"`{name}`, a function the graph calls")
        return True

    def _graph_writer(self, assign: cst.Assign) -> bool:
        """`writer = tf.summary.FileWriter(logdir, sess.graph)`, the writer used nowhere else: it only
        wrote TF1's graph, which eager code does not have (an eager writer keeps its log directory)."""
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if not isinstance(target, cst.Name) or self.tf_call(assign.value) != "summary.FileWriter":
            return False
        try:
            bound = bind(assign.value, ("logdir", "graph"))
        except ValueError:
            return False
        graph = bound.get("graph")
        if "logdir" not in bound or graph is not None and not (
                isinstance(graph, cst.Attribute) and graph.attr.value == "graph" and isinstance(graph.value, cst.Name)
                and graph.value.value in self.sessions):
            return False
        return sum(isinstance(n, cst.Name) and n.value == target.value for n in subtree(self.module)) == 1

    def _session_method(self, call: cst.Call, method: str) -> bool:
        func = call.func
        return (isinstance(func, cst.Attribute) and func.attr.value == method and isinstance(func.value, cst.Name)
                and func.value.value in self.sessions) or method == "run" and class_sessions.is_held_run(self, call)

    def _python(self, node: cst.CSTNode) -> None:
        """A module-level statement of the program: its `sess.run` calls become run methods, and it may
        use TensorFlow only for objects (dtypes, optimizer classes, initializers)."""
        if class_savers.saver_statement(self, node):
            return
        runs = [c for c in calls_in(node) if self._session_method(c, "run")]
        inside = {id(n) for c in runs for n in subtree(c)} | {
            id(n) for key in subtree(node) if id(key) in self.key_params for n in subtree(key)}
        inside |= set(class_summaries.writer_calls(self, node))
        for path, attr in self.tensor_apis(node):
            if path.startswith("data.Dataset") or path in CHECKPOINT_FILES + ("train.list_variables",):  # a dataset of Python data, made
                continue  # once as TF1 made it; a file name
            if id(attr) not in inside:
                where = f"in `{self.current_class.node.name.value}.{self.current_method}`" if self.current_class else "at module level"
                if path == "train.Saver":
                    raise Blocked(self.line_of(attr), f"`tf.train.Saver` {where}: the class route keeps no TF1 "
                                                      "checkpoint (its variables are made at the first run, after "
                                                      "a restore would have run); keep the compat route, or save "
                                                      "the `tf.Module` with `tf.train.Checkpoint(model=...)` by hand")
                raise Blocked(self.line_of(attr), f"`tf.{path}` {where} beside the classes that build the graph")
        state = set().union(*(c.state for c in self.classes.values()))
        for call in calls_in(node):  # `net.gstep.eval()`: the variable's value, `net.gstep.numpy()`
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "eval" and not call.args \
                    and isinstance(func.value, cst.Attribute) and func.value.attr.value in state and plain(func.value.value):
                self.state_reads.add(id(call))
        for call in calls_in(node):
            given = class_savers.session_of_saver(self, call)
            if given is not None:
                self.saver_sessions.add(id(given))
                inside.add(id(given.value))
            given = self._session_argument(call)
            if given is not None:
                self.session_args.add(id(given))
                inside.add(id(given.value))
        sessions_used = [n for n in subtree(node) if isinstance(n, cst.Name) and n.value in self.sessions
                         and id(n) not in inside]
        if sessions_used:
            raise Blocked(self.line_of(node), f"the Session `{sessions_used[0].value}` used other than by `run`")
        graph_attrs = set().union(*(c.graph_attrs | set(c.trains) | c.graph_methods for c in self.classes.values()))
        for attr in subtree(node):
            if isinstance(attr, cst.Attribute) and id(attr) not in inside and attr.attr.value in graph_attrs \
                    and root_name(attr) not in self.aliases:
                raise Blocked(self.line_of(node), f"`{code(attr)}`, a tensor of the graph read by Python")
        for target in subtree(node):  # `net.training = True`: TF1 had read it once, in `__init__`; the
            if isinstance(target, (cst.AssignTarget, cst.AugAssign)) and isinstance(target.target, cst.Attribute):
                attr = target.target.attr.value  # graph, built at each call here, reads a copy made then
                for cls in self.classes.values():
                    if attr in cls.python_read and attr not in cls.frozen:
                        cls.frozen[attr] = cls.fresh(f"{attr}_built")
        placeholders = [n for n in subtree(node) if isinstance(n, cst.Name) and n.value in self.module_placeholders
                        and id(n) not in inside]
        if placeholders:
            raise Blocked(self.line_of(node), f"the placeholder `{placeholders[0].value}` used other than as a feed")
        assigned = {id(a.value): a for a in assignments_in(node) if len(a.targets) == 1}
        for call in runs:
            started = class_data.restart(self, call)
            instances = class_joint_runs.instances_of(call)
            if started is None and len(instances) > 1:
                class_joint_runs.split(self, node, call, instances)
            elif started is None:
                self._site(call, assigned.get(id(call)))
            elif not any(isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
                         and isinstance(line.body[0], cst.Expr) and line.body[0].value is call
                         for line in subtree(node)):
                raise Blocked(self.line_of(call), "the run of an iterator's initializer inside another statement")
            else:
                self.restarts[id(call)] = started

    def _site(self, call: cst.Call, assign: Optional[cst.Assign] = None) -> None:
        at = self.line_of(call)
        try:
            bound = bind(call, ("fetches", "feed_dict", "options", "run_metadata"))
        except ValueError:
            raise Blocked(at, "`sess.run(*args)`")
        if set(bound) - {"fetches", "feed_dict"}:
            raise Blocked(at, "`sess.run` with options")
        instances: Set[str] = set()
        fetched: List[str] = []

        def leaves(node) -> None:
            if isinstance(node, (cst.List, cst.Tuple)):
                for element in node.elements:
                    leaves(element.value)
            elif isinstance(node, cst.Dict):
                for element in node.elements:
                    if not isinstance(element, cst.DictElement):
                        raise Blocked(at, "a fetched `**dict`")
                    leaves(element.value)
            elif isinstance(node, cst.Attribute) and plain(node.value):
                instances.add(code(node.value))
                fetched.append(node.attr.value)
            else:
                raise Blocked(at, f"`sess.run` of `{code(node)}`, not a tensor of a class's graph")

        leaves(bound["fetches"])
        feeds: List[Tuple[str, cst.BaseExpression]] = []  # (placeholder attr or module name, value)
        feed = bound.get("feed_dict")
        spread = None  # `**feed`: a feed built ahead
        sometimes: Set[str] = set()  # placeholders a feed method adds in some calls only
        built = class_feeds.fed_by(self, feed)
        if built is not None:
            spread, feed, sometimes = built
        elif isinstance(feed, cst.Name) and feed.value in self.feed_names:
            spread = feed.value
            dicts = self.feed_names[spread]
            keys = [[e.key for e in d.elements] for d in dicts]
            every = set.intersection(*({code(k) for k in ks} for ks in keys))  # (fed in each of them)
            feed = cst.Dict([cst.DictElement(k, cst.Name("None")) for k in keys[0] if code(k) in every])
        if feed is not None:
            if not isinstance(feed, cst.Dict):
                raise Blocked(at, "a `feed_dict` that is not a dict literal")
            for element in feed.elements:
                if not isinstance(element, cst.DictElement):
                    raise Blocked(at, "a `feed_dict` with `**`")
                key = element.key
                if isinstance(key, cst.Name) and key.value in self.module_placeholders:
                    feeds.append((key.value, element.value))
                elif isinstance(key, cst.Attribute) and plain(key.value):
                    instances.add(code(key.value))
                    feeds.append((key.attr.value, element.value))
                else:
                    raise Blocked(at, f"a feed of `{code(key)}`, not a placeholder of a class")
        if len(instances) != 1:
            raise Blocked(at, "a `sess.run` over more than one object" if instances else
                              "a `sess.run` of no class's tensors")
        instance = next(iter(instances))
        candidates = [c for c in ([self.current_class] if instance == "self" and self.current_class else self.classes.values())
                      if set(fetched) <= c.graph_attrs | set(c.trains) | c.state
                      and {k for k, _ in feeds} <= {p.attr for p in c.placeholders} | c.graph_attrs]
        if len(candidates) != 1:
            raise Blocked(at, f"`sess.run` of `{instance}.{fetched[0]}`: " + (
                "no class's graph makes it" if not candidates else "more than one class makes it"))
        cls = candidates[0]
        for attr in {k for k, _ in feeds} - {p.attr for p in cls.placeholders}:
            self._fed_tensor(cls, attr, at)
        if set(fetched) <= cls.state:  # variables read as they are: `net.step.numpy()`
            self.sites[id(call)] = (cls, None, bound["fetches"], [])
            self.to_numpy |= isinstance(bound["fetches"], (cst.List, cst.Tuple, cst.Dict))
            return
        trains = [t for t in fetched if t in cls.trains]
        if len(trains) > 1:
            raise Blocked(at, "a `sess.run` of two train ops of one object")
        train = cls.trains[trains[0]] if trains else None
        for other in cls.trains.values():  # (the norm a clipped step gives back, with that step only)
            if other.norm_attr in fetched and other is not train:
                raise Blocked(at, f"`{instance}.{other.norm_attr}`, the global norm `{instance}.{other.attr}` clips "
                                  "by, fetched without that train op (eagerly the step computes it)")
        class_updates.check_run(self, cls, train, {} if spread else dict(feeds), at, instance)
        fed = {k for k, _ in feeds}
        needed = set(fetched) | ({train.loss} if train else set())
        drawn: Dict[str, str] = {}
        for placeholder in cls.placeholders:
            if placeholder.attr not in fed and placeholder.default is None:
                attrs, _statements, skippable = self.computed_from(cls, placeholder)
                if placeholder.attr in sometimes and skippable:  # given or not by the feed method's call
                    placeholder.optional = True
                    continue
                if placeholder.iterator and needed & attrs:  # TF1's run drew the next element
                    if fed & attrs:  # (TF1 drew no element when the feed replaced what it feeds)
                        raise Blocked(at, f"a `sess.run` that feeds `{instance}.{sorted(fed & attrs)[0]}`, computed "
                                          "from a `tf.data` iterator's `get_next()`")
                    drawn[placeholder.param] = class_data.draws(placeholder, instance)
                    continue
                if skippable and not needed & attrs:  # what it feeds is skipped: `if labels is not None:`
                    placeholder.optional = True
                    continue
                where = f"`{instance}.{placeholder.attr}`" if placeholder.own else f"`{placeholder.attr}`"
                why = "its fetches need it" if skippable else "the graph makes variables from it"
                raise Blocked(at, f"a `sess.run` that leaves {where} unfed where {why} (TF1 computed only what the "
                                  "fetches needed; the class's graph is built eagerly, skipping only what an unfed "
                                  "placeholder feeds)")
        fetched_node = bound["fetches"]
        if train is not None and assign is not None:  # `_, l = sess.run([train_op, loss])`: `l = ...`
            fetched_node = self._unpacked(assign, fetched_node, instance, set(cls.trains))
        fetches = _with_self(fetched_node, instance, set(cls.trains))
        key = f"{code(fetches)} {train.attr if train else ''}"  # (a train step may return what an evaluation does)
        if key not in cls.methods:
            cls.methods[key] = RunMethod(cls.fresh("train_step" if train else "evaluate"), fetches, train)
        args: List[Tuple[str, str]] = [("**", spread)] if spread else []
        values = {} if spread else dict(feeds)
        for placeholder in cls.placeholders:
            if placeholder.attr in values:
                args.append((placeholder.param, code(values[placeholder.attr])))
            elif placeholder.param in drawn:
                args.append((placeholder.param, drawn[placeholder.param]))
        self.sites[id(call)] = (cls, cls.methods[key], fetched_node, args)
        self.to_numpy |= isinstance(fetched_node, (cst.List, cst.Tuple, cst.Dict))

    def _fed_tensor(self, cls: GraphClass, attr: str, at: int, elements: bool = False) -> str:
        """A tensor of the graph that a run feeds (an RNN's initial state, fed the last final state):
        an optional parameter that, when given, replaces the tensor right where the graph made it
        (`elements`: a tuple whose elements are fed one by one, given as `{index: value}`)."""
        known = next((p for p in cls.placeholders if p.attr == attr), None)
        if known is not None:
            if known.fed_tensor and known.elements != elements:
                raise Blocked(at, f"`{attr}` fed whole in one place and element by element in another")
            return known.param
        if attr in cls.trains:
            raise Blocked(at, f"a feed of the train op `{attr}`")
        taken = {p.param for p in cls.placeholders} | set(cls.captured) | set().union(
            *(names_read(s) for s in cls.graph))
        param = attr
        while param in taken:
            param += "_"
        cls.placeholders.append(Placeholder(attr, param, None, "None", fed_tensor=cls.fresh(f"{attr}_fed"),
                                            elements=elements))
        return param

    def _unpacked(self, assign: cst.Assign, fetches, instance: str, trains: Set[str]):
        """The fetches without the train ops whose `None` the assignment drops into `_` (the
        assignment then names only the others: `l = net.train_step(...).numpy()`)."""
        target = assign.targets[0].target
        if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(fetches, (cst.Tuple, cst.List))
                and len(target.elements) == len(fetches.elements)
                and not any(isinstance(e, cst.StarredElement) for e in target.elements)):
            return fetches
        kept = [(t, f) for t, f in zip(target.elements, fetches.elements)
                if not (isinstance(t.value, cst.Name) and t.value.value == "_" and isinstance(f.value, cst.Attribute)
                        and code(f.value.value) == instance and f.value.attr.value in trains)]
        if len(kept) == len(target.elements) or not kept:
            return fetches
        if len(kept) == 1:
            self.targets[id(assign)] = kept[0][0].value
            return kept[0][1].value
        self.targets[id(assign)] = target.with_changes(elements=[
            t.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(kept) - 1 else t for i, (t, _f) in enumerate(kept)])
        return fetches.with_changes(elements=[
            f.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(kept) - 1 else f for i, (_t, f) in enumerate(kept)])


def _with_self(fetches, instance: str, trains: Set[str]) -> cst.BaseExpression:
    """The fetches as the run method returns them: `net.loss` -> `self.loss`, a train op -> None."""

    class _Self(cst.CSTTransformer):
        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
            if code(original.value) == instance:
                if original.attr.value in trains:
                    return cst.Name("None")
                return updated.with_changes(value=cst.Name("self"))
            return updated

    return fetches.visit(_Self())


def _is_main_block(node) -> bool:
    """`if __name__ == "__main__":` without `else`."""
    return isinstance(node, cst.If) and "__name__" in code(node.test) and node.orelse is None
