"""`tfmigrate fix --native`: a TF1 graph script rewritten as eager TF2 (issue 13).

The compat route (TFM200) keeps a graph program a TF1 graph. Where the whole module is a script
whose every construct is on the whitelist (native.script: placeholders, variables, `tf.layers`,
tensors, `opt.minimize`, a Session and its `run` calls), the module is rewritten instead:
placeholders become arguments of `tf.function`s, each `sess.run` a call of one, variables and
layers are created once, `minimize` becomes a GradientTape step (native.emit). Anything else is
a `Blocker` that names the construct, and the module keeps the compat route.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tfmigrate.native.script import Blocker, Blocked, Script


@dataclass(frozen=True)
class Outcome:
    code: Optional[str]          # the rewritten module, or None
    blocker: Optional[Blocker]   # why not, when code is None
    kept: Tuple[str, ...] = ()   # `--keras3`: what stays TF1 inside the tracked layers, and why


@lru_cache(maxsize=16)
def rewrite(source: str, stateful: tuple = (), eager: tuple = (), unsafe: bool = False, keras3: bool = False,
            group: tuple = ()) -> Outcome:
    """The module `source` as eager TF2, or the construct that stops it (`stateful`: the checked
    modules it imports that make variables; `eager`: those an eager test may call; `unsafe`: a
    queue pipeline whose order was random may become a `tf.data` shuffle; `keras3`: the TF1 layers of
    its model functions become Keras layers where equal, native.keras3). Remembered per
    source: the runner's look at the scripts, the engine's first pass and TFM216 in every later fix
    pass ask about the same text.

    Stopped by a function that builds graph state (`train_op = training(loss, 0.1)`), the module is
    tried again with that function written where it is called (native.inline), where that is exact.
    `group`: the module is one of a library of graph classes and its programs
    (project.class_groups), rewritten with them or not at all (native.groups)."""
    from tfmigrate.native.syntax import forget_found

    forget_found()  # (what one module's rewrite remembered of its nodes is of no use to the next)
    if group:
        from tfmigrate.native.groups import member_outcome

        outcome = Outcome(*member_outcome(source, group, rewrite, unsafe))
        if outcome.code is None and group[0] != group[1] and "TestCase" not in source:
            # the group keeps the library TF1 code: a program may still go eager on its own, calling
            # that code through the store or taking its graph classes in (native.library_builders)
            alone = rewrite(source, stateful, eager, unsafe, keras3)
            if alone.code is not None:
                return alone
            if alone.blocker is not None and alone.blocker.construct not in outcome.blocker.construct:
                return Outcome(None, dataclasses.replace(outcome.blocker, construct=(
                    f"{outcome.blocker.construct}; on its own, it stops at its line {alone.blocker.line}: "
                    f"{alone.blocker.construct}")))
        return outcome
    from tfmigrate.native.library_builders import taken_in, without_builders

    builders = taken_in(source, eager)  # `ops = lib.build_graph(...)`: the library's graph function written in
    eager = without_builders(eager)
    if builders is not None:
        text = builders.inlined()
        return _taken_lines(source, builders, text, rewrite(text, stateful, eager, unsafe, keras3))
    from tfmigrate.native.global_steps import named, read_by_run

    stepped = named(source)  # `global_step=tf.train.get_global_step()`: the step by one name
    if stepped is not None:
        return _lines_of(source, stepped, rewrite(stepped, stateful, eager, unsafe, keras3))
    read = read_by_run(source)  # `tf.train.global_step(sess, step)`: the run it makes
    if read is not None:
        return _lines_of(source, read, rewrite(read, stateful, eager, unsafe, keras3))
    from tfmigrate.native.outside_trains import moved

    trained = moved(source)  # `net = Net()` then `minimize(net.loss)`: the train op moved into the class
    if trained is not None:
        return _lines_of(source, trained, rewrite(trained, stateful, eager, unsafe, keras3))
    outcome = _with_tf1_seeds(source, stateful, eager, unsafe, keras3)
    if outcome is None:
        outcome = _seeded(source, _slim_layers_kept(source, _rewrite(source, stateful, eager, unsafe, keras3)), unsafe,
                          eager)
        outcome = _own_seed_named(source, outcome, unsafe)
    if outcome.blocker is None or outcome.blocker.function is None:
        return outcome
    import tfmigrate.native.inline as inline

    blocker = outcome.blocker
    try:
        text = inline.inline_each(cst.parse_module(source), blocker.function).module.code
    except inline.Refused as why:
        if str(why).startswith("a function called 0 times") and _library(source):
            from tfmigrate.native.script import LIBRARY_MODULE

            return Outcome(None, Blocker(1, LIBRARY_MODULE))  # (its callers are elsewhere: TFM216 names them)
        return Outcome(None, Blocker(blocker.line, f"{blocker.construct}, not written where it is called: {why}"))
    inlined = rewrite(text, stateful, eager, unsafe, keras3)
    from tfmigrate.native.script import LIBRARY_MODULE

    if inlined.blocker is not None and inlined.blocker.construct == LIBRARY_MODULE:
        return Outcome(None, Blocker(1, LIBRARY_MODULE))  # (its graph functions' callers are elsewhere: TFM216 names them)
    if inlined.blocker is not None:  # both: the function, and what stops the module with it written in place
        line = inline.original_line(source, text, inlined.blocker.line)
        return Outcome(None, Blocker(blocker.line, f"{blocker.construct}; written where it is called, the module "
                                                   f"stops at line {line}: {inlined.blocker.construct}"))
    return inlined


def _library(source: str) -> bool:
    """A module of functions for others to call: no Session, placeholder or `__main__` at its top level."""
    return not re.search(r"^(?:[^\s#].*\b(?:Session|InteractiveSession|placeholder\w*)\(|if\s+__name__\b)",
                         source, re.MULTILINE)


def _lines_of(source: str, changed: str, outcome: Outcome) -> Outcome:
    """`outcome` of the rewrite of `changed` (a line added to `source`), its blocker at the line of
    `source` it names."""
    if outcome.blocker is None:
        return outcome
    from tfmigrate.native.inline import original_line

    return Outcome(None, dataclasses.replace(outcome.blocker, line=original_line(source, changed, outcome.blocker.line)))


def _taken_lines(source: str, builders, text: str, outcome: Outcome) -> Outcome:
    """`outcome` of `text`, the script with its library builders written in (native.library_builders)
    and where they are called: a blocker inside one named at the call, at the builder's own line in
    its library."""
    if outcome.blocker is None:
        return outcome
    line = builders.line_in_code(text, outcome.blocker.line)
    inside = builders.where(line)
    if inside is None:
        from tfmigrate.native.inline import original_line

        return Outcome(None, dataclasses.replace(outcome.blocker, line=original_line(source, builders.code, line)))
    spelling, module, line = inside
    return Outcome(None, Blocker(builders.call_line(source, spelling),
                                 f"`{spelling}`, graph code of `{module}` taken into this script to run eagerly, "
                                 f"stops at its line {line} there: {outcome.blocker.construct}"))


def _own_seed_named(source: str, outcome: Outcome, unsafe: bool) -> Outcome:
    """A rewrite stopped by a draw with a seed of its own, in a graph-seeded module whose op seeds
    could not be written out (native.op_seeds, which keeps such seeds): say what kept them."""
    blocker = outcome.blocker
    if blocker is None or not unsafe or "a random op with its own seed" not in blocker.construct:
        return outcome
    from tfmigrate.native.op_seeds import why_not_pinned

    try:
        why = why_not_pinned(cst.parse_module(source), source)
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return outcome
    if why is None:
        return outcome
    return Outcome(None, Blocker(blocker.line, f"{blocker.construct}; the seeds TF1 gave the program's draws are "
                                               f"not written out here: {why}", blocker.function))


def _slim_layers_kept(source: str, outcome: Outcome) -> Outcome:
    """A rewrite that keeps a `tf.contrib.layers` layer making variables (`fully_connected`,
    `conv2d`, ...) is refused: TFM206 moves it to tf-slim only in graph code, and eagerly it would
    make new variables at each call. Stateless ones (`flatten`) become tf-slim's anywhere. A
    `tf.contrib.rnn` / `seq2seq` name left in the eager code (one core did not re-export) is refused:
    TF 2.21 has no `tf.contrib`."""
    if outcome.code is None or "contrib" not in outcome.code:
        return outcome
    from tfmigrate.facts.program import code_only
    from tfmigrate.fixers.contrib_homes import SLIM_STATELESS

    text = code_only(outcome.code)
    for found in re.finditer(r"\bcontrib\.(?:layers|slim)\.(\w+)", text):
        if found.group(1) not in SLIM_STATELESS:
            at = re.search(rf"\bcontrib\.(?:layers|slim)\.{found.group(1)}\b", source)
            line = source.count("\n", 0, at.start()) + 1 if at else 1
            return Outcome(None, Blocker(line, f"`tf.contrib.layers.{found.group(1)}` in the model code, a tf-slim "
                                            "layer that the eager rewrite cannot keep (it would make new variables "
                                            "at each call)"))
    found = re.search(r"\bcontrib\.(?:rnn|seq2seq|cudnn_rnn)\.\w+", text)
    if found:  # (the cells TF1 re-exported from core are read as core's: native.contrib_spellings)
        at = re.search(rf"\b{re.escape(found.group(0))}\b", source)
        line = source.count("\n", 0, at.start()) + 1 if at else 1
        return Outcome(None, Blocker(line, f"`tf.{found.group(0)}` in the model code, which TF 2.21 does not have "
                                           "and the eager rewrite cannot keep"))
    return outcome


def _seeded(source: str, outcome: Outcome, unsafe: bool, eager: tuple = ()) -> Outcome:
    """A rewrite of a seeded program that draws random numbers is unsafe (native.seeded_draws):
    refused without `--unsafe-fixes`, and with it noted above the seed. Its draws may be its
    project's (`eager`: a library function it calls draws, `lib.dense:draws=init`)."""
    if outcome.code is None:
        return outcome
    from tfmigrate.native.seeded_draws import noted, seed_line

    line = seed_line(source, _drawing_calls(source, eager))
    if line is None:
        return outcome
    if not unsafe:
        return Outcome(None, Blocker(line, "a graph-level seed with random draws (initial weights, dropout, noise): "
                                           "eager TF2 draws other numbers from the same seed, so the printed "
                                           "numbers change (equal under `DeterministicRandomTestTool`); "
                                           "`fix --unsafe-fixes --native` rewrites it and says so in the code"))
    return Outcome(noted(outcome.code), None, outcome.kept)


def _drawing_calls(source: str, eager: tuple) -> Tuple[str, ...]:
    """How the module spells the functions of its project that draw (eager_imports' `:draws=`)."""
    if ":draws=" not in "".join(eager):
        return ()
    from tfmigrate.native.imported_models import imported

    try:
        return tuple(sorted(imported(cst.parse_module(source), eager).draws))
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return ()


def _with_tf1_seeds(source: str, stateful: tuple, eager: tuple, unsafe: bool, keras3: bool) -> Optional[Outcome]:
    """A graph-seeded script rewritten with the seed TF1's graph gave each random op written out
    (native.op_seeds), so that it draws TF1's numbers; None where the seeds cannot be written out
    or the script route does not take them (the module is then rewritten as it is). Unsafe all
    the same: a draw at each step is TF1's only while one `tf.function`, traced once, evaluates it."""
    if not unsafe or ("set_random_seed" not in source and "set_seed" not in source):  # (GRAPH_SEEDS)
        return None
    from tfmigrate.native.op_seeds import pinned
    from tfmigrate.native.seed_generators import drawn_apart, drawn_by_generators
    from tfmigrate.native.seeded_draws import PINNED_NOTE, noted

    try:
        with_seeds = pinned(cst.parse_module(source), source, tuple(eager))
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return None
    if with_seeds is None:
        return None
    outcome = _slim_layers_kept(source, _rewrite(with_seeds.code, stateful, eager, unsafe, keras3, pinned=True))
    if outcome.code is None:
        return None
    code = drawn_by_generators(outcome.code)
    if drawn_apart(code) is not None:
        return None  # (the module is rewritten as it is, under the note that eager TF2 draws other numbers)
    return Outcome(noted(code, PINNED_NOTE), None, outcome.kept)


def _rewrite(source: str, stateful: tuple, eager: tuple, unsafe: bool, keras3: bool, pinned: bool = False) -> Outcome:
    """`rewrite`, but for the functions it may write where they are called."""
    try:
        module = cst.parse_module(source)
    except Exception as error:  # noqa: BLE001 - the caller reports unparsable files itself
        return Outcome(None, Blocker(1, f"the file does not parse ({type(error).__name__})"))
    from tfmigrate.native.tf1_signatures import spelled_v1

    written = source  # as the user wrote it: native.tidy drops the imports the rewrite stopped reading
    spelled = spelled_v1(module, source)  # TF1 calls TF2 reads otherwise: `tf.compat.v1.<path>` (same lines)
    if spelled is not None:
        source = spelled.code
        module = cst.parse_module(source)
    from tfmigrate.native.contrib_spellings import core_spelled

    core = core_spelled(module, source)  # `rnn.BasicLSTMCell` of `tensorflow.contrib`: TF1's core cell (same lines)
    if core is not None:
        source = core.code
        module = cst.parse_module(source)
    from tfmigrate.native.clipped_steps import clipped

    clip = clipped(module, source)  # `apply_gradients` of clipped gradients: `minimize` (same lines)
    if clip is not None:  # (read so by the script route only: the others would drop the clip)
        first = _routes(clip.module, clip.module.code, written, stateful, eager, unsafe, keras3, pinned, clip)
        if first.code is not None:
            return first
        rest = _routes(module, source, written, stateful, eager, unsafe, keras3, pinned)
        return rest if rest.code is not None else first
    return _routes(module, source, written, stateful, eager, unsafe, keras3, pinned)


def _routes(module: cst.Module, source: str, written: str, stateful: tuple, eager: tuple, unsafe: bool, keras3: bool,
            pinned: bool, clip=None) -> Outcome:
    """The module through the first route that takes it: queues, Estimators, test files, the script
    route, classes, entry functions (with `clip`: the script route alone, its steps clipped)."""
    from tfmigrate.native.collection_lists import inlined

    listed = inlined(module, source)  # `d_vars = tf.get_collection(...)` read only by `var_list=` (same lines)
    if listed is not None:
        source = listed.code
        module = cst.parse_module(source)
    wrapper_module, line_of = _with_lines(module)
    if clip is not None:
        try:
            try:
                script = Script(wrapper_module, source, line_of, tuple(stateful), pinned=pinned, keras3=keras3,
                                norm_names=clip.norm_names, listed=tuple(eager)).analyse()
                script.clip_steps(clip.norms, clip.values)
                from tfmigrate.native.emit import Emitter

                text = Emitter(script).module()
            except Blocked as stop:
                import tfmigrate.native.entry_functions as entry_functions

                text = entry_functions.rewrite(wrapper_module, source, line_of, tuple(stateful), clip, pinned, keras3,
                                               tuple(eager), entry_functions.own_graphs(wrapper_module, source))
                if text is None:
                    raise stop
        except Blocked as stop:
            return Outcome(None, stop.blocker)
        except Exception as error:  # noqa: BLE001 - a defect of the rewrite: the module keeps the compat route
            return _failed(error)
        return _finished(text, written, keras3)

    import tfmigrate.native.queues as queues

    try:  # queue input pipelines first become `tf.data` (still graph code), where that is exact
        converted = queues.convert(wrapper_module, source, line_of, unsafe)
    except Blocked as stop:
        return Outcome(None, stop.blocker)
    except Exception as error:  # noqa: BLE001 - a defect of the conversion: the module keeps the compat route
        return Outcome(None, Blocker(1, f"internal: the queue conversion failed ({type(error).__name__}: {error}); "
                                        "please report it"))
    if converted is not None:
        outcome = rewrite(converted.text, stateful, eager, unsafe, keras3)
        if outcome.blocker is not None:  # named at its line in the source as written
            blocker = Blocker(converted.original_line(source, outcome.blocker.line), outcome.blocker.construct)
            return Outcome(None, blocker)
        return outcome

    import tfmigrate.native.estimators as estimators

    # Each stage's module is imported when the stage is reached: most programs stop at the first
    # (test_files alone costs 0.2 s to import, libcst.matchers).
    try:
        try:  # a `tf.estimator` program: its Estimator becomes a model, a tf.data input and a loop
            text = estimators.rewrite(wrapper_module, source, line_of)
        except Blocked as stop:
            return Outcome(None, stop.blocker)
        if text is not None:
            return _checked(text, written)
        import tfmigrate.native.test_files as test_files

        try:  # a `tf.test.TestCase` file: its test methods become eager tests, or the file keeps the route
            text = test_files.rewrite(wrapper_module, source, line_of, tuple(eager), unsafe)
        except Blocked as stop:
            return Outcome(None, stop.blocker)
        if text is not None:
            return _checked(text, written)
        try:
            script = Script(wrapper_module, source, line_of, tuple(stateful), pinned=pinned, keras3=keras3,
                            listed=tuple(eager)).analyse()
            from tfmigrate.native.emit import Emitter

            text = Emitter(script).module()
        except Blocked as stop:
            import tfmigrate.native.class_writer as classes
            import tfmigrate.native.entry_functions as entry_functions

            from tfmigrate.native.graph_blocks import class_graphs_unwrapped, unwrapped

            module, lines = wrapper_module, line_of
            fresh = entry_functions.own_graphs(module, source)
            flat = unwrapped(module, source)  # `with tf.Graph().as_default():` read as its body (same lines)
            own = class_graphs_unwrapped(flat or module, source)  # a class's own graph, read away (same lines)
            flat = own or flat
            from tfmigrate.native.session_evals import as_session_runs

            evals = as_session_runs(flat or module, source)  # `t.eval(feed)`: its one Session's run (same lines)
            flat = evals or flat
            from tfmigrate.native.class_members import renamed

            members = renamed(flat or module)  # `self.variables` of a graph class: `self.variables_` (same lines)
            flat = members or flat
            if flat is not None:
                module, lines = _with_lines(flat)
            try:  # a class builds the graph (native.classes), or functions run by `main` (entry_functions)
                text = classes.rewrite(module, module.code if flat is not None else source, lines, pinned)
                if text is None:
                    text = entry_functions.rewrite(module, module.code if flat is not None else source, lines,
                                                   tuple(stateful), None, pinned, keras3, tuple(eager), fresh)
            except Blocked as inner:
                return Outcome(None, inner.blocker)
            if text is None:
                return Outcome(None, stop.blocker)
    except Exception as error:  # noqa: BLE001 - a defect of the rewrite: the module keeps the compat route
        return _failed(error)
    return _finished(text, written, keras3)


def _failed(error: Exception) -> Outcome:
    return Outcome(None, Blocker(1, f"internal: the rewrite failed ({type(error).__name__}: {error}); please report it"))


def _finished(text: str, written: str, keras3: bool) -> Outcome:
    """The rewrite checked (and at level 3 its model functions' layers made Keras 3's)."""
    return _keras3(_checked(text, written)) if keras3 else _checked(text, written)


def _with_lines(module: cst.Module):
    """The module as its metadata wrapper holds it, and the line of each of its nodes."""
    # The module is parsed here and held by no one else: libcst's defensive deep copy is not needed.
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    # PositionProvider run directly: through `resolve` libcst (1.9) also runs an empty visitor pass
    # that rebuilds the whole tree (as core.positions.full_positions).
    positions = PositionProvider()._gen(wrapper) if hasattr(PositionProvider, "_gen") else wrapper.resolve(PositionProvider)

    def line_of(node) -> int:
        position = positions.get(node)
        return position.start.line if position is not None else 1

    return wrapper.module, line_of


def _keras3(outcome: Outcome) -> Outcome:
    """The rewrite with its model functions' TF1 layers as Keras layers (native.keras3), where the
    upgrade succeeds; the level-2 rewrite otherwise."""
    if outcome.code is None:
        return outcome
    from tfmigrate.native.keras3 import upgrade

    try:
        result = upgrade(outcome.code)
        upgraded = _checked(result.code)
    except Exception:  # noqa: BLE001 - a defect of the upgrade: the level-2 rewrite stands
        return outcome
    return Outcome(upgraded.code, None, tuple(result.kept)) if upgraded.code is not None else outcome


def _checked(text: str, source: Optional[str] = None) -> Outcome:
    """The rewrite, unless it does not parse; tidied (native.tidy), given the `source` it was
    made from: less the TensorFlow imports it left unused, its names numbered for a gone name
    renamed, its feed dicts that only pass values on written where they are read."""
    if source is not None:
        from tfmigrate.native.tidy import dropped_unused, feeds_passed_on, unnumbered

        text = feeds_passed_on(unnumbered(source, dropped_unused(source, text)))
    try:
        cst.parse_module(text)
        compile(text, "<native>", "exec")
    except Exception as error:  # noqa: BLE001
        return Outcome(None, Blocker(1, f"internal: the rewrite does not parse ({error})"))
    return Outcome(text, None)
