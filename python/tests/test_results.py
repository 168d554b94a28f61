# SPDX-License-Identifier: Apache-2.0
"""The typed results against the dicts the bindings build (CPU tier: no GPU runs them here).

The bindings' C++ (python/*.cpp) is read for the keys each result dict gets, in order, and for
what each key holds (another result dict, a list of them); each result type must have those
fields, in that order, with those types. Then a dict of that shape, made from the types, must
come back from the type's conversion unchanged by dataclasses.asdict, so the JSON a caller writes
is the dict's.
"""
import ast
import dataclasses
import json
import os
import re

import pytest

from greenctx import results

PYTHON = os.path.join(os.path.dirname(__file__), "..")

# Where each result dict is built: (file, the function or binding that builds it, how its text
# ends) -> {the C++ variable holding a dict: the type made from it}.
BUILDERS = {
    ("measure.cpp", "nb::dict summary_dict(", "\n}\n"): {"d": results.Summary},
    ("measure.cpp", "nb::dict rate_dict(", "\n}\n"): {"d": results.BackgroundRate},
    ("measure.cpp", "nb::dict critical_dict(", "\n}\n"): {"d": results.CriticalStats},
    ("measure.cpp", "nb::dict result_dict(", "\n}\n"): {
        "d": results.ContentionResult, "cfg": results.ContentionConfig, "pd": results.Placement},
    ("measure.cpp", "nb::dict point_dict(", "\n}\n"): {"d": results.TunePoint},
    ("measure.cpp", "nb::object answer_dict(", "\n}\n"): {"d": results.TuneAnswer},
    ("measure.cpp", "nb::dict tune_dict(", "\n}\n"): {"d": results.TuneResult},
    ("measure_runs.cpp", "nb::dict adaptive_dict(", "\n}\n"): {
        "d": results.AdaptiveResult, "ad": results.AdaptiveAlone,
        "cd": results.AdaptiveConfiguration, "vd": results.AdaptiveVerdict},
    ("measure_runs.cpp", "nb::dict scaling_dict(", "\n}\n"): {
        "d": results.ScalingResult, "pd": results.ScalingPoint},
    ("measure_runs.cpp", '"plan_scaling",', "return out;"): {"d": results.ScalingCount},
    ("measure_runs.cpp", "nb::dict bandwidth_rate_dict(", "\n}\n"): {"d": results.BandwidthRate},
    ("measure_runs.cpp", "nb::dict bandwidth_dict(", "\n}\n"): {
        "d": results.BandwidthResult, "pd": results.BandwidthPoint},
    ("bindings.cpp", '"query_driver",', "return out;"): {"out": results.DriverInfo},
    ("bindings.cpp", '"plan_partitions",', "return out;"): {
        "out": results.PartitionPlan, "d": results.PlannedPart},
    ("bindings.cpp", '.def("stats",', "return d;"): {"d": results.PoolStats},
    ("bindings.cpp", '"verify",', "return out;"): {
        "out": results.VerifyReport, "d": results.VerifiedPartition},
}
# The helpers that make one result dict (measure.cpp, measure_runs.cpp), by the type they make.
HELPERS = {"summary_dict": results.Summary, "rate_dict": results.BackgroundRate,
           "critical_dict": results.CriticalStats, "point_dict": results.TunePoint,
           "answer_dict": results.TuneAnswer, "bandwidth_rate_dict": results.BandwidthRate,
           "rate_or_none_dict": results.BandwidthRate}


def builder_text(file, start, end):
    with open(os.path.join(PYTHON, file)) as f:
        text = f.read()
    begin = text.index(start)
    return text[begin:text.index(end, begin)]


def annotations(cls):
    """{field: annotation text} in order (NamedTuple keeps the text in a ForwardRef)."""
    return {name: getattr(a, "__forward_arg__", a) for name, a in cls.__annotations__.items()}


def test_every_result_type_is_checked_against_a_builder():
    checked = {cls for kinds in BUILDERS.values() for cls in kinds.values()}
    every = {getattr(results, n) for n in results.__all__} - {results.DriverFeature}
    assert every - checked == set()


@pytest.mark.parametrize("where", list(BUILDERS), ids=lambda w: f"{w[0]}:{w[1]}")
def test_fields_are_the_keys_the_bindings_give(where):
    text = builder_text(*where)
    types = BUILDERS[where]
    # What each list variable collects: a dict variable's type or a helper's.
    lists = {}
    for target, item in re.findall(r"\b(\w+)\.append\((\w+)", text):
        lists[target] = types.get(item) or HELPERS.get(item)
    for var, cls in types.items():
        assigned = re.findall(rf"\b{var}\[\"(\w+)\"\]\s*=\s*([^;]*);", text)
        fields = annotations(cls)
        assert [k for k, _ in assigned] == list(fields), f"{cls.__name__} against {var} in {where}"
        for key, value in assigned:
            helper = re.match(r"\s*(?:nb::object\()?(\w+_dict)\(", value)
            helper = helper or re.search(r"nb::object\((\w+_dict)\(", value)
            if helper and helper.group(1) in HELPERS:
                assert HELPERS[helper.group(1)].__name__ in fields[key], (cls.__name__, key)
            elif value in lists and lists[value] is not None:
                assert fields[key] == f"tuple[{lists[value].__name__}, ...]", (cls.__name__, key)


# --- A dict of each shape, made from the types, through the conversion and back ----------------

SCALARS = {"int": 3, "float": 2.5, "str": "text", "bool": True}


def sample(annotation):
    """A value of the annotation's type as the bindings give it: lists for tuples, dicts for the
    result types, a tuple for DriverFeature."""
    node = ast.parse(annotation, mode="eval").body
    if isinstance(node, ast.BinOp):  # X | None: the value
        return sample(ast.unparse(node.left))
    if isinstance(node, ast.Name):
        if node.id in SCALARS:
            return SCALARS[node.id]
        cls = getattr(results, node.id)
        if cls is results.DriverFeature:
            return ("native", 12040)
        return {k: sample(a) for k, a in annotations(cls).items()}
    name = ast.unparse(node.value)
    if name == "tuple":  # tuple[X, ...]: a list of two
        item = ast.unparse(node.slice.elts[0])
        return [sample(item), sample(item)]
    if name == "Mapping":  # Mapping[str, X]
        return {"feature": sample(ast.unparse(node.slice.elts[1]))}
    if name == "Literal":
        return node.slice.elts[0].value
    raise AssertionError(f"no sample for {annotation}")


@pytest.mark.parametrize("cls", [getattr(results, n) for n in results.__all__
                                 if n != "DriverFeature"], ids=lambda c: c.__name__)
def test_a_dict_of_the_bindings_shape_converts_and_back(cls):
    d = {k: sample(a) for k, a in annotations(cls).items()}
    r = cls._from_dict(d)
    assert isinstance(r, cls)
    assert json.dumps(dataclasses.asdict(r)) == json.dumps(d)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(r, next(iter(d)), None)
    for name, value in vars(r).items():  # nested values are typed, sequences tuples
        if isinstance(d[name], dict) and name != "features":
            assert dataclasses.is_dataclass(value), name
        if isinstance(d[name], list):
            assert isinstance(value, tuple), name


def test_strict_about_keys():
    d = {k: sample(a) for k, a in annotations(results.Summary).items()}
    with pytest.raises(TypeError):
        results.Summary._from_dict(dict(d, extra=1))
    del d["p99"]
    with pytest.raises(TypeError):
        results.Summary._from_dict(d)


def test_lookups_by_name():
    d = {k: sample(a) for k, a in annotations(results.ContentionResult).items()}
    d["placements"][1]["name"] = "green"
    r = results.ContentionResult._from_dict(d)
    assert r.placement("green") is r.placements[1]
    with pytest.raises(KeyError, match="'trap' was measured: text, green"):
        r.placement("trap")
    d = {k: sample(a) for k, a in annotations(results.AdaptiveResult).items()}
    r = results.AdaptiveResult._from_dict(d)
    assert r.configuration("text") is r.configurations[0]


def test_driver_features_unpack_as_pairs():
    info = results.DriverInfo._from_dict(
        {"version": 13000, "library": "libcuda.so.1",
         "features": {"heterogeneous_split": ("greenctx", 13010)}})
    status, since = info.features["heterogeneous_split"]
    assert (status, since) == ("greenctx", 13010)
    assert info.features["heterogeneous_split"].status == "greenctx"
