# SPDX-License-Identifier: Apache-2.0
"""greenctx: partition a GPU's SMs with CUDA green contexts.

Importing works on any machine; calls that need the GPU raise ``greenctx.Error`` (with ``code``, the
CUresult, and ``api``) when there is no driver or GPU, ``greenctx.RequestError`` for requests that
cannot be met (the message names the rule and what would work) and ``greenctx.UnsupportedError``
when the driver lacks a feature.

Green contexts are costly to create (about 1.5 ms) and, on driver 580, leak about 4 MiB of device
memory each time one is destroyed: create a ``PartitionSet`` (or ``GreenContext.create`` over the
pieces of ``split_groups`` / ``split_by_count``) once and keep it. To move SMs between kinds of work
at run time, make a ``Pool`` of the layouts you need once and switch between them (no driver call).

Measurements, plans, ``verify``, ``query_driver`` and ``Pool.stats`` return frozen dataclasses
(``greenctx.results``: ``TuneResult``, ``ContentionResult``, ...); ``dataclasses.asdict`` turns
one into plain dicts and tuples for JSON. docs/python.md lists every public name.
"""

from __future__ import annotations

import contextlib as _contextlib
import importlib.metadata as _metadata
from typing import (TYPE_CHECKING, Any, Callable, Iterator, Literal, Protocol, Sequence, Union,
                    cast)

if TYPE_CHECKING:
    # The compiled module creates these three at import; its stub names them as greenctx's, so
    # they are declared here for type checkers, with the attributes the bindings set.
    class Error(RuntimeError):
        """A CUDA driver call failed; ``code`` is its CUresult, ``api`` the call."""

        code: int
        api: str

    class RequestError(Error):
        """A request that cannot be met; the message names the rule and what would work."""

    class UnsupportedError(Error):
        """The driver lacks a feature the call needs."""
else:
    from ._greenctx import Error, RequestError, UnsupportedError

from ._greenctx import (
    BackgroundWorkload,
    CriticalWorkload,
    Device,
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
    PoolPartition,
    SmGroup,
    SmResource,
    SplitResult,
    Stream,
    StreamRef,
    copy_chunks,
    documented_granularity,
    elapsed_ms,
    fill_sms,
    format_cuda_version,
    gemm_background,
    gemm_critical,
    kernel_critical,
    max_active_sm_clusters,
    memory_background,
    parse_groups,
    parse_partitions,
    round_group_size,
    split_by_count,
    spin_background,
    split_groups,
    toolkit_version,
)

# The stub leaves out private names such as _Pool: its interface is _PoolCore below.
from ._greenctx import _Pool  # type: ignore[attr-defined]
from ._greenctx import measure_adaptive as _measure_adaptive
from ._greenctx import measure_bandwidth as _measure_bandwidth
from ._greenctx import measure_contention as _measure_contention
from ._greenctx import plan_partitions as _plan_partitions
from ._greenctx import plan_scaling as _plan_scaling
from ._greenctx import query_driver as _query_driver
from ._greenctx import scaling as _scaling
from ._greenctx import tune as _tune
from ._greenctx import verify as _verify
from .results import (
    AdaptiveAlone,
    AdaptiveConfiguration,
    AdaptiveResult,
    AdaptiveVerdict,
    BackgroundRate,
    BandwidthPoint,
    BandwidthRate,
    BandwidthResult,
    ContentionConfig,
    ContentionResult,
    CriticalStats,
    DriverFeature,
    DriverInfo,
    PartitionPlan,
    Placement,
    PlannedPart,
    PoolStats,
    ScalingCount,
    ScalingPoint,
    ScalingResult,
    Summary,
    TuneAnswer,
    TunePoint,
    TuneResult,
    VerifiedPartition,
    VerifyReport,
)

__version__: str
try:  # the installed distribution's version: CMakeLists.txt's project(VERSION), read at build time
    __version__ = _metadata.version("greenctx")
except _metadata.PackageNotFoundError:  # the package imported from a folder, not installed
    __version__ = "unknown"

#: Critical work: a workload object, or a callable that enqueues one instance on the stream it is
#: given (what it returns is ignored).
CriticalWork = Union[CriticalWorkload, Callable[[StreamRef], object]]
#: Background work: a workload object, or a callable that enqueues one unit on the stream it is
#: given and returns the work it does (a positive number).
BackgroundWork = Union[BackgroundWorkload, Callable[[StreamRef], float]]
#: Called with a line of text per step of a measurement (what it returns is ignored).
Progress = Callable[[str], object]
#: A layout of a Pool: its name ("16,rest") or its index in the pool.
Layout = Union[str, int]


# The public names: what the API reference in docs/python.md lists (python/tests/test_api.py
# checks that it does).
__all__ = [
    # Errors
    "Error", "RequestError", "UnsupportedError",
    # Versions and the driver
    "toolkit_version", "format_cuda_version", "query_driver", "DriverInfo", "DriverFeature",
    # Planning, without a GPU
    "Granularity", "documented_granularity", "round_group_size", "PartitionRequest",
    "parse_partitions", "plan_partitions", "PartitionPlan", "PlannedPart", "plan_scaling",
    "ScalingCount",
    # Devices, SMs, contexts, streams and events
    "Device", "SmResource", "ExecutionContext", "GreenContext", "Stream", "StreamRef", "Event",
    "EventFlags", "elapsed_ms",
    # Splits
    "SplitResult", "split_by_count", "GroupParams", "parse_groups", "SmGroup", "GroupSplit",
    "split_groups", "max_active_sm_clusters",
    # Partition sets, their verification, and filling SMs
    "Partition", "PartitionSet", "verify", "VerifyReport", "VerifiedPartition", "fill_sms",
    # Pools
    "Pool", "PoolPartition", "PoolStats", "Layout",
    # Workloads
    "CriticalWorkload", "BackgroundWorkload", "CriticalWork", "BackgroundWork", "Progress",
    "kernel_critical", "gemm_critical", "spin_background", "memory_background",
    "gemm_background", "copy_chunks",
    # Measurements and their results
    "measure_contention", "ContentionResult", "ContentionConfig", "Placement", "CriticalStats",
    "Summary", "BackgroundRate", "tune", "TuneResult", "TuneAnswer", "TunePoint",
    "measure_adaptive", "AdaptiveResult", "AdaptiveAlone", "AdaptiveConfiguration",
    "AdaptiveVerdict", "scaling", "ScalingResult", "ScalingPoint", "measure_bandwidth",
    "BandwidthResult", "BandwidthPoint", "BandwidthRate",
]


class _PoolCore(Protocol):
    """What Pool uses of the compiled _Pool."""

    @property
    def names(self) -> list[str]: ...
    @property
    def current_index(self) -> int: ...
    def index_of(self, name: str) -> int: ...
    def use(self, index: int) -> int: ...
    def partitions(self, index: int) -> list[PoolPartition]: ...
    def drain(self, from_index: int, into_index: int) -> None: ...
    def synchronize(self, index: int) -> None: ...
    def stats(self) -> dict[str, Any]: ...


class Pool:
    """Several SM layouts of one device, made once, with one in use; switching is an atomic store.

    ``layouts`` is a list such as ``["16,rest", "64,rest", "all"]`` ("all": one green context over
    every SM). Every layout gets its green contexts and ``streams_per_partition`` streams per
    partition (priority ``priority``) up front; partitions of different layouts that hold the same
    SMs share one context and its streams, so the pool makes as few contexts as it can. The first
    layout is in use. Raises ``RequestError`` for an empty list, a duplicate or malformed layout,
    or one the GPU cannot make (with the reason); ``Error`` for driver failures.

    Work already submitted when the layout changes finishes where it runs (on the SMs of the stream
    it went to); ``drain`` makes the new layout's streams wait for it on the device,
    ``synchronize`` waits for it on the host.

    Thread safety: ``switch``, ``current``, ``partitions`` and the streams may be used from any
    thread. ``use`` restores the layout that was in use when it was entered, whatever other
    threads switched to meanwhile.
    """

    def __init__(self, device: Device, layouts: Sequence[str], streams_per_partition: int = 2,
                 priority: int = 0, ignore_coscheduling: bool = False) -> None:
        if isinstance(layouts, str):  # a str is a sequence of str too: refused by hand
            raise TypeError("layouts is a list of layouts such as ['16,rest', 'all'], not one "
                            f"string ({layouts!r})")
        self._device = device
        self._pool: _PoolCore = _Pool(device, list(layouts), streams_per_partition, priority,
                                      ignore_coscheduling)

    @property
    def layouts(self) -> list[str]:
        """The layouts' canonical names ('16,rest', 'all'), in the order given."""
        return self._pool.names

    @property
    def current(self) -> str:
        """The name of the layout in use."""
        return self._pool.names[self._pool.current_index]

    def _index(self, layout: Layout | None) -> int:
        if layout is None:
            return self._pool.current_index
        if isinstance(layout, int):
            if not 0 <= layout < len(self._pool.names):
                raise IndexError(f"layout index {layout} is out of range: the pool has "
                                 f"{len(self._pool.names)} layouts")
            return layout
        return self._pool.index_of(layout)

    def switch(self, layout: Layout) -> str:
        """Make ``layout`` (a name or an index) the one in use; returns the previous one's name.
        Raises RequestError naming the pool's layouts when it has no such layout."""
        return self._pool.names[self._pool.use(self._index(layout))]

    @_contextlib.contextmanager
    def use(self, layout: Layout, drain: bool = False) -> Iterator[list[PoolPartition]]:
        """Switch to ``layout`` for a ``with`` block and back to the previous layout on exit.
        With ``drain=True`` the new layout's streams first wait (on the device) for the work
        submitted so far to the previous layout's streams. Yields the layout's partitions."""
        index = self._index(layout)
        previous = self._pool.use(index)
        try:
            if drain:
                self._pool.drain(previous, index)
            yield self._pool.partitions(index)
        finally:
            self._pool.use(previous)

    def partitions(self, layout: Layout | None = None) -> list[PoolPartition]:
        """The partitions (PoolPartition: label, sm_count, context, streams, slot) of ``layout``
        (a name or index; default: the one in use)."""
        return self._pool.partitions(self._index(layout))

    def streams(self, partition: int, layout: Layout | None = None) -> list[StreamRef]:
        """The streams (StreamRef) of partition ``partition`` (an index) of ``layout``."""
        return list(self.partitions(layout)[partition].streams)

    def torch_streams(self, partition: int, layout: Layout | None = None) -> list[Any]:
        """The streams of a partition as ``torch.cuda.ExternalStream`` objects (imports torch)."""
        import torch  # optional dependency: only this helper needs it

        device = torch.device("cuda", self._device.ordinal)
        return [torch.cuda.ExternalStream(s.handle, device=device)
                for s in self.streams(partition, layout)]

    def drain(self, from_layout: Layout, into_layout: Layout | None = None) -> None:
        """Make every stream of ``into_layout`` (default: the one in use) wait, on the device, for
        all work submitted so far to the streams of ``from_layout``. Does not block the host."""
        self._pool.drain(self._index(from_layout), self._index(into_layout))

    def synchronize(self, layout: Layout | None = None) -> None:
        """Block until the work submitted so far to the streams of ``layout`` has finished."""
        self._pool.synchronize(self._index(layout))

    def stats(self) -> PoolStats:
        """What making the pool took: layouts, partitions, contexts (green contexts made),
        streams, creation_ms and device_memory_bytes (free memory before creation minus
        after)."""
        return PoolStats._from_dict(self._pool.stats())

    def __repr__(self) -> str:
        return f"Pool(layouts={self.layouts!r}, current={self.current!r})"


def query_driver() -> DriverInfo:
    """The loaded driver: its version (13000 for 13.0), the library opened and, per feature, how
    it is available (``DriverFeature``: status "native", "greenctx" or "missing", and the driver
    version that has it natively). Raises Error when there is no driver or GPU."""
    return DriverInfo._from_dict(_query_driver())


def plan_partitions(request: PartitionRequest, sm_count: int, granularity: Granularity,
                    ignore_coscheduling: bool = False) -> PartitionPlan:
    """How ``request`` (``parse_partitions("16,rest")``) is made from one split of ``sm_count``
    SMs grouped by ``granularity``: the piece size, the pieces and each partition's SMs. Pure:
    no GPU. Raises RequestError when the request cannot be made."""
    return PartitionPlan._from_dict(
        _plan_partitions(request, sm_count, granularity, ignore_coscheduling))


def plan_scaling(sm_counts: Sequence[int], device_sms: int, granularity: Granularity,
                 round_counts: bool = False) -> tuple[ScalingCount, ...]:
    """The SM counts a ``scaling`` run measures, ascending: every size a green context has exactly
    when ``sm_counts`` is empty. Raises RequestError for a count no green context has (unless
    ``round_counts``: then rounded, and ``rounding`` says why), one named twice or one above
    ``device_sms``. Pure: no GPU."""
    return tuple(ScalingCount._from_dict(c) for c in
                 _plan_scaling(list(sm_counts), device_sms, granularity, round_counts))


def verify(device: Device, partitions: PartitionSet) -> VerifyReport:
    """Runs a %smid probe on every partition of ``partitions`` at once: the SMs each used,
    violations (overlap, or more SMs than held) and notes. ``ok`` is True when there are no
    violations."""
    return VerifyReport._from_dict(_verify(device, partitions))


def measure_contention(device: Device, partitions: PartitionSet, critical: CriticalWork,
                       background: BackgroundWork, *, samples: int = 1000, warmup: int = 50,
                       rounds: int = 10, gap_us: float = 300, rate_window_ms: float = 300,
                       placements: Sequence[str] = (), hold_launch: bool = False,
                       background_depth: int = 2, background_thread: bool = False,
                       progress: Progress | None = None) -> ContentionResult:
    """The latency of critical work while background work fills the GPU, under each placement.

    ``critical`` runs on ``partitions[0]``, ``background`` on ``partitions[1]`` (a PartitionSet of
    two, such as ``PartitionSet(device, "16,rest")``). Each is a workload object
    (``CriticalWorkload``, ``BackgroundWorkload`` or a built-in: ``kernel_critical``,
    ``gemm_critical``, ``spin_background``, ``memory_background``, ``gemm_background``) or a plain
    callable: ``critical(stream)`` enqueues one instance on the ``StreamRef`` it is given;
    ``background(stream)`` enqueues one unit and returns the work it does (a positive number).
    For torch work, launch under ``torch.cuda.stream(torch.cuda.ExternalStream(stream.handle))``.

    ``placements`` names the placements to measure (empty: all of alone, alone_green, shared,
    priority, green, green_priority, trap); ``progress`` is called with a line per step. Times
    include the launch call itself, as a caller of the work would see it, unless
    ``hold_launch``: then each sample starts once the callable has enqueued all of it.
    ``background_depth`` background launches are kept queued (1 to 64), topped up between
    critical samples, or from a thread of its own with ``background_thread`` (as a serving loop
    would launch it: its launches then meet the critical ones on the host, and in Python share
    the GIL with them). Returns
    the SMs each side got, the background's rates alone, and per placement the critical samples
    and summaries in microseconds (host, gpu, start_delay) and the background's rate.
    """
    work, bulk = _workloads(critical, background)
    return ContentionResult._from_dict(_measure_contention(
        device, partitions, work, bulk, samples=samples, warmup=warmup, rounds=rounds,
        gap_us=gap_us, rate_window_ms=rate_window_ms, placements=list(placements),
        hold_launch=hold_launch, background_depth=background_depth,
        background_thread=background_thread, progress=_progress(progress)))


def _workloads(critical: CriticalWork,
               background: BackgroundWork) -> tuple[CriticalWorkload, BackgroundWorkload]:
    """The two workloads as workload objects: plain callables are wrapped."""
    return _critical(critical, "critical"), _background(background)


def _critical(work: CriticalWork, what: str) -> CriticalWorkload:
    """A workload launched once per sample as a CriticalWorkload named `what` when it is a plain
    callable."""
    if isinstance(work, CriticalWorkload):
        return work
    if not callable(work):
        raise TypeError(f"{what} is a CriticalWorkload or a callable taking a stream")
    # The binding drops what the launch returns, so a callable returning something is fine.
    return CriticalWorkload(cast("Callable[[StreamRef], None]", work), name=what)


def _background(work: BackgroundWork) -> BackgroundWorkload:
    """Background work as a BackgroundWorkload: a plain callable is wrapped."""
    if isinstance(work, BackgroundWorkload):
        return work
    if not callable(work):
        raise TypeError("background is a BackgroundWorkload or a callable taking a stream "
                        "and returning the work it enqueued")
    return BackgroundWorkload(work)


def _progress(progress: Progress | None) -> Callable[[str], None] | None:
    """The progress callable as the bindings declare it: they drop what it returns."""
    return cast("Callable[[str], None] | None", progress)


def tune(device: Device, critical: CriticalWork, background: BackgroundWork, *,
         p99_us: float | None = None, p99_times_alone: float | None = None,
         within_best: float | None = None,
         search: Literal["guided", "exhaustive", "both"] = "guided", samples: int = 300,
         confirm_samples: int = 1000, rounds: int = 2, gap_us: float = 100,
         sizes: Sequence[int] = (), repeat: bool = True, hold_launch: bool = True,
         progress: Progress | None = None) -> TuneResult:
    """Chooses the split by measurement: the critical work on N SMs and the background on the
    rest, for the sizes N this GPU makes (or ``sizes``), each measured with both running.

    Workloads as for ``measure_contention``. One objective: ``p99_us`` (the critical p99 at most
    that many us), ``p99_times_alone`` (at most that factor over its p99 alone on the whole GPU)
    or ``within_best`` (the smallest partition within that fraction of the best split's p99).
    ``search``: "guided" (bisection over the sizes, then the choice and its neighbours
    re-measured with ``confirm_samples``), "exhaustive" (every size with ``confirm_samples``) or
    "both" (the result then has both answers and their times). ``repeat`` measures the chosen
    split once more (``repeat_meets``: whether it meets the objective again); ``hold_launch``
    starts each sample once the callable has enqueued all of it, so that Python's launch time is
    not counted. The result's ``split`` ("24,rest", or None when no split meets the objective) is
    what ``PartitionSet.create(device, result.split)`` makes; ``reason`` says why, ``curve`` has
    per size the critical p99 and background rate, with ``pareto``, ``alone`` and each search's
    answer.
    """
    work, bulk = _workloads(critical, background)
    return TuneResult._from_dict(_tune(
        device, work, bulk, p99_us=p99_us, p99_times_alone=p99_times_alone,
        within_best=within_best, search=search, samples=samples,
        confirm_samples=confirm_samples, rounds=rounds, gap_us=gap_us, sizes=list(sizes),
        repeat=repeat, hold_launch=hold_launch, progress=_progress(progress)))


def measure_adaptive(device: Device, critical: CriticalWork,
                     background: BackgroundWork | None = None, *, critical_sms: int = 16,
                     shrink_to: Sequence[int] = (8, 16, 32, 64),
                     policies: Sequence[str] = ("lead", "lead-wait", "reactive",
                                                "reactive-wait", "narrow"),
                     lead_us: float = 100, queue_depth: int = 2, samples: int = 1000,
                     warmup: int = 50, rounds: int = 10, gap_us: float = 300,
                     rate_window_ms: float = 300,
                     progress: Progress | None = None) -> AdaptiveResult:
    """Background work whose partition shrinks around each arrival of critical work, against the
    same background held on its static partition (``greenctx bench adaptive``).

    A pool of layouts ``C,rest`` (wide) and ``C,N,rest`` (narrow: the background on N SMs of
    ``shrink_to``) is made once; the critical work runs on the same ``critical_sms`` SMs in all of
    them. ``background`` is launched one chunk at a time (at most ``queue_depth`` queued) on the
    stream of the layout in use, so keep a chunk short: a ``BackgroundWorkload`` or a callable
    that enqueues one chunk and returns the work it does; the default is
    ``copy_chunks(device)``, a 64 MiB streaming copy. ``critical`` as for
    ``measure_contention``, launched once per arrival, ``gap_us`` apart on average (+-50%). Each
    of ``policies`` says when the host switches to the narrow layout: ``lead`` (``lead_us``
    before the arrival, which it knows), ``reactive`` (at the arrival), and their ``-wait`` forms
    (which also wait for the wide chunks still queued before the critical launch). A sample's
    latency runs from its arrival to its completion seen by the host, the critical call's own
    time on the host included.

    Returns the SMs each layout got, ``critical_shared``, the background's rates alone
    (``alone``), per configuration (``alone``, ``static``, ``adaptive-N-POLICY``) the critical
    samples and summaries in microseconds, the background's rate and the waits, and
    ``verdicts`` against the targets (isolation: p99 / p99 alone at most ``isolation_limit``;
    background: rate / static rate at least ``background_limit``).
    """
    work = _critical(critical, "critical")
    bulk = copy_chunks(device) if background is None else _background(background)
    return AdaptiveResult._from_dict(_measure_adaptive(
        device, work, bulk, critical_sms=critical_sms, shrink_to=list(shrink_to),
        policies=list(policies), lead_us=lead_us, queue_depth=queue_depth, samples=samples,
        warmup=warmup, rounds=rounds, gap_us=gap_us, rate_window_ms=rate_window_ms,
        progress=_progress(progress)))


def scaling(device: Device, workload: CriticalWork, sm_counts: Sequence[int] = (), *,
            samples: int = 100, warmup: int = 10, rounds: int = 5, gap_us: float = 0,
            round_counts: bool = False, hold_launch: bool = True,
            progress: Progress | None = None) -> ScalingResult:
    """How the time of one piece of work changes with the SMs it may use.

    ``workload`` (a ``CriticalWorkload``, a built-in such as ``kernel_critical`` or a callable that
    enqueues one instance on the ``StreamRef`` it is given) runs alone on a green context of each
    SM count of ``sm_counts`` (empty: every size this GPU makes; see ``plan_scaling``), one launch
    at a time. A count no green context has is refused (``RequestError`` naming the sizes next to
    it) unless ``round_counts``, which measures it at the planner's size and says so in the
    point's ``rounding``. ``hold_launch``: each sample starts once the callable has enqueued all
    of it, so Python's launch time is not counted. Returns ``reference_sms`` (the largest count)
    and per count, ascending, ``requested``, ``sms``, ``rounding``, ``time`` (samples and
    summaries in microseconds: host, gpu, start_delay), ``speedup`` (p50 device time at the
    largest count / here), ``ideal`` (sms / the largest) and ``efficiency`` (speedup / ideal).
    """
    return ScalingResult._from_dict(_scaling(
        device, _critical(workload, "workload"), list(sm_counts), samples=samples,
        warmup=warmup, rounds=rounds, gap_us=gap_us, round_counts=round_counts,
        hold_launch=hold_launch, progress=_progress(progress)))


def measure_bandwidth(device: Device, *, sizes: Sequence[int] = (),
                      ops: Sequence[str] = ("read", "write", "copy"),
                      levels: Sequence[str] = ("dram", "l2"), buffer_bytes: int = 1073741824,
                      repeats: int = 10, beside: bool = True,
                      progress: Progress | None = None) -> BandwidthResult:
    """Memory bandwidth against a green context's SMs (``greenctx bench bandwidth``).

    For each N of ``sizes`` (each the first piece of an N,rest split this GPU makes, increasing;
    empty: every such N) and for the whole device, a kernel of 8 blocks of 256 threads per SM
    streams over buffers of its own: ``read``, ``write`` or ``copy`` (twice the bytes), from DRAM
    (buffers of ``buffer_bytes``, at least 4x L2) or from L2 (buffers of a quarter of L2, streamed
    over until they move as many bytes). Each rate is the bytes of ``repeats`` timed kernels over
    their time. With ``beside``, each N is measured again while the rest of the GPU runs the same
    kernel, and the rest the other way round. Raises ``RequestError`` for a size the GPU does not
    make, sizes not increasing, an unknown or repeated op or level, or buffers too small.
    """
    return BandwidthResult._from_dict(_measure_bandwidth(
        device, sizes=list(sizes), ops=list(ops), levels=list(levels), buffer_bytes=buffer_bytes,
        repeats=repeats, beside=beside, progress=_progress(progress)))
