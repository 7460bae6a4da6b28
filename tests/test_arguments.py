"""fixers/arguments.joined, the one builder of a rewritten call's argument list (issue 12): a
keyword dropped or added keeps the call's commas, and its trailing comma or the lack of one."""
import libcst as cst
import pytest

from tfmigrate.fixers.arguments import joined, keyword


def _drop(code: str, name: str, add=None) -> str:
    call = cst.parse_expression(code)
    args = [a for a in call.args if a.keyword is None or a.keyword.value != name]
    if add is not None:
        args.append(keyword(add, cst.parse_expression("None")))
    return cst.Module([]).code_for_node(call.with_changes(args=joined(call, args)))


@pytest.mark.parametrize("code, name, add, expected", [
    ("f(x, use_locking=True)", "use_locking", None, "f(x)"),
    ("f(use_locking=True, x=1)", "use_locking", None, "f(x=1)"),
    ("f(x, a=1)", "missing", "dim", "f(x, a=1, dim=None)"),
    ("f()", "missing", "dim", "f(dim=None)"),
    ("f(x, a=1,)", "a", None, "f(x,)"),
    ("f(\n    x,\n    a=1,\n)", "a", None, "f(\n    x,\n)"),
    ("f(\n    x,\n    a=1\n)", "a", None, "f(\n    x)"),  # the newline was the dropped argument's
])
def test_joined_keeps_the_calls_commas(code, name, add, expected):
    assert _drop(code, name, add) == expected
    compile(expected, "<fix>", "eval")
