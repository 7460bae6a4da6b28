"""tfmigrate/data/tf_signatures.json (TFM215's table) is what TensorFlow 2.21 says today."""
import subprocess
import sys
from pathlib import Path

import pytest

from tfmigrate.facts import api_table

ROOT = Path(__file__).resolve().parent.parent


def test_regenerated_signatures_are_byte_identical():
    pytest.importorskip("tensorflow")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_signatures.py"), "--check"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


def test_known_signatures():
    names, most, kwargs = api_table.call_signature("keras.optimizers.SGD")
    assert "learning_rate" in names and "lr" not in names and kwargs
    assert api_table.call_signature("summary.scalar")[0] == ("name", "data", "step", "description")
    assert "collections" in api_table.call_signature("summary.scalar", v1=True)[0]
    assert api_table.call_signature("no.such.thing") is None
