"""Regenerate the rule table in README.md from rules.yaml (between the rules markers)."""
import re
from pathlib import Path

from tfmigrate.report import rules_markdown

README = Path(__file__).resolve().parent.parent / "README.md"
text = README.read_text(encoding="utf-8")
new = re.sub(
    r"(<!-- rules:start -->\n).*?(<!-- rules:end -->)",
    lambda m: m.group(1) + rules_markdown() + m.group(2),
    text,
    flags=re.DOTALL,
)
README.write_text(new, encoding="utf-8")
print("README rule table updated" if new != text else "README rule table already up to date")
