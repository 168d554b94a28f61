# SPDX-License-Identifier: Apache-2.0
import pytest

import greenctx


def gpu_or_skip():
    """Device 0, or a visible skip with the reason (no driver, no GPU)."""
    try:
        greenctx.query_driver()
        if greenctx.Device.count() == 0:
            pytest.skip("no GPU: the driver sees no device")
        return greenctx.Device(0)
    except greenctx.Error as e:
        pytest.skip(f"no GPU: {e}")


@pytest.fixture
def gpu():
    return gpu_or_skip()
