# SPDX-License-Identifier: Apache-2.0
"""GPU tier with PyTorch: torch work on green-context streams (torch.cuda.ExternalStream).

Every test here is skipped, with the reason, when torch is missing, when torch sees no CUDA device,
or when greenctx finds no driver or GPU. The split is made once for the module and kept: green
contexts are costly to create and leak device memory when destroyed (driver 580).
"""
import statistics

import pytest

import greenctx
from conftest import gpu_or_skip

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the torch GPU tier needs it")

SIZE = 8192  # a GEMM that is compute-bound on an H200 and fills every SM many times over
CRITICAL_SMS = 16


@pytest.fixture(scope="module")
def gpu():
    if not torch.cuda.is_available():
        pytest.skip(f"torch {torch.__version__} sees no CUDA device (torch.version.cuda = "
                    f"{torch.version.cuda})")
    return gpu_or_skip()


@pytest.fixture(scope="module")
def split(gpu):
    """The 16,rest split (once per module), with one stream on each partition."""
    try:
        parts = greenctx.PartitionSet.create(gpu, f"{CRITICAL_SMS},rest")
    except greenctx.RequestError as e:
        pytest.skip(f"this GPU cannot make a {CRITICAL_SMS},rest split: {e}")
    streams = [parts[i].context.create_stream() for i in range(len(parts))]
    yield parts, streams
    for s in streams:
        s.synchronize()  # before the streams go away
    torch.cuda.empty_cache()  # the allocator's blocks tagged with these streams
    streams.clear()  # streams first, then the green contexts they belong to
    del parts


def external(s):
    """A greenctx.Stream as a torch stream. torch launches on it from the primary context, which
    is current on the thread; no green context is ever made current."""
    return torch.cuda.ExternalStream(s.handle, device=torch.device("cuda", 0))


def time_matmuls(stream, a, b, iterations):
    """C = A @ B `iterations` times on `stream` after one untimed warm-up; returns the last C
    and the time of each product in ms (CUDA events recorded on that stream)."""
    times = []
    with torch.cuda.stream(stream):
        c = a @ b  # warm-up: cuBLAS handle, workspace for this stream, kernel selection
        for _ in range(iterations):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            c = a @ b
            end.record()
            times.append((start, end))
    end.synchronize()
    return c, [s.elapsed_time(e) for s, e in times]


@pytest.fixture
def exact_bf16_reductions():
    """Forbid cuBLAS reduced-precision (bf16) split-K reductions for the duration of a test, so
    that the only difference between two algorithms is the fp32 summation order."""
    m = torch.backends.cuda.matmul
    if not hasattr(m, "allow_bf16_reduced_precision_reduction"):
        yield  # this torch has no such switch: nothing to turn off
        return
    old = m.allow_bf16_reduced_precision_reduction
    m.allow_bf16_reduced_precision_reduction = False
    yield
    m.allow_bf16_reduced_precision_reduction = old


@pytest.mark.parametrize("dtype", ["float32-integers", "bfloat16-random"])
def test_matmul_on_16_sms_matches_full_gpu_and_is_slower(gpu, split, dtype, exact_bf16_reductions):
    """(a) An 8192^3 GEMM on the 16-SM partition gives the full GPU's result and is slower by
    roughly the ratio of SM counts.

    Equality, and why it is exact or not:
    - float32-integers: A and B hold integers in [-2, 2]. Every product and every partial sum is
      an integer of magnitude <= 4 * 8192 < 2**24, hence exact in fp32 (and the inputs are exact
      in TF32 too), whatever algorithm, tiling or split-K cuBLAS picks for a stream with fewer
      SMs. The results must be bitwise equal; any lost, doubled or misplaced tile shows.
    - bfloat16-random: N(0, 1) inputs, fp32 accumulation (reduced-precision reductions are
      forbidden), bf16 output. Two algorithms may sum in different orders: the fp32 sums then
      differ by about sqrt(K) * 2**-24 * |partial sum| ~ 1e-3, and rounding to bf16 can turn that
      into one bf16 ulp (relative 2**-8..2**-7). Tolerance: rtol = 2**-7 (one ulp), atol = 1e-2
      (about ten times the fp32 order difference, for outputs near 0). Outputs are ~90 in size, so
      a wrong tile still fails by orders of magnitude.

    Slowdown: the GEMM is compute-bound, so 16 of N SMs should take about N/16 times as long.
    The bound is a quarter of that (2.06x for 16 of 132): it leaves room for a higher clock on a
    partly idle GPU, wave quantisation and shared L2/HBM, and still fails when the partition does
    not confine the kernel (ratio ~1).
    """
    parts, streams = split
    total = gpu.sms().sm_count
    small = parts[0].obtained
    assert streams[0].sms().sm_count == small == parts[0].context.sms().sm_count
    bound = 0.25 * total / small
    if bound < 1.5:
        pytest.skip(f"{small} of {total} SMs is too large a share for a timing check "
                    f"(bound {bound:.2f}x)")

    g = torch.Generator(device="cuda").manual_seed(6)
    if dtype == "float32-integers":
        a = torch.randint(-2, 3, (SIZE, SIZE), device="cuda", generator=g).float()
        b = torch.randint(-2, 3, (SIZE, SIZE), device="cuda", generator=g).float()
    else:
        a = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16, generator=g)
    torch.cuda.synchronize()

    full_stream = torch.cuda.Stream()  # a plain torch stream: every SM of the GPU
    full, t_full = time_matmuls(full_stream, a, b, iterations=3)
    part, t_part = time_matmuls(external(streams[0]), a, b, iterations=3)

    if dtype == "float32-integers":
        assert torch.equal(full, part), \
            f"max |difference| {(full - part).abs().max().item()} on exact integer data"
    else:
        diff = (full.float() - part.float()).abs().max().item()
        assert torch.allclose(full, part, rtol=2**-7, atol=1e-2), f"max |difference| {diff}"

    ratio = min(t_part) / min(t_full)
    print(f"{dtype}: full GPU ({total} SMs) {min(t_full):.2f} ms, {small} SMs "
          f"{min(t_part):.2f} ms, ratio {ratio:.2f} (ideal {total / small:.2f}, bound {bound:.2f})")
    assert ratio >= bound, (f"{small} of {total} SMs: {min(t_part):.2f} ms against "
                            f"{min(t_full):.2f} ms, ratio {ratio:.2f} < {bound:.2f}: the GEMM does "
                            f"not look confined to the partition ({t_part} vs {t_full})")
    del full, part
    streams[0].synchronize()


def test_two_partitions_are_disjoint_on_the_hardware(gpu, split):
    """(b, where) The %smid probe of greenctx.verify, run on both partitions at once: no SM is
    used by both, and neither uses more SMs than it holds. Fails on any overlap or escape."""
    parts, streams = split
    report = greenctx.verify(gpu, parts)
    assert report.ok, report.violations
    used = [set(p.sms) for p in report.parts]
    assert len(used) == 2
    assert not used[0] & used[1], f"SMs used by both partitions: {sorted(used[0] & used[1])}"
    for i, u in enumerate(used):
        assert 0 < len(u) <= parts[i].obtained, (i, len(u), parts[i].obtained)
        assert streams[i].sms().sm_count == parts[i].obtained
    assert parts[0].obtained + parts[1].obtained <= gpu.sms().sm_count


def gate(stream):
    """An event that opens ~10 ms from now: a one-thread spin kernel on `stream` (a primary-context
    stream; it ends before any measured work starts), so that all work is queued before it runs.
    None when this torch has no torch.cuda._sleep (then the host's launch order staggers the
    starts by a few tens of microseconds, small against the ~50 ms measured)."""
    if not hasattr(torch.cuda, "_sleep"):
        return None
    opened = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        torch.cuda._sleep(20_000_000)  # cycles: 10 ms at 2 GHz
        opened.record()
    return opened


def run_loops(gate_stream, loops):
    """Runs each (torch stream, iterations, a, b) GEMM loop on its stream, all released by one
    gate; returns each loop's end time in ms after the gate opened (or after the first launch)."""
    opened = gate(gate_stream)
    if opened is None:
        opened = torch.cuda.Event(enable_timing=True)
        opened.record(gate_stream)
    ends = []
    for stream, iterations, a, b in loops:
        with torch.cuda.stream(stream):
            stream.wait_event(opened)
            for _ in range(iterations):
                c = a @ b
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            ends.append((end, c))
    for end, _ in ends:
        end.synchronize()
    return [opened.elapsed_time(end) for end, _ in ends]


def test_two_partitions_run_torch_gemms_at_the_same_time(gpu, split):
    """(b, when) GEMM loops on a stream of each partition, timed alone and together (one gate
    releases both). On disjoint SMs that run concurrently the time together is the longer of the
    two alone; run one after the other (a shared work queue, SMs shared) it is their sum. The test
    asks that at least half of the shorter loop be hidden under the longer:
        hidden = (t_a + t_b - t_both) / min(t_a, t_b) >= 0.5
    (ideal 1; 0 when serialised). The loops are balanced first (iterations in proportion to the
    measured time of one GEMM) so that both matter."""
    parts, streams = split
    s_small, s_rest = external(streams[0]), external(streams[1])
    gate_stream = torch.cuda.Stream()
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16, generator=g)
    torch.cuda.synchronize()

    _, one_small = time_matmuls(s_small, a, b, iterations=2)
    _, one_rest = time_matmuls(s_rest, a, b, iterations=2)
    n_small = 4
    n_rest = max(1, round(n_small * min(one_small) / min(one_rest)))
    small_loop, rest_loop = (s_small, n_small, a, b), (s_rest, n_rest, a, b)

    t_small, t_rest, t_both = [], [], []
    for _ in range(3):
        t_small.append(run_loops(gate_stream, [small_loop])[0])
        t_rest.append(run_loops(gate_stream, [rest_loop])[0])
        t_both.append(max(run_loops(gate_stream, [small_loop, rest_loop])))
    t_a, t_b, t_ab = (statistics.median(t) for t in (t_small, t_rest, t_both))
    hidden = (t_a + t_b - t_ab) / min(t_a, t_b)
    print(f"{parts[0].obtained} SMs: {n_small} GEMMs {t_a:.1f} ms; {parts[1].obtained} SMs: "
          f"{n_rest} GEMMs {t_b:.1f} ms; together {t_ab:.1f} ms; hidden {hidden:.2f}")
    assert hidden >= 0.5, (f"alone {t_a:.1f} and {t_b:.1f} ms, together {t_ab:.1f} ms: only "
                           f"{hidden:.2f} of the shorter loop overlapped the other (samples: "
                           f"{t_small}, {t_rest}, {t_both})")
    streams[0].synchronize()
    streams[1].synchronize()


def test_pool_torch_streams_run_torch_work_in_their_partition(gpu):
    """Pool.torch_streams gives torch streams on a partition's green-context streams: a product
    there equals the one on the default stream (integers in fp32: exact), and each stream is
    torch.cuda.ExternalStream over the pool's handle."""
    pool = greenctx.Pool(gpu, ["16,rest", "all"])
    try:
        streams = pool.torch_streams(0)
        assert [s.cuda_stream for s in streams] == [s.handle for s in pool.streams(0)]
        g = torch.Generator(device="cuda").manual_seed(3)
        a = torch.randint(-2, 3, (1024, 1024), device="cuda", generator=g).float()
        b = torch.randint(-2, 3, (1024, 1024), device="cuda", generator=g).float()
        expected = a @ b
        torch.cuda.synchronize()
        with pool.use("all"):
            with torch.cuda.stream(pool.torch_streams(0)[1]):
                on_all = a @ b
        with torch.cuda.stream(streams[0]):
            on_16 = a @ b
        pool.synchronize("16,rest")
        pool.synchronize("all")
        assert torch.equal(on_16, expected) and torch.equal(on_all, expected)
    finally:
        pool.synchronize("16,rest")
        pool.synchronize("all")
        torch.cuda.empty_cache()  # the allocator's blocks tagged with the pool's streams


def test_measure_contention_with_torch_workloads(gpu, split):
    """torch work as the measurement's workloads: a small decode-like product as the critical
    work, a large GEMM as the background, each launched on the stream the measurement gives it.
    The critical product is still exact (integers in fp32) after running beside the background."""
    parts, _ = split
    g = torch.Generator(device="cuda").manual_seed(5)
    a = torch.randint(-2, 3, (64, 4096), device="cuda", generator=g).float()
    w = torch.randint(-2, 3, (4096, 4096), device="cuda", generator=g).float()
    big = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    expected = a @ w
    torch.cuda.synchronize()
    out = []

    def critical(stream):
        with torch.cuda.stream(torch.cuda.ExternalStream(stream.handle)):
            out.append(a @ w)

    def background(stream):
        with torch.cuda.stream(torch.cuda.ExternalStream(stream.handle)):
            big @ big
        return 2.0 * 4096**3

    try:
        r = greenctx.measure_contention(gpu, parts, critical, background, samples=20, warmup=2,
                                        rounds=2, gap_us=50, rate_window_ms=20,
                                        placements=["shared", "green"])
    finally:
        torch.cuda.synchronize()
    assert [p.name for p in r.placements] == ["shared", "green"]
    assert all(p.background.rate > 0 for p in r.placements)
    assert len(out) >= 40 and all(torch.equal(o, expected) for o in out)
    out.clear()  # blocks allocated on the measurement's streams, which are gone
    torch.cuda.empty_cache()
