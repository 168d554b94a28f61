"""greenctx: partition a GPU's SMs with CUDA green contexts.

Importing works on any machine; calls that need the GPU raise ``greenctx.Error`` (with ``code``, the
CUresult, and ``api``) when there is no driver or GPU, ``greenctx.RequestError`` for requests that
cannot be met (the message names the rule and what would work) and ``greenctx.UnsupportedError``
when the driver lacks a feature.

Green contexts are costly to create (about 1.5 ms) and, on driver 580, leak about 4 MiB of device
memory each time one is destroyed: create a ``PartitionSet`` (or ``GreenContext.create`` over the
pieces of ``split_groups`` / ``split_by_count``) once and keep it.
"""

from ._greenctx import (  # noqa: F401
    Device,
    Error,
    Event,
    EventFlags,
    ExecutionContext,
    Granularity,
    GreenContext,
    GroupParams,
    GroupSplit,
    Partition,
    PartitionRequest,
    PartitionSet,
    RequestError,
    SmGroup,
    SmResource,
    SplitResult,
    Stream,
    UnsupportedError,
    documented_granularity,
    elapsed_ms,
    format_cuda_version,
    max_active_sm_clusters,
    parse_groups,
    parse_partitions,
    plan_partitions,
    query_driver,
    round_group_size,
    split_by_count,
    split_groups,
    toolkit_version,
    verify,
)

__version__ = "0.1.0"
