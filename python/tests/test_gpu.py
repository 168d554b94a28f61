"""GPU tier: skipped, with the reason, without a GPU. (Not yet run on the H200: written in the
session of 2026-11-29 after its device time was spent.) The tests with PyTorch are in
test_torch_gpu.py."""
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

