"""native.class_bases: a graph class's base class of the same module read as part of it, only where
the program stays the same."""
import libcst as cst

from tfmigrate.native.class_bases import merged

BASE = '''
class Model(object):
    """Base."""

    lr = 0.1

    def add_placeholders(self):
        raise NotImplementedError

    def build(self):
        self.add_placeholders()


class Net(Model):
    lr = 0.5

    def __init__(self):
        self.build()

    def add_placeholders(self):
        self.x = 1
'''


def _classes(source: str):
    module, _ = merged(cst.parse_module(source), lambda node: 7)
    return {c.name.value: c for c in module.body if isinstance(c, cst.ClassDef)}, module


def _members(cls: cst.ClassDef):
    names = []
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            names.append(statement.name.value)
        else:
            names.append(cst.Module([]).code_for_node(statement).strip())
    return names


def test_base_with_one_subclass_is_joined_into_it():
    classes, module = _classes(BASE)
    assert list(classes) == ["Net"]
    net = classes["Net"]
    assert cst.Module([]).code_for_node(net.bases[0].value) == "object"
    # the base's members the subclass does not override first; its own after, overrides kept
    assert _members(net) == ["build", "lr = 0.5", "__init__", "add_placeholders"]
    compile(module.code, "<joined>", "exec")


def test_joined_class_keeps_the_subclass_line():
    module = cst.parse_module(BASE)
    joined, line_of = merged(module, lambda node: 7)
    net = [c for c in joined.body if isinstance(c, cst.ClassDef)][0]
    assert line_of(net) == 7


def test_base_left_when_named_elsewhere():
    for extra in ("\nother = Model()\n", "\nclass Other(Model):\n    pass\n", "\nprint(isinstance(1, Model))\n"):
        classes, _ = _classes(BASE + extra)
        assert "Model" in classes and cst.Module([]).code_for_node(classes["Net"].bases[0].value) == "Model"


def test_base_left_when_super_is_used():
    source = BASE.replace("        self.build()", "        super().__init__()\n        self.build()")
    classes, _ = _classes(source)
    assert "Model" in classes


def test_base_on_another_base_left():
    source = "class Root(object):\n    pass\n\n\n" + BASE.replace("class Model(object)", "class Model(Root)")
    classes, _ = _classes(source)
    # (Root, Model's only base, joins Model; Net's base is not on `object` alone and stays)
    assert set(classes) == {"Model", "Net"}
    assert cst.Module([]).code_for_node(classes["Net"].bases[0].value) == "Model"
