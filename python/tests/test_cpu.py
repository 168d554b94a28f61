# SPDX-License-Identifier: Apache-2.0
"""CPU tier: what works without a GPU (runs in CI)."""
import os
import re
import subprocess
import sys

import pytest

import greenctx


def project_version():
    """The version CMakeLists.txt's project() sets, the one place it is written."""
    text = open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")).read()
    return re.search(r"project\(greenctx\s+VERSION\s+([0-9.]+)", text).group(1)


def test_version_and_toolkit():
    assert greenctx.__version__ == project_version()
    cli = subprocess.run([sys.executable, "-m", "greenctx", "--version"], capture_output=True, text=True, check=True)
    assert re.fullmatch(r"greenctx " + re.escape(project_version()) + r" \(commit \S+\)\n",
                        cli.stdout), cli.stdout
    assert greenctx.toolkit_version() >= 12040
    assert greenctx.format_cuda_version(12050) == "12.5"


def test_parse_and_plan():
    r = greenctx.parse_partitions(" 16, 8 ,rest ")
    assert r.counts == [16, 8] and r.rest
    assert str(r) == "16,8,rest"
    g = greenctx.documented_granularity(9)
    plan = greenctx.plan_partitions(r, 132, g)
    assert plan.piece_size == 8 and plan.groups == 3
    assert [p.planned for p in plan.parts] == [16, 8, 108]
    assert plan.parts[0].pieces == 2 and plan.parts[1].first_piece == 2
    assert plan.parts[2].rest and plan.parts[2].requested == 0


def test_rounding_is_explained():
    size, why = greenctx.round_group_size(12, greenctx.documented_granularity(9))
    assert size == 16 and "rounded up to 16" in why
    assert greenctx.round_group_size(16, greenctx.documented_granularity(9)) == (16, "")
    assert greenctx.documented_granularity(9, 0, True).alignment == 2


@pytest.mark.parametrize("text, words", [("16,,rest", "empty"), ("0,rest", "0 SMs"),
                                         ("abc", "neither"), ("16,rest,8", "last")])
def test_bad_requests_raise_request_error(text, words):
    with pytest.raises(greenctx.RequestError) as e:
        greenctx.parse_partitions(text)
    assert words in str(e.value)
    assert e.value.code == 1  # CUDA_ERROR_INVALID_VALUE
    assert isinstance(e.value, greenctx.Error) and isinstance(e.value, RuntimeError)


def test_impossible_plans_say_why():
    with pytest.raises(greenctx.RequestError, match="132"):
        greenctx.plan_partitions(greenctx.parse_partitions("128,8"), 132,
                                 greenctx.documented_granularity(9))


def test_no_driver_raises_a_clear_error():
    # A process of its own: the driver is loaded once per process.
    code = ("import greenctx\n"
            "try:\n    greenctx.Device(0)\nexcept greenctx.Error as e:\n"
            "    print(e.code, e.api, e)\n")
    env = dict(os.environ, GREENCTX_LIBCUDA="/nonexistent/libcuda.so.1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("100 ")  # CUDA_ERROR_NO_DEVICE
    assert "no NVIDIA driver" in out


def test_stream_protocol_is_declared():
    assert hasattr(greenctx.Stream, "__cuda_stream__")
    assert hasattr(greenctx.Stream, "handle")


def test_type_stub_is_current(tmp_path):
    """python/greenctx/_greenctx.pyi must match the built module (regenerate it with
    `python -m nanobind.stubgen -m greenctx._greenctx -o python/greenctx/_greenctx.pyi`)."""
    nanobind = pytest.importorskip("nanobind")
    if nanobind.__version__ != "3.1.0":  # the version scripts/test.sh pins
        pytest.skip(f"the stub was generated with nanobind 3.1.0, this is {nanobind.__version__}")
    out = tmp_path / "_greenctx.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "greenctx._greenctx",
                    "-o", str(out)], check=True)
    committed = os.path.join(os.path.dirname(__file__), "..", "greenctx", "_greenctx.pyi")
    with open(committed) as f:
        assert out.read_text() == f.read(), "the committed type stub is out of date"


def test_group_params_from_text_and_keywords():
    groups = greenctx.parse_groups("16:cosched=2:pref=2 0:backfill")
    assert groups == [greenctx.GroupParams(16, 2, 2), greenctx.GroupParams(backfill=True)]
    assert groups[1].backfill and groups[1].sm_count == 0
    assert repr(groups[0]) == "{16, 2, 2, 0}"
    with pytest.raises(greenctx.RequestError, match="unknown option 'fast'"):
        greenctx.parse_groups("16:fast")


def test_pool_refuses_one_string_before_touching_the_driver():
    with pytest.raises(TypeError, match="list of layouts"):
        greenctx.Pool(None, "16,rest")


def test_measure_contention_refuses_what_is_not_a_workload():
    # Checked before the device is touched: no GPU needed.
    with pytest.raises(TypeError, match="CriticalWorkload or a callable"):
        greenctx.measure_contention(None, None, 42, lambda s: 1.0)
    with pytest.raises(TypeError, match="returning the work"):
        greenctx.measure_contention(None, None, lambda s: None, "spin")
    with pytest.raises(greenctx.RequestError, match="unit_scale must be positive"):
        greenctx.BackgroundWorkload(lambda s: 1.0, unit_scale=0)
    w = greenctx.BackgroundWorkload(lambda s: 1.0, name="mine", unit="GB/s", unit_scale=1e9)
    assert (w.name, w.unit, w.unit_scale) == ("mine", "GB/s", 1e9)


def test_plan_scaling_refuses_or_rounds_and_says_so():
    g = greenctx.documented_granularity(9)
    counts = greenctx.plan_scaling([], 132, g)
    assert [c.sms for c in counts][:3] == [8, 16, 24] and counts[-1].sms == 132
    assert [c.sms for c in greenctx.plan_scaling([64, 16], 132, g)] == [16, 64]
    with pytest.raises(greenctx.RequestError, match="give 8 or 16, or set round_counts"):
        greenctx.plan_scaling([12], 132, g)
    (rounded,) = greenctx.plan_scaling([12], 132, g, round_counts=True)
    assert rounded.requested == 12 and rounded.sms == 16
    assert "rounded up to 16" in rounded.rounding


def test_adaptive_and_scaling_refuse_what_is_not_a_workload():
    # Checked before the device is touched: no GPU needed.
    with pytest.raises(TypeError, match="workload is a CriticalWorkload or a callable"):
        greenctx.scaling(None, 42)
    with pytest.raises(TypeError, match="critical is a CriticalWorkload or a callable"):
        greenctx.measure_adaptive(None, "kernel")
    with pytest.raises(TypeError, match="returning the work"):
        greenctx.measure_adaptive(None, lambda s: None, 42)
