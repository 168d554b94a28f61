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
"""

import contextlib as _contextlib
import importlib.metadata as _metadata

from ._greenctx import (  # noqa: F401
    BackgroundWorkload,
    CriticalWorkload,
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
    PoolPartition,
    RequestError,
    SmGroup,
    SmResource,
    SplitResult,
    Stream,
    StreamRef,
    UnsupportedError,
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
    plan_partitions,
    plan_scaling,
    query_driver,
    round_group_size,
    split_by_count,
    spin_background,
    split_groups,
    toolkit_version,
    verify,
)

from ._greenctx import _Pool
from ._greenctx import measure_adaptive as _measure_adaptive
from ._greenctx import measure_contention as _measure_contention
from ._greenctx import scaling as _scaling
from ._greenctx import tune as _tune

try:  # the installed distribution's version: CMakeLists.txt's project(VERSION), read at build time
    __version__ = _metadata.version("greenctx")
except _metadata.PackageNotFoundError:  # the package imported from a folder, not installed
    __version__ = "unknown"


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

    def __init__(self, device, layouts, streams_per_partition=2, priority=0,
                 ignore_coscheduling=False):
        if isinstance(layouts, str):
            raise TypeError("layouts is a list of layouts such as ['16,rest', 'all'], not one "
                            f"string ({layouts!r})")
        self._device = device
        self._pool = _Pool(device, list(layouts), streams_per_partition, priority,
                           ignore_coscheduling)

    @property
    def layouts(self):
        """The layouts' canonical names ('16,rest', 'all'), in the order given."""
        return self._pool.names

    @property
    def current(self):
        """The name of the layout in use."""
        return self._pool.names[self._pool.current_index]

    def _index(self, layout):
        if layout is None:
            return self._pool.current_index
        if isinstance(layout, int):
            if not 0 <= layout < len(self._pool.names):
                raise IndexError(f"layout index {layout} is out of range: the pool has "
                                 f"{len(self._pool.names)} layouts")
            return layout
        return self._pool.index_of(layout)

    def switch(self, layout):
        """Make ``layout`` (a name or an index) the one in use; returns the previous one's name.
        Raises RequestError naming the pool's layouts when it has no such layout."""
        return self._pool.names[self._pool.use(self._index(layout))]

    @_contextlib.contextmanager
    def use(self, layout, drain=False):
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

    def partitions(self, layout=None):
        """The partitions (PoolPartition: label, sm_count, context, streams, slot) of ``layout``
        (a name or index; default: the one in use)."""
        return self._pool.partitions(self._index(layout))

    def streams(self, partition, layout=None):
        """The streams (StreamRef) of partition ``partition`` (an index) of ``layout``."""
        return self.partitions(layout)[partition].streams

    def torch_streams(self, partition, layout=None):
        """The streams of a partition as ``torch.cuda.ExternalStream`` objects (imports torch)."""
        import torch  # optional dependency: only this helper needs it

        device = torch.device("cuda", self._device.ordinal)
        return [torch.cuda.ExternalStream(s.handle, device=device)
                for s in self.streams(partition, layout)]

    def drain(self, from_layout, into_layout=None):
        """Make every stream of ``into_layout`` (default: the one in use) wait, on the device, for
        all work submitted so far to the streams of ``from_layout``. Does not block the host."""
        self._pool.drain(self._index(from_layout), self._index(into_layout))

    def synchronize(self, layout=None):
        """Block until the work submitted so far to the streams of ``layout`` has finished."""
        self._pool.synchronize(self._index(layout))

    def stats(self):
        """dict: layouts, partitions, contexts (green contexts made), streams, creation_ms and
        device_memory_bytes (free memory before creation minus after)."""
        return self._pool.stats()

    def __repr__(self):
        return f"Pool(layouts={self.layouts!r}, current={self.current!r})"


def measure_contention(device, partitions, critical, background, **options):
    """The latency of critical work while background work fills the GPU, under each placement.

    ``critical`` runs on ``partitions[0]``, ``background`` on ``partitions[1]`` (a PartitionSet of
    two, such as ``PartitionSet(device, "16,rest")``). Each is a workload object
    (``CriticalWorkload``, ``BackgroundWorkload`` or a built-in: ``kernel_critical``,
    ``gemm_critical``, ``spin_background``, ``memory_background``, ``gemm_background``) or a plain
    callable: ``critical(stream)`` enqueues one instance on the ``StreamRef`` it is given;
    ``background(stream)`` enqueues one unit and returns the work it does (a positive number).
    For torch work, launch under ``torch.cuda.stream(torch.cuda.ExternalStream(stream.handle))``.

    Options (keywords): ``samples`` (1000), ``warmup`` (50), ``rounds`` (10), ``gap_us`` (300),
    ``rate_window_ms`` (300), ``placements`` (names; all by default: alone, alone_green, shared,
    priority, green, green_priority, trap) and ``progress`` (called with a line per step). Returns
    a dict: the SMs each side got, the background's rates alone, and per placement the critical
    samples and summaries in microseconds (host, gpu, start_delay) and the background's rate.
    Times include the launch call itself, as a caller of the work would see it.
    """
    critical, background = _workloads(critical, background)
    return _measure_contention(device, partitions, critical, background, **options)


def _workloads(critical, background):
    """The two workloads as workload objects: plain callables are wrapped."""
    return _critical(critical, "critical"), _background(background)


def _critical(work, what):
    """A workload launched once per sample as a CriticalWorkload named `what` when it is a plain
    callable."""
    if isinstance(work, CriticalWorkload):
        return work
    if not callable(work):
        raise TypeError(f"{what} is a CriticalWorkload or a callable taking a stream")
    return CriticalWorkload(work, name=what)


def _background(work):
    """Background work as a BackgroundWorkload: a plain callable is wrapped."""
    if isinstance(work, BackgroundWorkload):
        return work
    if not callable(work):
        raise TypeError("background is a BackgroundWorkload or a callable taking a stream "
                        "and returning the work it enqueued")
    return BackgroundWorkload(work)


def tune(device, critical, background, **options):
    """Chooses the split by measurement: the critical work on N SMs and the background on the
    rest, for the sizes N this GPU makes, each measured with both running.

    Workloads as for ``measure_contention``. One objective: ``p99_us`` (the critical p99 at most
    that many us), ``p99_times_alone`` (at most that factor over its p99 alone on the whole GPU)
    or ``within_best`` (the smallest partition within that fraction of the best split's p99).
    ``search``: "guided" (default: bisection over the sizes, then the choice and its neighbours
    re-measured with ``confirm_samples``), "exhaustive" (every size with ``confirm_samples``) or
    "both" (the report then has both answers and their times). Other options: ``samples``
    (300), ``confirm_samples`` (1000), ``rounds`` (2), ``gap_us`` (100), ``sizes`` (the critical
    sizes to consider), ``progress``. Returns a dict: ``split`` ("24,rest", or None when no split
    meets the objective), ``reason``, ``curve`` (per size: critical p99 and background rate),
    ``pareto``, ``alone`` and each search's answer. ``PartitionSet.create(device, r["split"])``
    makes the chosen split.
    """
    critical, background = _workloads(critical, background)
    return _tune(device, critical, background, **options)


def measure_adaptive(device, critical, background=None, **options):
    """Background work whose partition shrinks around each arrival of critical work, against the
    same background held on its static partition (``greenctx bench adaptive``).

    A pool of layouts ``C,rest`` (wide) and ``C,N,rest`` (narrow: the background on N SMs) is made
    once; the critical work runs on the same C SMs in all of them. ``background`` is launched one
    chunk at a time on the stream of the layout in use, so keep a chunk short: a
    ``BackgroundWorkload`` or a callable that enqueues one chunk and returns the work it does; the
    default is ``copy_chunks(device)``, a 64 MiB streaming copy. ``critical`` as for
    ``measure_contention``, launched once per arrival. Each policy says when the host switches to
    the narrow layout: ``lead`` (``lead_us`` before the arrival, which it knows), ``reactive`` (at
    the arrival), and their ``-wait`` forms (which also wait for the wide chunks still queued
    before the critical launch). A sample's latency runs from its arrival to its completion seen
    by the host, the critical call's own time on the host included.

    Options (keywords): ``critical_sms`` (16), ``shrink_to`` ([8, 16, 32, 64]), ``policies`` (all
    four names), ``lead_us`` (100), ``queue_depth`` (2), ``samples`` (1000), ``warmup`` (50),
    ``rounds`` (10), ``gap_us`` (300: the mean time between arrivals, +-50%), ``rate_window_ms``
    (300) and ``progress``. Returns a dict: the SMs each layout got, ``critical_shared``, the
    background's rates alone (``alone``), per configuration (``alone``, ``static``,
    ``adaptive-N-POLICY``) the critical samples and summaries in microseconds, the background's
    rate and the waits, and ``verdicts`` against the targets (isolation: p99 / p99 alone at most
    ``isolation_limit``; background: rate / static rate at least ``background_limit``).
    """
    critical = _critical(critical, "critical")
    background = copy_chunks(device) if background is None else _background(background)
    return _measure_adaptive(device, critical, background, **options)


def scaling(device, workload, sm_counts=(), **options):
    """How the time of one piece of work changes with the SMs it may use.

    ``workload`` (a ``CriticalWorkload``, a built-in such as ``kernel_critical`` or a callable that
    enqueues one instance on the ``StreamRef`` it is given) runs alone on a green context of each
    SM count of ``sm_counts`` (empty: every size this GPU makes; see ``plan_scaling``), one launch
    at a time. A count no green context has is refused (``RequestError`` naming the sizes next to
    it) unless ``round_counts=True``, which measures it at the planner's size and says so in the
    point's ``rounding``. Options: ``samples`` (100), ``warmup`` (10), ``rounds`` (5), ``gap_us``
    (0), ``round_counts`` (False), ``hold_launch`` (True: each sample starts once the callable
    has enqueued all of it, so Python's launch time is not counted) and ``progress``. Returns a
    dict: ``reference_sms`` (the largest count) and per count, ascending, ``requested``, ``sms``,
    ``rounding``, ``time`` (samples and summaries in microseconds: host, gpu, start_delay),
    ``speedup`` (p50 device time at the largest count / here), ``ideal`` (sms / the largest) and
    ``efficiency`` (speedup / ideal).
    """
    return _scaling(device, _critical(workload, "workload"), list(sm_counts), **options)
