"""How much of a package parsing only the top-level statements that name TensorFlow would skip
(issue 23's idea, measured before being dropped): the share of top-level statements, and of their
bytes, with no TensorFlow alias in them (imports aside). An upper bound of the parse it could save.

Usage: .venv/bin/python bench/top_level_share.py .corpus/tensor2tensor-1.15.7
"""
import ast, io, re, sys, time, tokenize
from pathlib import Path
import libcst as cst

root = Path(sys.argv[1])
files = sorted(root.rglob("*.py"))
total = skippable = 0
stmts = skip_stmts = 0
for f in files:
    src = f.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(src)
    except SyntaxError:
        continue
    aliases = {"tf", "tensorflow"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if "tensorflow" in (getattr(node, "module", None) or "") or "tensorflow" in a.name:
                    aliases.add((a.asname or a.name).split(".")[0])
    words = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, sorted(aliases))))
    lines = src.splitlines(True)
    for node in tree.body:
        seg = "".join(lines[node.lineno - 1:node.end_lineno])
        total += len(seg); stmts += 1
        if not words.search(seg) and not isinstance(node, (ast.Import, ast.ImportFrom)):
            skippable += len(seg); skip_stmts += 1
print(f"{len(files)} files, {stmts} top-level statements, {total/1e6:.2f} MB")
print(f"without a TF name: {skip_stmts} statements ({skip_stmts/stmts:.1%}), {skippable/total:.1%} of the bytes")
