# SPDX-License-Identifier: Apache-2.0
"""GPU tier: skipped, with the reason, without a GPU. The tests with PyTorch are in
test_torch_gpu.py."""
import dataclasses

import pytest

import greenctx


def test_partitions_and_verify(gpu):
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    assert len(parts) == 2
    assert parts[0].obtained == 16 and parts[1].rest
    report = greenctx.verify(gpu, parts)
    assert report.ok, report.violations
    assert len(report.parts[0].sms) == 16 and report.parts[0].label == "16"


def test_streams_and_events(gpu):
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    ctx = parts[0].context
    assert ctx.is_green and ctx.sms().sm_count == 16
    s = ctx.create_stream()
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.handle != 0
    assert s.sms().sm_count == 16
    e = greenctx.Event(ctx)
    ctx.record(e)
    e.synchronize()
    assert e.ready()



def test_fill_sms_leaves_no_room_on_its_partition_only(gpu):
    """A filled 16-SM partition makes later work on it wait; the rest's work does not wait."""
    import time
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    filler, same, other = (parts[0].context.create_stream(), parts[0].context.create_stream(),
                           parts[1].context.create_stream())
    assert greenctx.fill_sms(filler, 0.5) >= 16  # at least a block per SM
    time.sleep(0.05)
    greenctx.fill_sms(same, 0.01)
    greenctx.fill_sms(other.handle, 0.01)  # by handle, as for a torch stream's cuda_stream
    time.sleep(0.15)  # both would have ended by now, had they started at once
    assert other.ready(), "the rest's work waited for a fill of another partition"
    assert not same.ready() and not filler.ready(), "work ran beside a filled partition"
    filler.synchronize()
    same.synchronize()
    with pytest.raises(greenctx.RequestError, match="seconds"):
        greenctx.fill_sms(filler, 0)
    with pytest.raises(greenctx.RequestError, match="handle 0"):
        greenctx.fill_sms(0, 0.01)


def test_split_groups_discovery_and_backfill(gpu):
    sms = gpu.sms()
    r = greenctx.split_groups(sms, "16:cosched=2:pref=2 0:cosched=2:pref=2:backfill")
    assert r.obtained == [16, sms.sm_count - 16]
    assert r.params[1].sm_count == sms.sm_count - 16, "discovery writes the count back"
    assert r.remainder_sms == 0 and r.split_calls == 1
    small = greenctx.GreenContext.create(r.groups[0].pieces)
    rest = greenctx.GreenContext.create(r.groups[1].pieces)
    assert small.sms().sm_count == 16 and rest.sms().sm_count == sms.sm_count - 16
    assert greenctx.max_active_sm_clusters(small, 2) == 8
    # A dry run only fills in the parameters.
    dry = greenctx.split_groups(sms, [greenctx.GroupParams(0, 8, 8)], dry_run=True)
    assert dry.groups == [] and dry.params[0].sm_count == dry.obtained[0] > 0


def test_split_groups_refuses_what_cannot_be_made(gpu):
    with pytest.raises(greenctx.RequestError, match="not every group can be made"):
        greenctx.split_groups(gpu.sms(), "64 72")
    with pytest.raises(greenctx.RequestError, match="odd"):
        greenctx.split_groups(gpu.sms(), "15")
    # Clusters of 4 from IgnoreSmCoscheduling pieces are proved at the split (refused on the
    # H200, driver 580) and the message ends with advice; a dry run carries the advice too.
    if gpu.sms().sm_count == 132:
        with pytest.raises(greenctx.RequestError, match="Advice: this GPU has 15 co-scheduled"):
            greenctx.split_groups(gpu.sms(), "28:cosched=4:pref=4 32:cosched=4:pref=4")
        dry = greenctx.split_groups(gpu.sms(), "120 16", dry_run=True)
        assert "{104, 16}" in dry.advice


def test_split_by_count_gives_equal_groups(gpu):
    r = greenctx.split_by_count(gpu.sms(), 2, 12)
    assert [g.sm_count for g in r.groups] == [16, 16]
    assert "16" in r.explanation
    both = greenctx.GreenContext.create(r.groups)
    assert both.sms().sm_count == 32


def test_pool_shares_contexts_and_switches(gpu):
    pool = greenctx.Pool(gpu, ["16,rest", "16, 16, rest", "all"])
    assert pool.layouts == ["16,rest", "16,16,rest", "all"]
    st = pool.stats()
    assert st.layouts == 3 and st.partitions == 6
    # The 16-SM piece is the same split piece in both splits: one context for both; the two rests
    # and "all" have their own.
    assert st.contexts == 5 and st.streams == 10
    assert st.creation_ms > 0
    a, b = pool.partitions("16,rest"), pool.partitions("16,16,rest")
    assert a[0].slot == b[0].slot and a[1].slot != b[2].slot
    assert [s.handle for s in a[0].streams] == [s.handle for s in b[0].streams]
    assert a[0].streams[0].sms().sm_count == a[0].sm_count == 16
    assert a[0].context.is_green and a[0].label == "16" and a[1].label == "rest"

    assert pool.current == "16,rest"
    with pool.use("all") as parts:
        assert pool.current == "all"
        assert parts[0].label == "all" and parts[0].sm_count == gpu.sms().sm_count
        assert pool.partitions()[0].slot == parts[0].slot
    assert pool.current == "16,rest", "use() restores the previous layout"
    assert pool.switch(1) == "16,rest" and pool.current == "16,16,rest"
    with pytest.raises(greenctx.RequestError, match="'16,rest', '16,16,rest', 'all'"):
        pool.switch("64,rest")
    assert pool.current == "16,16,rest"
    with pytest.raises(IndexError):
        pool.switch(3)


def test_pool_use_restores_after_an_exception_and_drains(gpu):
    pool = greenctx.Pool(gpu, ["16,rest", "64,rest"], streams_per_partition=1)
    assert pool.stats().streams == 4
    with pytest.raises(ZeroDivisionError):
        with pool.use("64,rest", drain=True):
            assert pool.current == "64,rest"
            1 / 0
    assert pool.current == "16,rest"
    pool.drain("16,rest", "64,rest")
    pool.synchronize("16,rest")
    for p in pool.partitions():
        assert all(s.ready() for s in p.streams)


def test_pool_refuses_bad_layouts(gpu):
    with pytest.raises(greenctx.RequestError, match="no layouts"):
        greenctx.Pool(gpu, [])
    with pytest.raises(greenctx.RequestError, match="given twice"):
        greenctx.Pool(gpu, ["16,rest", "16, rest"])
    with pytest.raises(greenctx.RequestError, match="layout '1000,rest' cannot be made"):
        greenctx.Pool(gpu, ["1000,rest"])
    with pytest.raises(greenctx.RequestError, match="streams_per_partition"):
        greenctx.Pool(gpu, ["16,rest"], streams_per_partition=0)


QUICK = dict(samples=20, warmup=2, rounds=2, gap_us=50, rate_window_ms=20)


def test_measure_contention_with_python_workloads(gpu):
    """Python callables as workloads: each gets a StreamRef on the partition its placement says,
    and the result has every placement's samples."""
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    every = gpu.sms().sm_count
    seen_critical, seen_background, lines = set(), set(), []

    def critical(stream):
        seen_critical.add(stream.sms().sm_count)
        greenctx.fill_sms(stream, 0.00002)

    def background(stream):
        seen_background.add(stream.sms().sm_count)
        return float(greenctx.fill_sms(stream, 0.0005))

    r = greenctx.measure_contention(gpu, parts, critical, background, progress=lines.append,
                                    **QUICK)
    assert seen_critical == {16, every}
    assert seen_background == {parts[1].obtained, every}
    assert [p.name for p in r.placements] == ["alone", "alone_green", "shared", "priority",
                                              "green", "green_priority", "trap"]
    for p in r.placements:
        assert p.critical is not None
        assert len(p.critical.gpu_us) == 20 and p.critical.gpu.count == 20
        assert p.critical.gpu.p50 > 0
        assert (p.background is None) == (p.name in ("alone", "alone_green"))
    assert r.placement("trap").trap and not r.placement("green").trap
    assert r.critical_sms == 16 and r.device_sms == every
    assert r.background_full.rate > 0 and r.config.samples == 20
    assert any(line.startswith("round 2/2") for line in lines), lines


def test_hold_launch_leaves_out_python_launch_time(gpu):
    """A callable that spends 2 ms in Python before it launches is timed as its kernel with
    hold_launch, as the pause without."""
    import time
    parts = greenctx.PartitionSet.create(gpu, "16,rest")

    def slow(stream):
        time.sleep(0.002)
        greenctx.fill_sms(stream, 0.00002)

    def p50(hold):
        r = greenctx.measure_contention(gpu, parts, slow, greenctx.spin_background(gpu, 1, 50),
                                        placements=["green"], hold_launch=hold, **QUICK)
        return r.placement("green").critical.gpu.p50
    assert p50(False) >= 2000
    assert 20 <= p50(True) < 1000


def test_background_thread_launches_python_work_from_its_own_thread(gpu):
    """background_thread: the background callable is called from another thread (taking the GIL)
    while the critical work is sampled; the samples and the rate come back as without it."""
    import threading
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    threads = set()

    def background(stream):
        threads.add(threading.get_ident())
        return float(greenctx.fill_sms(stream, 0.0005))

    r = greenctx.measure_contention(gpu, parts, lambda s: greenctx.fill_sms(s, 0.00002),
                                    background, placements=["green"], background_thread=True,
                                    background_depth=3, **QUICK)
    green = r.placement("green")
    assert len(green.critical.gpu_us) == 20 and green.background.rate > 0
    assert r.config.background_thread and r.config.background_depth == 3
    assert threads - {threading.get_ident()}, "no background launch came from another thread"


def test_measure_contention_built_ins_errors_and_exceptions(gpu):
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    r = greenctx.measure_contention(gpu, parts, greenctx.kernel_critical(gpu, 8, 20),
                                    greenctx.spin_background(gpu, 2, 100),
                                    placements=["green"], **QUICK)
    (green,) = r.placements
    assert len(green.critical.start_delay_us) == 20  # the kernel work times itself
    assert green.critical.gpu.min >= 20
    assert r.background_unit == "blocks/s" and "waves" in r.background_shape

    with pytest.raises(greenctx.RequestError, match="positive amount of work"):
        greenctx.measure_contention(gpu, parts, lambda s: None, lambda s: 0.0, **QUICK)
    with pytest.raises(greenctx.RequestError, match="no placement is named 'best'"):
        greenctx.measure_contention(gpu, parts, lambda s: None, lambda s: 1.0,
                                    placements=["best"], **QUICK)
    with pytest.raises(greenctx.RequestError, match="at least 1"):
        greenctx.spin_background(gpu, 2, 0.5)

    def fails(stream):
        raise ValueError("the user's own error")
    with pytest.raises(ValueError, match="the user's own error"):
        greenctx.measure_contention(gpu, parts, fails, greenctx.spin_background(gpu, 1, 50),
                                    **QUICK)


def test_measure_bandwidth_on_one_split_and_the_whole_device(gpu):
    """The bandwidth curve from Python: one split's point alone and beside its rest, the whole
    device's alone; names that are no op or level refused."""
    r = greenctx.measure_bandwidth(gpu, sizes=[16], ops=["read"], levels=["l2"], repeats=2)
    assert r.sizes == (16,) and r.repeats == 2 and r.device_sms == gpu.sms().sm_count
    p = r.point("l2", "read", 16)
    assert not p.whole_device and p.rest_sms > 0 and p.overlapped in (True, False)
    assert p.alone.gbs > 0 and p.beside is not None and p.beside.gbs > 0
    assert p.rest_alone is not None and p.rest_beside is not None
    whole = r.point("l2", "read", r.device_sms)
    assert whole.whole_device and whole.beside is None
    assert whole.alone.gbs > p.alone.gbs, "all SMs read L2 no faster than 16"
    assert [(q.level, q.op) for q in r.points] == [("l2", "read")] * 2
    with pytest.raises(KeyError, match="no dram read point on 16 SMs"):
        r.point("dram", "read", 16)
    with pytest.raises(greenctx.RequestError, match="ops: 'fetch' is not one of read, write, copy"):
        greenctx.measure_bandwidth(gpu, ops=["fetch"])
    with pytest.raises(greenctx.RequestError, match="levels: 'hbm' is not one of dram, l2"):
        greenctx.measure_bandwidth(gpu, levels=["hbm"])


def test_tune_with_python_workloads(gpu):
    """tune over Python callables: both searches on three sizes; the answer is a split to make."""
    def critical(stream):
        greenctx.fill_sms(stream, 0.00002)

    def background(stream):
        return float(greenctx.fill_sms(stream, 0.0005))

    r = greenctx.tune(gpu, critical, background, p99_times_alone=1000, search="both",
                      samples=20, confirm_samples=40, sizes=[8, 16, 32])
    assert [p.critical_sms for p in r.curve] == [8, 16, 32]
    assert r.split == f"{r.exhaustive.chosen},rest", r.reason
    assert r.guided.chosen in (8, 16, 32) and r.pareto
    parts = greenctx.PartitionSet.create(gpu, r.split)
    assert parts[0].obtained == r.exhaustive.chosen
    assert dataclasses.asdict(r)["curve"][0]["critical_sms"] == 8  # as plain dicts, for JSON
    with pytest.raises(greenctx.RequestError, match="give one objective"):
        greenctx.tune(gpu, critical, background, p99_us=40, within_best=0.1)
    with pytest.raises(greenctx.RequestError, match="not a split this GPU makes"):
        greenctx.tune(gpu, critical, background, p99_us=40, sizes=[12])


def test_scaling_of_waves_and_of_a_python_callable(gpu):
    """A spin of 1024 blocks runs in 4 waves on 16 SMs and one on 128: clearly longer on 16. A
    Python callable gets a stream on each count's green context; its exception comes back."""
    if gpu.sms().sm_count < 128:
        pytest.skip(f"needs 128 SMs or more, this GPU has {gpu.sms().sm_count}")
    r = greenctx.scaling(gpu, greenctx.kernel_critical(gpu, 1024, 50), [128, 16], samples=20,
                         warmup=2, rounds=2)
    small, large = r.points
    assert (small.sms, large.sms, r.reference_sms) == (16, 128, 128)
    assert small.time.gpu.p50 > 3 * large.time.gpu.p50, r
    assert large.speedup == 1 and small.speedup < 1 / 3 and small.ideal == 0.125
    assert len(small.time.start_delay_us) == 20  # the kernel times itself

    seen, lines = set(), []

    def work(stream):
        seen.add(stream.sms().sm_count)
        greenctx.fill_sms(stream, 0.00002)
    r = greenctx.scaling(gpu, work, [16, 32], samples=10, warmup=1, rounds=1,
                         progress=lines.append)
    assert seen == {16, 32} and r.workload == "workload" and lines
    assert all(len(p.time.gpu_us) == 10 for p in r.points)
    with pytest.raises(greenctx.RequestError, match="round_counts"):
        greenctx.scaling(gpu, work, [12])

    def fails(stream):
        raise ValueError("the user's own error")
    with pytest.raises(ValueError, match="the user's own error"):
        greenctx.scaling(gpu, fails, [16], samples=2)


def test_measure_adaptive_with_a_python_critical_and_the_default_copy(gpu):
    """Every configuration comes back: alone, static and each N with each policy."""
    calls = []

    def critical(stream):
        calls.append(stream.sms().sm_count)
        greenctx.fill_sms(stream, 0.00002)
    r = greenctx.measure_adaptive(gpu, critical, shrink_to=[8, 64],
                                  policies=["lead", "reactive-wait"], samples=20, warmup=2,
                                  rounds=2, rate_window_ms=20)
    names = [c.name for c in r.configurations]
    assert names == ["alone", "static", "adaptive-8-lead", "adaptive-8-reactive-wait",
                     "adaptive-64-lead", "adaptive-64-reactive-wait"]
    assert set(calls) == {16} and r.critical_shared, r.critical_sharing
    assert r.narrow_sms == (8, 64) and r.background_unit == "GB/s"
    for c in r.configurations:
        assert len(c.critical.host_us) == 20
        assert (c.background is None) == (c.name == "alone")
        assert len(c.wait_us) == (20 if c.policy == "reactive-wait" else 0)
    assert [v.name for v in r.verdicts] == names[1:]
    assert r.configuration("static").shrink_to == 0
    with pytest.raises(greenctx.RequestError, match="lead_us: a lead of 200 us"):
        greenctx.measure_adaptive(gpu, critical, lead_us=200, gap_us=300)
    with pytest.raises(greenctx.RequestError, match="'eager' is not one of"):
        greenctx.measure_adaptive(gpu, critical, policies=["eager"])
