"""greenctx: partition a GPU's SMs with CUDA green contexts (C++ core)"""

from collections.abc import Callable, Sequence
import enum
from typing import overload

from greenctx import (
    Error as Error,
    RequestError as RequestError,
    UnsupportedError as UnsupportedError
)


def toolkit_version() -> int:
    """CUDA toolkit version greenctx was built with."""

def format_cuda_version(version: int) -> str:
    """'12.5' for 12050."""

def query_driver() -> dict:
    """
    The loaded driver: version, library and each feature's (status, native_since). Raises Error when there is no driver or GPU.
    """

class Granularity:
    """How SMs can be grouped: minimum partition and alignment."""

    def __init__(self) -> None: ...

    @property
    def min_partition(self) -> int: ...

    @min_partition.setter
    def min_partition(self, arg: int, /) -> None: ...

    @property
    def alignment(self) -> int: ...

    @alignment.setter
    def alignment(self, arg: int, /) -> None: ...

    def __repr__(self) -> str: ...

def documented_granularity(cc_major: int, cc_minor: int = 0, ignore_coscheduling: bool = False) -> Granularity: ...

def round_group_size(requested: int, granularity: Granularity) -> tuple:
    """(size the driver gives, reason or '')."""

class PartitionRequest:
    """SM counts in order, and whether the rest forms a last partition."""

    @property
    def counts(self) -> list[int]: ...

    @property
    def rest(self) -> bool: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

def parse_partitions(text: str) -> PartitionRequest:
    """
    Parse '16,rest' or '8,8,rest'. Raises RequestError naming the bad item.
    """

def plan_partitions(request: PartitionRequest, sm_count: int, granularity: Granularity, ignore_coscheduling: bool = False) -> dict:
    """
    How a request is made from one split (pure). Raises RequestError when it cannot be.
    """

class SmResource:
    """A set of SMs as the driver describes it (a plain value)."""

    @property
    def sm_count(self) -> int: ...

    @property
    def min_partition_size(self) -> int: ...

    @property
    def coscheduled_alignment(self) -> int: ...

    def __repr__(self) -> str: ...

class EventFlags(enum.Flag):
    """Event creation flags."""

    NONE = 0

    BLOCKING_SYNC = 1

    DISABLE_TIMING = 2

class Event:
    """
    A CUDA event, created in the device's primary context; usable with every context of the device.
    """

    def __init__(self, context: ExecutionContext, flags: EventFlags = EventFlags.NONE) -> None: ...

    def record(self, stream: Stream) -> None:
        """Capture the work submitted to the stream so far."""

    def synchronize(self) -> None:
        """Block until the recorded work has finished."""

    def ready(self) -> bool:
        """True when the recorded work has finished."""

    @property
    def handle(self) -> int: ...

def elapsed_ms(start: Event, end: Event) -> float: ...

class ExecutionContext:
    """
    The primary context of a device or a green context. No call depends on the thread's current context.
    """

    @property
    def is_green(self) -> bool: ...

    @property
    def id(self) -> int: ...

    def sms(self) -> SmResource:
        """The SMs this context may use."""

    def create_stream(self, non_blocking: bool = False, priority: int = 0) -> Stream:
        """
        A stream on this context (priority is clamped to the device range). The stream keeps the context alive.
        """

    def record(self, event: Event) -> None:
        """Capture all work submitted to this context so far in the event."""

    def wait(self, event: Event) -> None:
        """Make all later work of this context wait for the event."""

    def synchronize(self) -> None:
        """Block until this context's work so far has finished."""

class GreenContext(ExecutionContext):
    """
    A green context. Those of a PartitionSet belong to it; GreenContext.create makes one that this object owns (destroyed with it: keep it, re-creating leaks ~4 MiB on driver 580).
    """

    @staticmethod
    def create(pieces: Sequence[SmResource]) -> GreenContext:
        """
        A green context over SM pieces of one split (a group's pieces, or several groups and the remainder of one split call).
        """

class SplitResult:
    """What split_by_count gave."""

    @property
    def groups(self) -> list[SmResource]: ...

    @property
    def remainder(self) -> SmResource: ...

    @property
    def explanation(self) -> str: ...

def split_by_count(resource: SmResource, groups: int, min_count: int, ignore_coscheduling: bool = False) -> SplitResult:
    """
    Up to `groups` equal groups of at least `min_count` SMs, plus a remainder (cuDevSmResourceSplitByCount). Sizes are rounded up to the granularity; fewer groups when the SMs run out.
    """

class GroupParams:
    """One group of a heterogeneous split (cudaDevSmResourceGroupParams)."""

    def __init__(self, sm_count: int = 0, coscheduled: int = 0, preferred: int = 0, backfill: bool = False) -> None:
        """
        sm_count 0 discovers as many SMs as fit; coscheduled and preferred 0 take the defaults.
        """

    @property
    def sm_count(self) -> int: ...

    @sm_count.setter
    def sm_count(self, arg: int, /) -> None: ...

    @property
    def coscheduled(self) -> int: ...

    @coscheduled.setter
    def coscheduled(self, arg: int, /) -> None: ...

    @property
    def preferred(self) -> int: ...

    @preferred.setter
    def preferred(self, arg: int, /) -> None: ...

    @property
    def backfill(self) -> bool: ...

    @backfill.setter
    def backfill(self, arg: bool, /) -> None: ...

    def __eq__(self, arg: GroupParams, /) -> bool: ...

    def __repr__(self) -> str: ...

def parse_groups(text: str) -> list[GroupParams]:
    """Group parameters from text: '16:cosched=2:pref=2 0:backfill' (pure)."""

class SmGroup:
    """One group (or the remainder) of split_groups."""

    @property
    def pieces(self) -> list[SmResource]: ...

    @property
    def coscheduled(self) -> int: ...

    @property
    def sm_count(self) -> int: ...

    def __repr__(self) -> str: ...

class GroupSplit:
    """What split_groups gave."""

    @property
    def params(self) -> list[GroupParams]: ...

    @property
    def groups(self) -> list[SmGroup]: ...

    @property
    def remainder(self) -> SmGroup: ...

    @property
    def remainder_sms(self) -> int: ...

    @property
    def split_calls(self) -> int: ...

    @property
    def native(self) -> bool: ...

    @property
    def obtained(self) -> list[int]: ...

    @property
    def explanation(self) -> str: ...

    @property
    def advice(self) -> str:
        """
        When not every group can be made (a dry run): what the device's co-scheduled units allow and nearby requests that can be made; else empty.
        """

def split_groups(resource: SmResource, groups: object, dry_run: bool = False) -> GroupSplit:
    """
    CUDA 13.1's heterogeneous split (cudaDevSmResourceSplit) on any driver: groups as GroupParams or text ('16:cosched=2 0:backfill'), made left to right; discovery (0) and backfill supported. The result's params carry the defaults and discovered counts. Raises RequestError when a group cannot be made (unless dry_run; the message ends with advice), including a group that cannot run the clusters its coscheduled count promises (proved at the split with the occupancy calculator), Error (code 801, not supported) for co-scheduled counts the driver cannot guarantee.
    """

def max_active_sm_clusters(context: ExecutionContext, cluster_size: int) -> int:
    """
    How many clusters of cluster_size SMs (one block per SM) the context can run at once.
    """

class Stream:
    """
    A stream bound to an execution context; kernels on it use only that context's SMs. Use handle or __cuda_stream__ with other libraries (torch.cuda.ExternalStream(s.handle)).
    """

    @property
    def handle(self) -> int: ...

    def __cuda_stream__(self) -> tuple: ...

    def synchronize(self) -> None: ...

    def ready(self) -> bool: ...

    @property
    def priority(self) -> int: ...

    def sms(self) -> SmResource: ...

class Device:
    """A GPU by ordinal; retains its primary context while alive."""

    def __init__(self, ordinal: int = 0) -> None: ...

    @staticmethod
    def count() -> int: ...

    @property
    def ordinal(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def compute_capability(self) -> tuple[int, int]: ...

    @property
    def pci_bus_id(self) -> str: ...

    def sms(self) -> SmResource:
        """All SMs of the device, with minimum partition and alignment."""

    @property
    def primary_context(self) -> ExecutionContext: ...

    def memory_info(self) -> tuple[int, int]:
        """(free, total) device memory in bytes."""

class Partition:
    """
    One partition of a PartitionSet: what was asked, what it got, and its green context.
    """

    @property
    def requested(self) -> int: ...

    @property
    def rest(self) -> bool: ...

    @property
    def rounding(self) -> str: ...

    @property
    def obtained(self) -> int: ...

    @property
    def label(self) -> str: ...

    @property
    def context(self) -> GreenContext: ...

class PartitionSet:
    """
    Disjoint partitions made from one split, each with its own green context. Create once and keep it: re-creating green contexts costs ~1.5 ms and leaks ~4 MiB each on driver 580.
    """

    @staticmethod
    def create(device: Device, split: str, ignore_coscheduling: bool = False) -> PartitionSet: ...

    def __len__(self) -> int: ...

    def __getitem__(self, arg: int, /) -> Partition: ...

class StreamRef:
    """
    A stream that belongs to something else (a Pool): kernels on it use only its context's SMs. Use handle or __cuda_stream__ with other libraries (torch.cuda.ExternalStream(s.handle)). It keeps its owner alive.
    """

    @property
    def handle(self) -> int: ...

    def __cuda_stream__(self) -> tuple: ...

    def synchronize(self) -> None: ...

    def ready(self) -> bool: ...

    @property
    def priority(self) -> int: ...

    def sms(self) -> SmResource: ...

    def __eq__(self, arg: StreamRef, /) -> bool: ...

    def __hash__(self) -> int: ...

@overload
def fill_sms(stream: Stream, seconds: float) -> int: ...

@overload
def fill_sms(stream: StreamRef, seconds: float) -> int:
    """
    Fills every SM of the stream's context for `seconds` with spinning blocks, so that no other block can be resident there until they end; returns the blocks launched. Work that should run on those SMs must wait: the test of whether a library's kernels stay on a partition.
    """

@overload
def fill_sms(stream_handle: int, seconds: float) -> int:
    """
    The same for a CUDA stream given by its handle (an int, as torch's stream.cuda_stream).
    """

class PoolPartition:
    """
    One partition of a Pool layout: its green context and streams, shared with every partition of the pool that holds the same SMs (equal slot). It keeps the pool alive.
    """

    @property
    def requested(self) -> int: ...

    @property
    def rest(self) -> bool: ...

    @property
    def whole_device(self) -> bool: ...

    @property
    def rounding(self) -> str: ...

    @property
    def sm_count(self) -> int: ...

    @property
    def slot(self) -> int: ...

    @property
    def label(self) -> str: ...

    @property
    def context(self) -> ExecutionContext: ...

    @property
    def streams(self) -> list: ...

def verify(device: Device, partitions: PartitionSet) -> dict:
    """
    Run a %smid probe on every partition at once; returns the SMs each used, violations (overlap, or more SMs than held) and notes. report['ok'] is True when there are none.
    """

class CriticalWorkload:
    """
    Latency-critical work for a measurement: launch(stream) enqueues one instance on the StreamRef it is given (do not synchronize). execution_us(stream), optional, returns the instance's own execution time in us after it finished, so that start delays are reported.
    """

    def __init__(self, launch: Callable[[StreamRef], None], name: str = 'critical', execution_us: Callable[[StreamRef], float | None] | None = None) -> None: ...

    @property
    def name(self) -> str: ...

class BackgroundWorkload:
    """
    Work that keeps its SMs busy: launch(stream) enqueues one unit on the StreamRef it is given and returns the work it does (a positive number: blocks, bytes, FLOPs); rates are work per second divided by unit_scale, shown in unit.
    """

    def __init__(self, launch: Callable[[StreamRef], float], name: str = 'background', unit: str = 'units/s', unit_scale: float = 1.0) -> None: ...

    @property
    def name(self) -> str: ...

    @property
    def unit(self) -> str: ...

    @property
    def unit_scale(self) -> float: ...

def kernel_critical(device: Device, blocks: int = 8, block_time_us: float = 20) -> CriticalWorkload:
    """
    bench's kernel critical work: `blocks` blocks spinning block_time_us each, timed on the GPU.
    """

def gemm_critical(device: Device, n: int = 256) -> CriticalWorkload:
    """
    One square bf16 cuBLAS GEMM of size n as critical work (UnsupportedError without cuBLAS).
    """

def spin_background(device: Device, waves: int = 64, block_time_us: float = 200) -> BackgroundWorkload:
    """
    bench's spin background: `waves` full-GPU waves of blocks spinning block_time_us each, counted in blocks.
    """

def memory_background(device: Device, bytes: int = 1073741824) -> BackgroundWorkload:
    """A device-to-device copy of `bytes` per launch, counted in GB/s."""

def gemm_background(device: Device, n: int = 8192) -> BackgroundWorkload:
    """
    Square bf16 cuBLAS GEMMs of size n, counted in TFLOP/s (UnsupportedError without cuBLAS).
    """

def copy_chunks(device: Device, chunk_bytes: int = 67108864) -> BackgroundWorkload:
    """
    The adaptive measurement's default background: a device-to-device copy of chunk_bytes per launch in 8 blocks of 256 threads per SM, counted in GB/s.
    """

def measure_adaptive(device: Device, critical: CriticalWorkload, background: BackgroundWorkload, *, critical_sms: int = 16, shrink_to: Sequence[int] = [8, 16, 32, 64], policies: Sequence[str] = ..., lead_us: float = 100, queue_depth: int = 2, samples: int = 1000, warmup: int = 50, rounds: int = 10, gap_us: float = 300, rate_window_ms: float = 300, progress: Callable[[str], None] | None = None) -> dict:
    """
    The adaptive measurement on workload objects (greenctx.measure_adaptive wraps callables).
    """

def measure_bandwidth(device: Device, *, sizes: Sequence[int] = [], ops: Sequence[str] = ['read', 'write', 'copy'], levels: Sequence[str] = ['dram', 'l2'], buffer_bytes: int = 1073741824, repeats: int = 10, beside: bool = True, progress: Callable[[str], None] | None = None) -> dict:
    """
    The bandwidth curve (greenctx bench bandwidth): DRAM and L2 read, write and copy GB/s on N SMs of each N,rest split (sizes; empty: every N this GPU makes) and on the whole device, alone and, with beside, while the rest does the same; a dict.
    """

def plan_scaling(sm_counts: Sequence[int], device_sms: int, granularity: Granularity, round_counts: bool = False) -> list:
    """
    The SM counts a scaling run measures, ascending, as dicts (requested, sms, rounding): every size a green context has exactly when sm_counts is empty. Raises RequestError for a count no green context has (unless round_counts: then rounded, and the rounding says why), one named twice or above device_sms. Pure: no GPU.
    """

def scaling(device: Device, workload: CriticalWorkload, sm_counts: Sequence[int] = [], *, samples: int = 100, warmup: int = 10, rounds: int = 5, gap_us: float = 0, round_counts: bool = False, hold_launch: bool = True, progress: Callable[[str], None] | None = None) -> dict:
    """
    The scaling measurement on a workload object (greenctx.scaling wraps callables).
    """

def measure_contention(device: Device, partitions: PartitionSet, critical: CriticalWorkload, background: BackgroundWorkload, *, samples: int = 1000, warmup: int = 50, rounds: int = 10, gap_us: float = 300, rate_window_ms: float = 300, placements: Sequence[str] = [], hold_launch: bool = False, background_depth: int = 2, background_thread: bool = False, progress: Callable[[str], None] | None = None) -> dict:
    """
    Measures the critical work's latency beside the background under each placement (alone, shared, priority, green contexts, the trap), with the critical work on partitions[0] and the background on partitions[1]; returns a dict of distributions (us) and rates. hold_launch: each critical sample starts once the callable has enqueued all of it (its launch time on the host not counted). background_depth: background launches kept queued. background_thread: the background fed from a thread of its own.
    """

def tune(device: Device, critical: CriticalWorkload, background: BackgroundWorkload, *, p99_us: float | None = None, p99_times_alone: float | None = None, within_best: float | None = None, search: str = 'guided', samples: int = 300, confirm_samples: int = 1000, rounds: int = 2, gap_us: float = 100, sizes: Sequence[int] = [], repeat: bool = True, hold_launch: bool = True, progress: Callable[[str], None] | None = None) -> dict:
    """
    Chooses the split by measurement: the critical work on N SMs, the background on the rest, for each N this GPU makes, and the N that meets the objective with the most background throughput. Returns a dict: split ('24,rest' or None), reason, curve (each point with its p99's 95% interval, p99_low..p99_high), pareto, each search's answer, and repeat: the chosen split measured once more (repeat_meets: whether it meets the bound again). hold_launch: each critical sample starts once the callable has enqueued all of it, so that Python's launch time is not counted (False: counted, as a program sees it).
    """
