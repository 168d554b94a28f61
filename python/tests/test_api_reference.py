# SPDX-License-Identifier: Apache-2.0
"""The API reference in docs/python.md is the module's: every public name, no other, each with its
module's signature (CPU tier).

The reference is Python code: ``def`` lines for functions and methods, classes with their members
(``name: type`` for a field or a property), aliases as assignments. What each is compared with:
the functions and classes written in Python with ``inspect`` (``__annotations__`` for the result
types' fields), the compiled ones with the committed stub ``_greenctx.pyi`` (itself compared with
what nanobind's stubgen makes, in test_cpu.py), the aliases by value. Comments are free prose.
"""
import ast
import copy
import dataclasses
import inspect
import os
import re
import typing

import pytest

import greenctx

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOC = os.path.join(ROOT, "docs", "python.md")
STUB = os.path.join(ROOT, "python", "greenctx", "_greenctx.pyi")
# Members of compiled classes the reference leaves out: how they print.
UNLISTED = {"__repr__", "__str__"}


def reference_section():
    with open(DOC) as f:
        text = f.read()
    m = re.search(r"^## API reference\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, "docs/python.md has no '## API reference' section"
    return m.group(1)


def documented():
    """{name: [top-level node, ...]} of the reference's Python blocks (overloads share a name)."""
    out = {}
    for block in re.findall(r"^```python\n(.*?)^```", reference_section(), re.M | re.S):
        for node in ast.parse(block).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                out.setdefault(node.targets[0].id, []).append(node)
            else:
                raise AssertionError(f"the reference has a statement that names nothing: "
                                     f"{ast.unparse(node)}")
    return out


def stub():
    """{name: [top-level node, ...]} of the compiled module's stub."""
    with open(STUB) as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append(node)
    return out


def bare(node, decorators=True):
    """A def as text without its body (and, with decorators=False, without decorators)."""
    node = copy.copy(node)
    node.body = [ast.Expr(ast.Constant(...))]
    if not decorators:
        node.decorator_list = []
    return ast.unparse(node)


def normal(annotation):
    """An annotation as the stub and the reference write it (the source's text, re-printed).
    Postponed annotations are that text; NamedTuple keeps it in a ForwardRef."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    return ast.unparse(ast.parse(annotation, mode="eval"))


class _Text:
    """Prints as the annotation text it holds: inspect then prints a signature as source."""

    def __init__(self, text):
        self.text = normal(text)

    def __repr__(self):
        return self.text


def python_def(name, function):
    """A function written in Python as a def without body, from inspect.signature."""
    sig = inspect.signature(function)
    text = lambda a: a if a is inspect.Parameter.empty else _Text(a)  # noqa: E731
    sig = sig.replace(parameters=[p.replace(annotation=text(p.annotation))
                                  for p in sig.parameters.values()],
                      return_annotation=text(sig.return_annotation))
    return ast.unparse(ast.parse(f"def {name}{sig}: ..."))


def members(node):
    """A class's members: fields and properties as {name: annotation text}, other methods as
    {name: [def node, ...]}, assignments (enum members) as {name: value text}."""
    fields, methods, values = {}, {}, {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign):
            fields[item.target.id] = ast.unparse(item.annotation)
        elif isinstance(item, ast.FunctionDef):
            decorators = [ast.unparse(d) for d in item.decorator_list]
            if "property" in decorators:
                fields[item.name] = ast.unparse(item.returns)
            elif not any(d.endswith(".setter") for d in decorators):
                methods.setdefault(item.name, []).append(item)
        elif isinstance(item, ast.Assign):
            values[item.targets[0].id] = ast.unparse(item.value)
    return fields, methods, values


def test_every_public_name_is_in_the_reference_and_no_other():
    names = documented()
    assert sorted(set(greenctx.__all__) - set(names)) == [], "public names the reference lacks"
    assert sorted(set(names) - set(greenctx.__all__)) == [], "names the reference has, not public"
    assert len(greenctx.__all__) == len(set(greenctx.__all__))
    public = {n for n in vars(greenctx) if not n.startswith("_")}
    imported = {"annotations", "results", "TYPE_CHECKING"} | set(typing.__all__)
    assert sorted(public - set(greenctx.__all__) - imported) == [], "public but not in __all__"


def check_python_class(name, cls, node):
    fields, methods, _ = members(node)
    if dataclasses.is_dataclass(cls) or issubclass(cls, tuple):  # results and DriverFeature
        runtime = {f: normal(t) for f, t in cls.__annotations__.items()}
        assert list(fields.items()) == list(runtime.items()), f"{name}'s fields"
        listed = lambda n: not n.startswith("_")  # noqa: E731 (__init__ is the fields)
    else:  # properties
        runtime = {n: normal(p.fget.__annotations__["return"])
                   for n, p in vars(cls).items() if isinstance(p, property)}
        assert fields == runtime, f"{name}'s properties"
        listed = lambda n: not n.startswith("_") or n == "__init__"  # noqa: E731
    public = {n for n, v in vars(cls).items() if inspect.isfunction(v) and listed(n)}
    assert sorted(methods) == sorted(public), f"{name}'s methods"
    for method, (doc,) in methods.items():
        assert bare(doc, decorators=False) == python_def(method, vars(cls)[method]), \
            f"{name}.{method}"


def check_compiled_class(name, node, stub_node):
    fields, methods, values = members(node)
    stub_fields, stub_methods, stub_values = members(stub_node)
    assert fields == stub_fields, f"{name}'s properties"
    assert values == stub_values, f"{name}'s values"
    stub_methods = {m: defs for m, defs in stub_methods.items() if m not in UNLISTED}
    assert sorted(methods) == sorted(stub_methods), f"{name}'s methods"
    for method, defs in methods.items():
        assert [bare(d) for d in defs] == [bare(d) for d in stub_methods[method]], \
            f"{name}.{method}"


@pytest.mark.parametrize("name", greenctx.__all__)
def test_the_reference_has_the_module_signature(name):
    nodes = documented().get(name)
    assert nodes, f"{name} is not in the reference"
    first, value = nodes[0], getattr(greenctx, name)
    if isinstance(first, ast.Assign):  # a type alias: the same type
        namespace = dict(vars(typing), **vars(greenctx))
        assert eval(ast.unparse(first.value), namespace) == value, name
    elif isinstance(first, ast.ClassDef) and issubclass(value, BaseException):
        # The errors: the bindings create them, so only their bases can be compared.
        bases = tuple(eval(ast.unparse(b), dict(vars(greenctx))) for b in first.bases)
        assert value.__bases__ == bases, name
    elif value.__module__ == "greenctx._greenctx":  # compiled: as the stub has it
        stubbed = stub()[name]
        if isinstance(first, ast.ClassDef):
            assert len(nodes) == 1 and len(stubbed) == 1
            check_compiled_class(name, first, stubbed[0])
        else:
            assert [bare(n) for n in nodes] == [bare(n) for n in stubbed], name
    elif isinstance(first, ast.ClassDef):
        assert len(nodes) == 1
        check_python_class(name, value, first)
    else:
        assert len(nodes) == 1 and inspect.isfunction(value), name
        assert bare(first) == python_def(name, value), name
