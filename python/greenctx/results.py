# SPDX-License-Identifier: Apache-2.0
"""The typed results of greenctx's Python API.

The compiled module returns plain dicts; the wrappers in ``greenctx/__init__.py`` turn them into
the frozen dataclasses below, so that a type checker and an editor know every field. The field
names are the dicts' keys, so ``dataclasses.asdict(result)`` gives the dict back (sequences as
tuples), ready for ``json.dump``. Sequences are tuples so that a result cannot change under the
code that holds it.

Times are in microseconds unless a name says otherwise; background rates are in the workload's
unit (``background_unit``: its work per second divided by its ``unit_scale``).

Building a type from a dict is strict: a key the type does not have, or a field the dict lacks,
raises TypeError, since the bindings and this module are built together and must agree.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Literal, Mapping, NamedTuple, TypeVar

_T = TypeVar("_T")


def _build(cls: Callable[..., _T], d: Mapping[str, Any],
           **convert: Callable[[Any], Any]) -> _T:
    """``cls`` from the bindings' dict ``d``, the fields named in ``convert`` converted first."""
    values = dict(d)
    for name, conversion in convert.items():
        values[name] = conversion(values[name])
    return cls(**values)


def _each(conversion: Callable[[Any], _T]) -> Callable[[Any], tuple[_T, ...]]:
    """A conversion of a list: each item converted, as a tuple."""
    return lambda items: tuple(conversion(item) for item in items)


def _optional(conversion: Callable[[Any], _T]) -> Callable[[Any], _T | None]:
    """A conversion that keeps None (what the bindings give for a value not measured)."""
    return lambda value: None if value is None else conversion(value)


# --- What several measurements share ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Summary:
    """The summary of one series of samples."""

    count: int
    min: float
    p50: float
    p90: float
    p99: float
    max: float
    mean: float
    stdev: float  # sample standard deviation (0 for fewer than 2 samples)
    noise: float  # stdev / mean (0 when the mean is 0)

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> Summary:
        return _build(cls, d)


@dataclasses.dataclass(frozen=True)
class CriticalStats:
    """One critical series: its samples in microseconds and their summaries. ``host_us`` runs
    from the launch (or arrival) to the completion the host sees, ``gpu_us`` between device
    events around the launch, ``start_delay_us`` is ``gpu_us`` less the work's own execution
    (empty when the workload does not report its execution time)."""

    host_us: tuple[float, ...]
    gpu_us: tuple[float, ...]
    start_delay_us: tuple[float, ...]
    host: Summary
    gpu: Summary
    start_delay: Summary

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> CriticalStats:
        return _build(cls, d, host_us=tuple, gpu_us=tuple, start_delay_us=tuple,
                      host=Summary._from_dict, gpu=Summary._from_dict,
                      start_delay=Summary._from_dict)


@dataclasses.dataclass(frozen=True)
class BackgroundRate:
    """Background work completed over a time: whole launches only."""

    work: float  # units of work completed
    seconds: float  # over this time
    rate: float  # work / seconds in the workload's unit

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> BackgroundRate:
        return _build(cls, d)


# --- measure_contention --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ContentionConfig:
    """What a contention measurement was asked."""

    samples: int
    warmup: int
    rounds: int
    gap_us: int
    rate_window_ms: int
    hold_launch: bool
    background_depth: int  # background launches kept queued
    background_thread: bool  # the background fed from a thread of its own

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> ContentionConfig:
        return _build(cls, d)


@dataclasses.dataclass(frozen=True)
class Placement:
    """One placement of a contention measurement: where the two workloads ran, and what the
    critical work and the background did there."""

    name: str  # alone, alone_green, shared, priority, green, green_priority or trap
    description: str
    trap: bool  # shown as the mistake it is
    critical: CriticalStats | None
    background: BackgroundRate | None  # None where the critical work ran alone

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> Placement:
        return _build(cls, d, critical=_optional(CriticalStats._from_dict),
                      background=_optional(BackgroundRate._from_dict))


@dataclasses.dataclass(frozen=True)
class ContentionResult:
    """What ``measure_contention`` measured."""

    critical: str  # the critical workload's name
    background: str  # the background workload's name
    device_sms: int
    critical_sms: int
    background_sms: int
    background_unit: str
    background_full: BackgroundRate  # the background alone on the whole GPU
    background_share: BackgroundRate  # the background alone on its partition
    background_shape: str  # the workload's note on its shape for its partition, if any
    background_launch_work: float  # the work of one background launch
    config: ContentionConfig
    placements: tuple[Placement, ...]

    def placement(self, name: str) -> Placement:
        """The placement called ``name``; KeyError naming those measured when there is none."""
        for p in self.placements:
            if p.name == name:
                return p
        raise KeyError(f"no placement {name!r} was measured: "
                       f"{', '.join(p.name for p in self.placements)}")

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> ContentionResult:
        return _build(cls, d, background_full=BackgroundRate._from_dict,
                      background_share=BackgroundRate._from_dict,
                      config=ContentionConfig._from_dict,
                      placements=_each(Placement._from_dict))


# --- tune ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TunePoint:
    """One measurement of the split ``critical_sms,rest``."""

    critical_sms: int
    background_sms: int
    critical: Summary  # the critical work's device time
    p99_low: float | None  # about 95% confidence interval of the p99, when known
    p99_high: float | None
    background_rate: float
    seconds: float  # what measuring it took

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> TunePoint:
        return _build(cls, d, critical=Summary._from_dict)


@dataclasses.dataclass(frozen=True)
class TuneAnswer:
    """What one search of ``tune`` found."""

    chosen: int | None  # critical SMs of the chosen split; None when none met the objective
    closest: int | None  # when none met it: the split with the lowest p99 measured
    reason: str
    limit_us: float  # the p99 bound the objective came to
    seconds: float
    measured: tuple[TunePoint, ...]  # in measuring order

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> TuneAnswer:
        return _build(cls, d, measured=_each(TunePoint._from_dict))


@dataclasses.dataclass(frozen=True)
class TuneResult:
    """What ``tune`` found. ``split`` is the answer to pass to ``PartitionSet.create``."""

    objective: str  # the objective in words
    critical: str
    background: str
    background_unit: str
    device_sms: int
    candidates: tuple[int, ...]  # the sizes considered
    alone: Summary  # the critical work alone on the whole GPU
    guided: TuneAnswer | None  # None when that search did not run
    exhaustive: TuneAnswer | None
    curve: tuple[TunePoint, ...]  # per size, its best-sampled measurement, by size
    pareto: tuple[int, ...]  # sizes no other size beats on both p99 and background rate
    split: str | None  # "24,rest"; None when no split meets the objective
    reason: str
    repeat: TunePoint | None  # the chosen split measured once more
    repeat_meets: bool  # whether that measurement meets the objective too
    hold_launch: bool

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> TuneResult:
        answer = _optional(TuneAnswer._from_dict)
        return _build(cls, d, candidates=tuple, alone=Summary._from_dict, guided=answer,
                      exhaustive=answer, curve=_each(TunePoint._from_dict), pareto=tuple,
                      repeat=_optional(TunePoint._from_dict))


# --- measure_adaptive ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AdaptiveAlone:
    """The background's rate alone (no critical work) on ``sms`` SMs."""

    sms: int
    rate: BackgroundRate

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> AdaptiveAlone:
        return _build(cls, d, rate=BackgroundRate._from_dict)


@dataclasses.dataclass(frozen=True)
class AdaptiveConfiguration:
    """One configuration of the adaptive measurement: ``alone``, ``static`` or
    ``adaptive-N-POLICY``."""

    name: str
    description: str
    shrink_to: int  # N; 0 for alone and static
    policy: str  # empty for alone and static
    critical: CriticalStats  # host: from the arrival to the completion the host sees
    background: BackgroundRate | None  # None for alone
    wait_us: tuple[float, ...]  # -wait policies: host time waiting for wide chunks, per sample

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> AdaptiveConfiguration:
        return _build(cls, d, critical=CriticalStats._from_dict,
                      background=_optional(BackgroundRate._from_dict), wait_us=tuple)


@dataclasses.dataclass(frozen=True)
class AdaptiveVerdict:
    """A configuration with a background against the targets: isolation (critical p99 / p99
    alone) at most ``isolation_limit``, background rate / static rate at least
    ``background_limit``."""

    name: str
    available: bool  # whether alone (and, for the ratio, static) were measured
    isolation: float | None  # None when not available
    background_ratio: float | None
    isolation_met: bool
    background_met: bool
    met: bool

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> AdaptiveVerdict:
        return _build(cls, d)


@dataclasses.dataclass(frozen=True)
class AdaptiveResult:
    """What ``measure_adaptive`` measured."""

    critical: str
    background: str
    background_unit: str
    device_sms: int
    critical_sms: int
    wide_sms: int  # the background's SMs in the wide layout
    narrow_sms: tuple[int, ...]  # per shrink_to value
    critical_shared: bool  # the critical partition is one green context in every layout
    critical_sharing: str  # how that was checked, or what differs
    alone: tuple[AdaptiveAlone, ...]  # the background alone: wide first, then each narrow
    configurations: tuple[AdaptiveConfiguration, ...]
    verdicts: tuple[AdaptiveVerdict, ...]  # one per configuration with a background
    isolation_limit: float
    background_limit: float

    def configuration(self, name: str) -> AdaptiveConfiguration:
        """The configuration called ``name``; KeyError naming those measured when there is
        none."""
        for c in self.configurations:
            if c.name == name:
                return c
        raise KeyError(f"no configuration {name!r} was measured: "
                       f"{', '.join(c.name for c in self.configurations)}")

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> AdaptiveResult:
        return _build(cls, d, narrow_sms=tuple, alone=_each(AdaptiveAlone._from_dict),
                      configurations=_each(AdaptiveConfiguration._from_dict),
                      verdicts=_each(AdaptiveVerdict._from_dict))


# --- scaling and plan_scaling --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ScalingCount:
    """One SM count a scaling run measures (``plan_scaling``)."""

    requested: int  # the count as asked
    sms: int  # the green context's size the planner gives it
    rounding: str  # why sms differs from requested; empty when equal

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> ScalingCount:
        return _build(cls, d)


@dataclasses.dataclass(frozen=True)
class ScalingPoint:
    """The workload on one SM count."""

    requested: int
    sms: int  # SMs of the green context it ran on
    rounding: str
    time: CriticalStats
    speedup: float  # p50 device time at the largest count / here (1 at the largest)
    ideal: float  # sms / the largest count's SMs
    efficiency: float  # speedup / ideal

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> ScalingPoint:
        return _build(cls, d, time=CriticalStats._from_dict)


@dataclasses.dataclass(frozen=True)
class ScalingResult:
    """What ``scaling`` measured."""

    workload: str
    device_sms: int
    reference_sms: int  # the largest count measured: speed-ups are against it
    points: tuple[ScalingPoint, ...]  # by SM count, ascending

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> ScalingResult:
        return _build(cls, d, points=_each(ScalingPoint._from_dict))


@dataclasses.dataclass(frozen=True)
class BandwidthRate:
    """Bytes moved over the time of the timed kernels."""

    bytes: float
    seconds: float
    gbs: float  # GB/s (10^9 bytes per second)

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> BandwidthRate:
        return _build(cls, d)


@dataclasses.dataclass(frozen=True)
class BandwidthPoint:
    """One SM count, op and level of the bandwidth curve."""

    sms: int
    whole_device: bool  # every SM, on the primary context (no rest)
    op: str  # read, write or copy
    level: str  # dram or l2
    footprint: int  # bytes of each buffer
    passes: int  # over the footprint per kernel
    alone: BandwidthRate
    rest_sms: int  # the other piece of the split (0: whole device)
    beside: BandwidthRate | None  # while the rest does the same (None: beside=False)
    rest_alone: BandwidthRate | None
    rest_beside: BandwidthRate | None  # the rest while this partition does the same
    overlapped: bool  # the other side ran all through each measured side's time

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> BandwidthPoint:
        rate = _optional(BandwidthRate._from_dict)
        return _build(cls, d, alone=BandwidthRate._from_dict, beside=rate, rest_alone=rate,
                      rest_beside=rate)


@dataclasses.dataclass(frozen=True)
class BandwidthResult:
    """What ``measure_bandwidth`` measured."""

    device_sms: int
    l2_bytes: int
    sizes: tuple[int, ...]  # the N of each N,rest split measured
    buffer_bytes: int  # each DRAM buffer
    repeats: int  # timed kernels per rate
    points: tuple[BandwidthPoint, ...]  # by level, op, then SM count (whole device last)

    def point(self, level: str, op: str, sms: int) -> BandwidthPoint:
        """The point of ``level``, ``op`` and ``sms`` SMs; KeyError when it was not measured."""
        for p in self.points:
            if (p.level, p.op, p.sms) == (level, op, sms):
                return p
        raise KeyError(f"no {level} {op} point on {sms} SMs was measured")

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> BandwidthResult:
        return _build(cls, d, sizes=tuple, points=_each(BandwidthPoint._from_dict))


# --- plan_partitions -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PlannedPart:
    """One partition of a plan."""

    requested: int  # as asked; 0 for the rest
    planned: int  # the SMs it gets when the driver gives every piece (the rest: at most)
    rest: bool
    first_piece: int  # index of its first piece among the split's groups
    pieces: int  # consecutive pieces (0 for the rest: it is the remainder)
    rounding: str  # why planned differs from requested; empty otherwise

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> PlannedPart:
        return _build(cls, d)


@dataclasses.dataclass(frozen=True)
class PartitionPlan:
    """How a request is made from one split (``plan_partitions``)."""

    piece_size: int  # the split's piece size in SMs
    groups: int  # the pieces the split makes
    parts: tuple[PlannedPart, ...]

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> PartitionPlan:
        return _build(cls, d, parts=_each(PlannedPart._from_dict))


# --- verify, query_driver and Pool.stats ---------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class VerifiedPartition:
    """What one partition's %smid probe saw."""

    label: str  # "16" or "rest"
    obtained: int  # SMs its green context holds
    sms: tuple[int, ...]  # the distinct SM ids its probe ran on, sorted

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> VerifiedPartition:
        return _build(cls, d, sms=tuple)


@dataclasses.dataclass(frozen=True)
class VerifyReport:
    """The %smid verification of a partition set (``verify``)."""

    parts: tuple[VerifiedPartition, ...]
    violations: tuple[str, ...]  # overlaps, or more SMs used than held; empty when none
    notes: tuple[str, ...]  # worth knowing, not violations
    ok: bool  # no violations

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> VerifyReport:
        return _build(cls, d, parts=_each(VerifiedPartition._from_dict), violations=tuple,
                      notes=tuple)


class DriverFeature(NamedTuple):
    """How one driver feature is available: a pair, as ``status, native_since = feature``."""

    # native: the driver has it; greenctx: greenctx provides it over older entry points;
    # missing: neither (calls that need it raise UnsupportedError).
    status: Literal["native", "greenctx", "missing"]
    native_since: int  # the driver version that has it natively, e.g. 13010


@dataclasses.dataclass(frozen=True)
class DriverInfo:
    """The loaded driver (``query_driver``)."""

    version: int  # e.g. 13000; format_cuda_version(version) gives "13.0"
    library: str  # the file opened: libcuda.so.1 unless GREENCTX_LIBCUDA names another
    features: Mapping[str, DriverFeature]  # by short name, e.g. "heterogeneous_split"

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> DriverInfo:
        return _build(cls, d, features=lambda features: {
            name: DriverFeature(*pair) for name, pair in features.items()})


@dataclasses.dataclass(frozen=True)
class PoolStats:
    """What making a Pool took (``Pool.stats``)."""

    layouts: int
    partitions: int  # over all layouts, shared ones counted in each
    contexts: int  # green contexts made: one per distinct set of SMs
    streams: int  # streams made: streams_per_partition per context
    creation_ms: float  # wall time of the creation
    # Free device memory before the creation minus after: other users of the GPU at the same
    # time show up in it too.
    device_memory_bytes: int

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> PoolStats:
        return _build(cls, d)


__all__ = [
    "AdaptiveAlone", "AdaptiveConfiguration", "AdaptiveResult", "AdaptiveVerdict",
    "BackgroundRate", "BandwidthPoint", "BandwidthRate", "BandwidthResult", "ContentionConfig", "ContentionResult", "CriticalStats", "DriverFeature",
    "DriverInfo", "PartitionPlan", "Placement", "PlannedPart", "PoolStats", "ScalingCount",
    "ScalingPoint", "ScalingResult", "Summary", "TuneAnswer", "TunePoint", "TuneResult",
    "VerifiedPartition", "VerifyReport",
]
