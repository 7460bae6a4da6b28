"""Reference numbers for the Estimator fixtures (tests/fixtures/TFM216/exec_estimator_*.py): TF 2.21
has no `tf.estimator`, so each original is run under a TensorFlow that has one, with its TF1 API
through `import tensorflow.compat.v1 as tf` (the program is otherwise unchanged), and prints the
line its `# fixed:` header must hold.

Set up once (a throwaway virtualenv beside the project's, PyPI only):
    python3.11 -m venv /tmp/venv215
    /tmp/venv215/bin/pip install "tensorflow-cpu==2.15.*" "tensorflow-estimator==2.15.*"
Usage: python scripts/estimator_reference.py /tmp/venv215/bin/python tests/fixtures/TFM216/exec_estimator_*.py
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def main(python: str, paths) -> int:
    failed = 0
    for path in map(Path, paths):
        source = re.sub(r"^import tensorflow as tf$", "import tensorflow.compat.v1 as tf",
                        path.read_text(encoding="utf-8"), flags=re.MULTILINE)
        expected = re.search(r"^# fixed:[ \t]*(.*)$", source, re.MULTILINE)
        with tempfile.TemporaryDirectory() as folder:
            program = Path(folder) / path.name
            program.write_text(source, encoding="utf-8")
            ran = subprocess.run([python, str(program)], capture_output=True, text=True, cwd=folder,
                                 env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        last = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ran.stderr.strip()[-500:]
        same = expected is not None and expected.group(1).strip() == last
        failed += not same
        print(f"{path.name}: {last}" + ("" if same else "   (the `# fixed:` header differs)"))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
