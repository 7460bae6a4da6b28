"""Generate tfmigrate/data/rules.json from rules.yaml: the same mapping as JSON, with the SHA-256
of the rules.yaml it was made from. tfmigrate reads it instead of the YAML (no PyYAML import on
start-up) while the digest matches rules.yaml; after an edit of rules.yaml it reads the YAML
until this script is run again (tests/test_catalogue.py fails meanwhile).

Usage: python scripts/gen_rules_json.py [--check]
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfmigrate.catalogue import RULES_JSON, yaml_rules  # noqa: E402


def generate() -> str:
    data = (ROOT / "rules.yaml").read_bytes()
    document = {"rules_yaml_sha256": hashlib.sha256(data).hexdigest(), "rules": yaml_rules(data.decode("utf-8"))}
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def main(argv) -> int:
    text = generate()
    if "--check" in argv:
        current = RULES_JSON.read_text(encoding="utf-8") if RULES_JSON.exists() else ""
        if current != text:
            print(f"{RULES_JSON} is stale: run python scripts/gen_rules_json.py", file=sys.stderr)
            return 1
        return 0
    RULES_JSON.write_text(text, encoding="utf-8")
    print(f"wrote {RULES_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
