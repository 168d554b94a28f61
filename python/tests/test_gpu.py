"""GPU tier: skipped, with the reason, without a GPU. (Not yet run on the H200: written in the
session of 2026-11-29 after its device time was spent.)"""
import pytest

import greenctx


def test_partitions_and_verify(gpu):
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    assert len(parts) == 2
    assert parts[0].obtained == 16 and parts[1].rest
    report = greenctx.verify(gpu, parts)
    assert report["ok"], report["violations"]
    assert len(report["parts"][0]["sms"]) == 16


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


def test_torch_matmul_on_16_sms_matches_and_is_slower(gpu):
    torch = pytest.importorskip("torch")
    parts = greenctx.PartitionSet.create(gpu, "16,rest")
    small = parts[0].context.create_stream()
    a = torch.randn(8192, 8192, device="cuda")
    b = torch.randn(8192, 8192, device="cuda")
    torch.cuda.synchronize()

    def timed(stream):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            start.record()
            c = a @ b
            end.record()
        end.synchronize()
        return c, start.elapsed_time(end)

    full, _ = timed(torch.cuda.current_stream())
    full, t_full = timed(torch.cuda.current_stream())
    part, _ = timed(torch.cuda.ExternalStream(small.handle))
    part, t_part = timed(torch.cuda.ExternalStream(small.handle))
    assert torch.equal(full, part)
    assert t_part > 2 * t_full, (t_part, t_full)
