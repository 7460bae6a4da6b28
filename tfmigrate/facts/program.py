"""How a module will run under TensorFlow 2.21, decided once per module from evidence.

TF1 graph code (placeholders, sessions, collections, queues, summary writers: a graph built,
then run) runs under TF 2.21 only as a whole, through `tf.compat.v1` with v2 behaviour turned
off: fixed call by call it ends up half graph, half eager, and the first placeholder raises. So
every rule and the engine read this one decision: a graph module goes the compat route as a
whole (TFM200's fix), and per-call fixes that are right only in eager code are not offered there.

Word matches on the source, anchored on the module's own TensorFlow aliases: cheap (no walk),
and the same whatever rules are selected.
"""
from __future__ import annotations

import bisect
import re
from functools import cached_property, lru_cache
from typing import List, Optional, Tuple

import libcst as cst

from tfmigrate.facts.graph_words import (EAGER_ON_CALL, EAGER_TRAINING_CALL, GRAPH_CALLS_TEXT, GRAPH_ONLY_TEXT, GRAPH_WORD,
                                        LEGACY_KERAS_SET, LEGACY_KERAS_VARIABLE, RNN_RUNNERS_TEXT, TF1_ONLY_BASE,
                                        TRACED_COLLECTIONS, V2_OFF_CALL)
from tfmigrate.facts.eager_functions import library_only
from tfmigrate.facts.keras_classes import KerasClasses
from tfmigrate.facts.names import dotted, normalize
from tfmigrate.facts.source_search import SourceSearch

_DECISIVE = re.compile(rf"(?:{GRAPH_ONLY_TEXT})$|feed_dict=$|^(?:test_|cached_)?session\(\)$")  # (test sessions unaliased)
_RNN_RUNNER = re.compile(rf"(?:{RNN_RUNNERS_TEXT})$")
# A class statement's bases (up to the closing parenthesis: no nested calls), where a TF1-only
# base class is looked for.
_CLASS_BASES = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^()]*)\)[ \t]*:", re.MULTILINE)
# A tf.test.TestCase running its graph in a session: `test_session()` is TF1's alone; TF2's tests
# use `cached_session()` / `session()` too, with `self.evaluate`, so those count with a `.run(`.
_TEST_SESSION = re.compile(r"\bself\s*\.\s*(test_session|cached_session|session)\s*\(")
_SESSION_RUN = re.compile(r"sess(?<!\wsess)\w*\s*\.\s*run\s*\(")  # \bsess, said so that re scans for "sess"
# Under Keras 3 these exist only with TensorFlow's legacy Keras (the tf-keras package).
_LEGACY_KERAS = r"layers\.\w+|nn\.rnn_cell\.\w+|contrib\.rnn\.\w+|keras\.[\w.]+"
# A line at column 0 (a top-level statement, not a def or class) that makes or enters a session.
_TOP_LEVEL_SESSION = re.compile(r"^(?!def\b|class\b|async\b|@)[^\s#][^\n]*\bSession\s*\(", re.MULTILINE)
_MAIN = re.compile(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:|\bapp\.run\s*\(""", re.MULTILINE)

# Strings and comments in source order; group 1 is set for a triple-quoted string (to its end, or
# the end of the text). core.positions reads them too.
STRINGS_AND_COMMENTS = re.compile(
    r"""(\"\"\"|\'\'\')[\s\S]*?(?:\1|$)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|#[^\n]*""")


def code_only(source: str) -> str:
    """`source` with its strings and comments blanked (newlines kept): a regex over code reads the
    same offsets and lines as the source."""
    return STRINGS_AND_COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), source)


LEGACY_KERAS_LINE = 'os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")'


@lru_cache(maxsize=1024)
def _spelled_pattern(aliases: Tuple[str, ...], words: str) -> re.Pattern:
    """`words` after one of the aliases (compiled once per run: most files share their aliases)."""
    # `\b` before the alias, said after it: `tf(?<!\wtf)` matches where `\btf` does (an alias
    # starts with a word character), but a pattern that starts with a literal lets `re` scan for
    # it instead of trying every offset (136 -> 7 ms over tensor2tensor's files).
    heads = "|".join(f"{re.escape(a)}(?<!\\w{re.escape(a)})" for a in aliases)
    return re.compile(rf"(?:{heads})\s*\.\s*(?:compat\s*\.\s*v1\s*\.\s*)?({words})\b")


_GRAPH_ONLY_PATH = re.compile(rf"(?:{GRAPH_ONLY_TEXT})(?:\.|$)")


def graph_only(path: str) -> bool:
    """Whether the API path (`placeholder`, `train.Saver`) needs a TF1 graph to work."""
    return _GRAPH_ONLY_PATH.match(path) is not None


def mentions_graph_mode(ctx) -> bool:
    """Whether the file shows any sign of TF1 graph mode (a word match: conservative; a fix
    that is right only in eager code, such as removing an initializer run, is then off)."""
    return ctx.fact(SourceSearch).found(GRAPH_WORD)


# TF1's variables, which TF2 removed from `tf`: a module spelling them through TensorFlow's own
# alias (not `tf.compat.v1`) was written for TF1, graph mode or not (a library of model functions).
_TF1_VARIABLE_WORDS = "get_variable|get_local_variable|variable_scope|get_variable_scope|AUTO_REUSE"


@lru_cache(maxsize=64)
def _plain_tf1_variables(aliases: Tuple[str, ...]) -> re.Pattern:
    heads = "|".join(f"{re.escape(a)}(?<!\\w{re.escape(a)})" for a in aliases)
    return re.compile(rf"(?:{heads})\s*\.\s*(?:{_TF1_VARIABLE_WORDS})\b")


def written_for_tf1(ctx) -> bool:
    """Whether the module is TF1 code by evidence: graph mode (mentions_graph_mode), a checked
    graph module importing it (its ops run in that graph: `fix` routes it with it, `fix --native`
    may not), or TF1's variables spelled `tf.get_variable` / `tf.variable_scope`. A `tf.X` that
    TF2 redefined (`tf.random_normal_initializer`, `tf.where`) then meant TF1's."""
    if mentions_graph_mode(ctx) or ctx.imported_by is not None or ctx.names.tf1_user is not None:
        return True
    aliases = tuple(sorted(local for local, target in ctx.names.aliases.items() if target == "tensorflow"))
    return bool(aliases) and ctx.fact(SourceSearch).found(_plain_tf1_variables(aliases))


class ProgramMode:
    """The module's TensorFlow imports and the evidence that it is TF1 graph code."""

    needs = (KerasClasses,)

    def __init__(self, ctx):
        self.module = ctx.module
        self.source = ctx.source
        self.names = ctx.names
        self._ctx = ctx  # for its Keras classes, asked only where a match may sit in one
        self.imported_by = ctx.imported_by  # a checked graph module imports this one (graph_imports)

    @cached_property
    def _class_blocks(self) -> List[Tuple[int, int, str]]:
        """(start, end, name) of every class statement's text, by indentation (no walk)."""
        if "class" not in self.source:
            return []
        blocks = []
        for match in re.finditer(r"^([ \t]*)class[ \t]+(\w+)\b[^\n]*$", self.source, re.MULTILINE):
            indent = len(match.group(1).expandtabs())
            end = len(self.source)
            for line in re.finditer(r"^([ \t]*)(\S)[^\n]*$", self.source[match.end():], re.MULTILINE):
                if line.group(2) != "#" and len(line.group(1).expandtabs()) <= indent:
                    end = match.end() + line.start()
                    break
            blocks.append((match.start(), end, match.group(2)))
        return blocks

    @cached_property
    def _keras_names(self) -> frozenset:
        kinds = self._ctx.fact(KerasClasses)
        return frozenset(name for name, node in kinds.classes.items() if kinds.kind(node))  # its module_classes

    def _in_keras_class(self, pos: int) -> bool:
        """Inside a Keras Model/Layer class: TF1 calls there are leftovers in TF2 code (TFM101
        builds their layers in `__init__`), not graph evidence. Keras-ness is asked only for a
        class that holds a match."""
        return any(start <= pos < end and name in self._keras_names for start, end, name in self._class_blocks)

    @cached_property
    def _not_code(self) -> List[Tuple[int, int]]:
        """(start, end) offsets of strings and comments, where a word is not evidence: one
        regex pass in source order (a tenth of what `tokenize` costs)."""
        return [m.span() for m in STRINGS_AND_COMMENTS.finditer(self.source)]

    def _is_code(self, pos: int) -> bool:
        if self._in_keras_class(pos):
            return False
        spans = self._not_code  # in source order, not overlapping
        i = bisect.bisect_right(spans, (pos, float("inf"))) - 1
        return i < 0 or not spans[i][0] <= pos < spans[i][1]


    @cached_property
    def _tf_aliases(self) -> Tuple[str, ...]:
        return tuple(self.names.tensorflow_aliases())

    def _spelled(self, words: str) -> Optional[re.Pattern]:
        if not self._tf_aliases:
            return None
        return _spelled_pattern(self._tf_aliases, words)

    @cached_property
    def evidence(self) -> List[Tuple[int, str]]:
        """(line, what) of the TF1 graph constructs, first use of each, in source order."""
        pattern = self._spelled(GRAPH_CALLS_TEXT)
        found, seen = [], set()
        matches = list(pattern.finditer(self.source)) if pattern else []
        # Each `in` test below is a substring every match holds: a regex that starts with `\b` has no
        # literal prefix for `re` to scan for, so it tries every offset of the file (0.2 ms per file).
        feed = re.search(r"\bfeed_dict\s*=(?!=)", self.source) if "feed_dict" in self.source else None
        if feed and re.match(r"[ \t]*$", self.source[self.source.rfind("\n", 0, feed.start()) + 1:feed.start()]):
            feed = re.search(r"[(,]\s*\bfeed_dict\s*=(?!=)", self.source)  # `feed_dict = {...}`: a name only
        if feed:
            matches.append(feed)
        if self._tf_aliases and "session" in self.source:
            runs = None
            for test in _TEST_SESSION.finditer(self.source):
                if test.group(1) != "test_session":
                    runs = runs if runs is not None else _SESSION_RUN.search(self.source) is not None
                    if not runs:
                        continue
                matches.append(test)
        for match in sorted(matches, key=lambda m: m.start()):
            start = match.start()
            what = ("feed_dict=" if "feed_dict" in match.re.pattern else
                    f"self.{match.group(1)}()" if match.re is _TEST_SESSION else _squash(match.group(0)))
            if what in seen or (start and self.source[start - 1] == ".") or not self._is_code(start):
                continue  # seen already; `self.tf.X` is not the module; a string or a comment
            seen.add(what)
            found.append((self.source.count("\n", 0, start) + 1, what))
        bases = [(self.source.count("\n", 0, start) + 1, what) for start, what in self._tf1_bases() if self._is_code(start)]
        if bases:
            found = sorted(found + bases, key=lambda item: (item[0], not item[1].startswith("class ")))
        if self.imported_by is not None and self._tf_aliases and not any(
                self._decisive(what) for _, what in found):
            # A helper of graph code (TF1-style `variable_scope`s or no construct at all) runs in
            # the importer's graph: graph code too.
            found.append((0, f"imported by the graph module {self.imported_by}"))
        return found

    def _tf1_bases(self) -> List[Tuple[int, str]]:
        """(offset, `class X(base)`) of the classes whose base is a TF1-only class
        (graph_words.TF1_ONLY_BASES: `tf.nn.rnn_cell.MultiRNNCell`, `tf.layers.Layer`, or a name
        imported from one): the class statement runs at import, and only the compat route has
        that base under TensorFlow 2.21."""
        if "class" not in self.source or not self.names.aliases:
            return []
        found = []
        for match in _CLASS_BASES.finditer(self.source):
            for base in match.group(2).split(","):
                base = _squash(base)
                if not base or "=" in base or base.startswith("*") or not re.fullmatch(r"[\w.]+", base):
                    continue
                head, _, rest = base.partition(".")
                target = self.names.aliases.get(head)
                api = normalize(f"{target}.{rest}" if rest else target) if target else None
                if api is not None and TF1_ONLY_BASE.fullmatch(api):
                    found.append((match.start(2), f"class {match.group(1)}({base})"))
                    break
        return found

    def _decisive(self, what: str) -> bool:
        """Whether this evidence alone makes the module graph code: a graph-only construct, a
        TF1-only base class, or an RNN run over time (`dynamic_rnn`) in a module that does not
        turn eager execution on."""
        bare = _unaliased(what)
        if bare in TRACED_COLLECTIONS and self._eager_on:
            return False  # (TF2 code's collections, in its `tf.function`s: evidence, not decisive)
        if _DECISIVE.search(bare) or what.startswith("class "):
            return True
        return _RNN_RUNNER.search(bare) is not None and not self._eager_on

    @cached_property
    def _eager_on(self) -> bool:
        """It turns eager execution on, or trains with `GradientTape` or decorates `tf.function`s (TF2
        code, `fix --native`'s output among it, whose `dynamic_rnn` runs eagerly: an evaluation-only
        rewrite has no tape)."""
        source = self.source
        return ("enable_" in source and EAGER_ON_CALL.search(source) is not None) or (
            ("GradientTape" in source or "function" in source) and EAGER_TRAINING_CALL.search(source) is not None)

    @cached_property
    def graph(self) -> bool:
        """TF1 graph code by evidence: a graph-only construct (or a TF1-only base class, an RNN
        run by `dynamic_rnn`), v2 behaviour turned off, or imported by graph code."""
        return (self.v2_disabled and bool(self.evidence)) or any(not line or self._decisive(what) for line, what in self.evidence)

    @cached_property
    def graph_by_import(self) -> bool:
        """Graph code only because graph code imports it (no graph construct of its own)."""
        return self.graph and any(not line for line, _ in self.evidence)

    @cached_property
    def library_only(self) -> bool:
        """A library of graph programs (facts.eager_functions.library_only): with `--native` its
        programs turn v2 behaviour off themselves, and an eager test may call it."""
        return library_only(self.source.encode("utf-8"))

    @cached_property
    def v2_disabled(self) -> bool:
        """The module turns TF2 behaviour off (so `tf.compat.v1` graph code runs in it), or a
        module it star-imports its `tf` from does, on import (star_imports)."""
        return ("disable_" in self.source and V2_OFF_CALL.search(self.source) is not None) or "v2_off" in self.names.star_program

    @cached_property
    def needs_legacy_keras(self) -> bool:
        """It uses `tf.layers`, `tf.nn.rnn_cell` or `tf.keras` in graph code: TF 2.21 runs those
        there only with TensorFlow's legacy Keras (the tf-keras package, TF_USE_LEGACY_KERAS=1).
        Or a module that gets its TensorFlow through a star import of this one does
        (star_imports.legacy_keras_wanted): the program's first TensorFlow import is here."""
        if self.graph and self.names.legacy_keras_for is not None:
            return True
        if self.graph and any(target.startswith(("tensorflow.contrib.rnn", "tensorflow.nn.rnn_cell", "tensorflow.layers"))
                              for target in self.names.aliases.values()):
            return True  # `from tensorflow.contrib import rnn`
        pattern = self._spelled(_LEGACY_KERAS)
        return self.graph and pattern is not None and any(
            self._is_code(m.start()) for m in pattern.finditer(self.source))

    @cached_property
    def model_mapping(self) -> bool:
        """TF1 model code kept on TensorFlow's model-mapping route: the module runs it under
        `track_tf1_style_variables` with legacy Keras (what `fix --native` writes), where
        `tf.compat.v1.layers` and `get_variable` make their variables once."""
        return self.legacy_keras_set and "track_tf1_style_variables" in self.source

    @cached_property
    def legacy_keras_set(self) -> bool:
        return (LEGACY_KERAS_VARIABLE in self.source and LEGACY_KERAS_SET.search(self.source) is not None) \
            or "legacy_keras" in self.names.star_program

    @property
    def on_compat_route(self) -> bool:
        """Graph code that already runs the official way: v2 behaviour off (or, with `--native`,
        left to the programs that run it), legacy Keras on where it needs it."""
        return (self.v2_disabled or self.v2_left_to_programs) and (self.legacy_keras_set or not self.needs_legacy_keras)

    @cached_property
    def switch_left_to_programs(self) -> bool:
        """With `--native`, the compat route of this module leaves `disable_v2_behavior()` to the
        programs that run its graph code (fixers.compat_route): a helper that a script rewritten
        as eager TF2 may import, or a library of graph programs."""
        return self._ctx.native and (self.graph_by_import or self.library_only)

    @cached_property
    def v2_left_to_programs(self) -> bool:
        """A graph library routed through `tensorflow.compat.v1` whose switch is left to its
        programs (`switch_left_to_programs`): they turn v2 behaviour off where they start, so its
        TF1 API runs as debt, not as a break (measured: gen55 p04's `input_pipeline.py`, zhusuan's
        `evaluation.py`)."""
        if not (self.graph and self.switch_left_to_programs):
            return False
        imported = [(dotted(alias.name) or "") for _, alias, local in self.tf_imports() if local is not None]
        return bool(imported) and all(name == "tensorflow.compat.v1" for name in imported)

    @cached_property
    def entry(self) -> bool:
        """Where the program starts: a `__main__` guard, `tf.app.run`, or a session made at the
        top level of the module."""
        source = self.source
        return (("__name__" in source or "app.run" in source) and _MAIN.search(source) is not None) or (
            "Session" in source and any(self._is_code(m.start()) for m in _TOP_LEVEL_SESSION.finditer(source)))

    def tf_imports(self) -> List[Tuple[cst.SimpleStatementLine, cst.CSTNode, Optional[str]]]:
        """The module's top-level TensorFlow import statements, in order, as (statement, the
        imported name's node, the local name a plain `import tensorflow[.compat.v1] [as x]`
        binds, else None): where the compat route is anchored."""
        found = []
        for stmt in self.module.body:
            if type(stmt) is not cst.SimpleStatementLine:
                continue
            for small in stmt.body:
                if type(small) is cst.Import:
                    for alias in small.names:
                        name = dotted(alias.name) or ""
                        if name in ("tensorflow", "tensorflow.compat.v1"):
                            local = alias.asname.name.value if alias.asname is not None else (
                                "tensorflow" if name == "tensorflow" else None)
                            found.append((stmt, alias, local))
                        elif name.startswith("tensorflow."):
                            found.append((stmt, alias, None))
                elif type(small) is cst.ImportFrom and small.module is not None and not small.relative \
                        and (dotted(small.module) or "").split(".")[0] == "tensorflow":
                    found.append((stmt, small.module, None))
        return found


def _unaliased(what: str) -> str:
    """`tf.compat.v1.train.Saver` -> `train.Saver` (what the evidence patterns name)."""
    return re.sub(r"^\w+\.(?:compat\.v1\.)?", "", what)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)
