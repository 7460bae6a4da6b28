"""Generate tfmigrate/data/tf_signatures.json: the parameters of every public function and class
of TensorFlow 2.21 (`tf`, `tf.compat.v1`, and `tf.keras`, which is Keras 3), measured with
`inspect.signature` on the installed TensorFlow, so that the linter can tell, without importing
TensorFlow, that a call passes a keyword or more positional arguments than what it calls takes
(a TypeError waiting to happen).

    .venv/bin/python scripts/gen_signatures.py            # write the file
    .venv/bin/python scripts/gen_signatures.py --check    # exit 1 if the file is stale

Walks the same modules as scripts/gen_api_table.py (its walkers are reused). Each entry is packed
as "param param ...|max positional or *|k when it takes **kwargs", e.g. "x axis keepdims name|4|".
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import sys
import types
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tfmigrate" / "data" / "tf_signatures.json"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_api_table", ROOT / "scripts" / "gen_api_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_api_table"] = module
    spec.loader.exec_module(module)
    return module


def _packed(gen, obj):
    params = gen.signature(obj)
    if params is None:
        return None
    names = [n for n, kind, _ in params if kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    most = gen.max_positional(params)
    takes_kwargs = any(kind is inspect.Parameter.VAR_KEYWORD for _, kind, _ in params)
    return f"{' '.join(names)}|{'*' if most is None else most}|{'k' if takes_kwargs else ''}"


def _signatures(gen, root, modules):
    out = {}
    for module, names in modules.items():
        if names is None:
            continue
        base = root
        for part in module.split(".") if module else ():
            base = getattr(base, part, None)
            if base is None:
                break
        if base is None:
            continue
        for name in names:
            try:
                obj = getattr(base, name)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails is never judged
                continue
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            packed = _packed(gen, obj)
            if packed is not None:
                out[f"{module}.{name}" if module else name] = packed
    return out


def build():
    gen = _generator()
    tf, keras = gen.tf, gen.keras
    tf_sigs = _signatures(gen, tf, gen.walk_public(tf))
    keras_modules = gen.walk_keras()
    keras_root = types.SimpleNamespace(keras=importlib.import_module(tf.keras.__name__))
    tf_sigs.update(_signatures(gen, keras_root, keras_modules))
    v1_sigs = _signatures(gen, tf.compat.v1, gen.walk_public(tf.compat.v1))
    header = {"generator": "scripts/gen_signatures.py", "tensorflow": tf.__version__, "keras": keras.__version__,
              "counts": {"tf": len(tf_sigs), "v1": len(v1_sigs)}}
    return {"header": header, "tf": tf_sigs, "v1": v1_sigs}


def dumps(table) -> str:
    lines = ["{"]
    sections = list(table)
    for i, section in enumerate(sections):
        body = json.dumps(table[section], sort_keys=True, separators=(",", ":"))
        lines.append(f'"{section}":{body}' + ("," if i < len(sections) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs")
    args = parser.parse_args(argv)
    text = dumps(build())
    if args.check:
        current = OUT.read_text(encoding="ascii") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run .venv/bin/python scripts/gen_signatures.py")
            return 1
        print(f"{OUT.relative_to(ROOT)} is up to date")
        return 0
    OUT.write_text(text, encoding="ascii")
    table = json.loads(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {table['header']['counts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
