"""Property-based robustness of the engine: on generated TF1 modules and on mutated real code,
`check_source` and `fix_source` never raise and never report an internal error (TFM000), and
every fix leaves code that parses, is a fixed point, and has nothing left to fix at the
applicability it was applied with.

The generated modules come from tests/fuzz_snippets.py. The real code is a deterministic sample
of the downloaded corpus (.corpus/, see scripts/fetch_corpus.py); those tests are skipped when it
is absent. Everything runs derandomized, so CI sees the same examples on every run.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from fuzz_snippets import tf1_modules
from tfmigrate.catalogue import select
from tfmigrate.catalogue import INTERNAL_ERROR, PARSE_ERROR
from tfmigrate.core.engine import check_source, fix_source

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / ".corpus"
PATH = "fuzz.py"
CODES = {"default": select(), "all": select(["ALL"])}

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _internal_errors(findings) -> List[str]:
    return [f"{f.rule} line {f.line}: {f.message}" for f in findings if f.rule == INTERNAL_ERROR]


def _fixable(findings, unsafe: bool):
    return [
        f for f in findings
        if f.fix is not None and f.fix.edits and (unsafe or f.fix.applicability == "safe")
    ]


def _parses(data: bytes) -> str:
    try:
        cst.parse_module(data)
        return ""
    except Exception as error:  # any libcst failure means the fix wrote broken code
        return f"{type(error).__name__}: {error}"


def assert_engine_properties(data: bytes, codes, fix_modes=(False, True)) -> None:
    """The full property on one input; raises AssertionError naming the first broken one."""
    findings = check_source(data, PATH, codes)  # must not raise
    assert not _internal_errors(findings), f"check_source reported internal errors: {_internal_errors(findings)}"
    original_parses = not any(f.rule == PARSE_ERROR for f in findings)
    for unsafe in fix_modes:
        mode = "unsafe" if unsafe else "safe"
        result = fix_source(data, PATH, codes, unsafe=unsafe)  # must not raise
        errors = _internal_errors(result.findings)
        assert not errors, f"fix_source({mode}) reported internal errors: {errors}"
        final = data if result.fixed is None else result.fixed
        if result.fixed is not None:
            note(f"fixed ({mode}):\n{result.fixed.decode('utf-8', 'replace')}")
            broken = _parses(result.fixed)
            assert not broken, f"fix_source({mode}) wrote code that does not parse: {broken}"
            again = fix_source(result.fixed, PATH, codes, unsafe=unsafe)
            assert again.fixed is None, (
                f"fix_source({mode}) is not at a fixed point: a second run changed\n"
                f"{result.fixed.decode('utf-8', 'replace')}\ninto\n{again.fixed.decode('utf-8', 'replace')}"
            )
        after = check_source(final, PATH, codes)
        errors = _internal_errors(after)
        assert not errors, f"check_source on the {mode}-fixed code reported internal errors: {errors}"
        if original_parses:
            unparsed = [f.message for f in after if f.rule == PARSE_ERROR]
            assert not unparsed, f"the {mode}-fixed code is reported unparseable: {unparsed}"
        left = [(f.rule, f.line, f.column, f.fix.applicability, f.fix.description) for f in _fixable(after, unsafe)]
        assert not left, f"after fix_source({mode}), findings with an applicable fix remain: {left}"


# ---------------------------------------------------------------------------------------------
# 1. Generated TF1 modules.

@settings(FUZZ, max_examples=int(os.environ.get("TFMIGRATE_FUZZ_EXAMPLES", "300")))
@given(data=tf1_modules(), codes=st.sampled_from(sorted(CODES)))
def test_generated_tf1_modules(data, codes):
    note(f"module:\n{data.decode('utf-8', 'replace')}")
    assert_engine_properties(data, CODES[codes])


# ---------------------------------------------------------------------------------------------
# 2. Mutated real code from the corpus.

SAMPLE_SIZE = 40
MAX_FILE_BYTES = 24_000  # keeps one example (check + fix) well under a second


def _corpus_sample() -> List[Path]:
    corpus_list = ROOT.parent / "shared" / "corpus.txt"
    if corpus_list.exists() and os.environ.get("TFMIGRATE_SKIP_CORPUS") != "1":
        import sys

        sys.path.insert(0, str(ROOT / "scripts"))
        from fetch_corpus import main as fetch  # a no-op when already downloaded

        fetch(["--corpus-file", str(corpus_list), "--dest", str(CORPUS)])
    if not CORPUS.is_dir():
        return []
    candidates = []
    for path in sorted(CORPUS.rglob("*.py")):
        try:
            size = path.stat().st_size
            if not 200 <= size <= MAX_FILE_BYTES:
                continue
            if b"tensorflow" in path.read_bytes():
                candidates.append(path)
        except OSError:
            continue
    if len(candidates) <= SAMPLE_SIZE:
        return candidates
    step = len(candidates) / SAMPLE_SIZE  # evenly spread over the packages, same files every run
    return [candidates[int(i * step)] for i in range(SAMPLE_SIZE)]


SAMPLE = _corpus_sample()
needs_corpus = pytest.mark.skipif(not SAMPLE, reason="no downloaded corpus in .corpus/ (scripts/fetch_corpus.py)")

MUTATIONS = ("drop_line", "swap_lines", "truncate", "duplicate_line", "insert_byte", "reindent_line")


@st.composite
def mutated_corpus_files(draw):
    index = draw(st.integers(0, len(SAMPLE) - 1))
    path = SAMPLE[index]
    data = path.read_bytes()
    steps = draw(st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**31), st.integers(0, 2**31),
                                    st.integers(0, 255)), min_size=1, max_size=3))
    done = []
    for kind, a, b, byte in steps:
        data = mutate(data, kind, a, b, byte)
        done.append(kind)
    return str(path.relative_to(CORPUS)), done, data


def mutate(data: bytes, kind: str, a: int, b: int, byte: int) -> bytes:
    lines = data.splitlines(keepends=True) or [b""]
    i, j = a % len(lines), b % len(lines)
    if kind == "drop_line":
        del lines[i]
    elif kind == "swap_lines":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "truncate":
        return data[: a % (len(data) + 1)]
    elif kind == "duplicate_line":
        lines.insert(i, lines[i])
    elif kind == "insert_byte":
        at = a % (len(data) + 1)
        return data[:at] + bytes([byte]) + data[at:]
    elif kind == "reindent_line":
        line = lines[i]
        body = line.lstrip(b" \t")
        indent = [b"", b" ", b"  ", b"    ", b"\t", b"        ", b" \t", b"\t    "][byte % 8]
        extra = line[: len(line) - len(body)]
        lines[i] = (extra + indent if b % 2 else indent) + body
    return b"".join(lines)


@needs_corpus
@settings(FUZZ, max_examples=int(os.environ.get("TFMIGRATE_FUZZ_CORPUS_EXAMPLES", "150")))
@given(case=mutated_corpus_files(), unsafe=st.booleans())
def test_mutated_corpus_files(case, unsafe):
    name, mutations, data = case
    note(f"{name} after {mutations}")
    codes = CODES["default"]
    findings = check_source(data, name, codes)
    assert not _internal_errors(findings), f"{name}: check_source reported internal errors: {_internal_errors(findings)}"
    if not _fixable(findings, unsafe):
        return
    result = fix_source(data, name, codes, unsafe=unsafe)
    errors = _internal_errors(result.findings)
    assert not errors, f"{name}: fix_source(unsafe={unsafe}) reported internal errors: {errors}"
    if result.fixed is not None:
        broken = _parses(result.fixed)
        assert not broken, f"{name}: fix_source(unsafe={unsafe}) wrote code that does not parse: {broken}"


@needs_corpus
def test_the_corpus_sample_is_the_expected_size():
    assert len(SAMPLE) == SAMPLE_SIZE, [str(p) for p in SAMPLE]
