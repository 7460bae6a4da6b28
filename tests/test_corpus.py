"""Real TF1 code: the packages pinned in ../shared/corpus.txt are downloaded (into .corpus/, never
committed) and checked and fixed whole. No rule may crash, no file that CPython parses may be
reported unparseable, and every fix must leave a file that parses and is at a fixed point.
"""
import ast
import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from fixtures_lib import lines_outside_edits

ROOT = Path(__file__).resolve().parent.parent
CORPUS_LIST = ROOT.parent / "shared" / "corpus.txt"

pytestmark = pytest.mark.skipif(
    not CORPUS_LIST.exists() or os.environ.get("TFMIGRATE_SKIP_CORPUS") == "1",
    reason="needs ../shared/corpus.txt and network access to PyPI",
)


@pytest.fixture(scope="module")
def corpus_files():
    sys.path.insert(0, str(ROOT / "scripts"))
    from fetch_corpus import main as fetch

    folders = fetch(["--corpus-file", str(CORPUS_LIST), "--dest", str(ROOT / ".corpus")])
    files = sorted(p for folder in folders for p in folder.rglob("*.py"))
    assert len(files) > 800
    return files


def _parses_in_cpython(data: bytes) -> bool:
    try:
        ast.parse(data)
        return True
    except (SyntaxError, ValueError):
        return False


def test_check_and_fix_the_whole_corpus(corpus_files):
    import libcst as cst

    from tfmigrate.catalogue import select
    from tfmigrate.core.engine import check_source, fix_source

    codes = select()
    per_rule = Counter()
    problems = []
    for path in corpus_files:
        data = path.read_bytes()
        shown = str(path.relative_to(ROOT / ".corpus"))
        findings = check_source(data, shown, codes)
        per_rule.update(f.rule for f in findings)
        for f in findings:
            if f.rule == "TFM000":
                problems.append(f"{shown}: {f.message}")
            if f.rule == "TFM001" and _parses_in_cpython(data):
                problems.append(f"{shown}:{f.line}: parses in CPython but reported: {f.message}")
        if not any(f.fix is not None for f in findings):
            continue
        result = fix_source(data, shown, codes, unsafe=True, record=True)
        for before, after, spans in result.passes:
            outside = lines_outside_edits(before, after, spans)
            if outside:
                problems.append(f"{shown}: a fix changed lines outside its edits: {outside[:2]}")
        if result.fixed is not None:
            try:
                cst.parse_module(result.fixed)
            except Exception as error:
                problems.append(f"{shown}: fixed file does not parse: {error}")
            again = fix_source(result.fixed, shown, codes, unsafe=True)
            if again.fixed is not None:
                problems.append(f"{shown}: not a fixed point after one fix run")
    print("\nfindings per rule on the corpus:", json.dumps(dict(sorted(per_rule.items()))))
    assert not problems, "\n".join(problems[:50])
