// SPDX-License-Identifier: Apache-2.0
// The contract between `greenctx run` / `greenctx scale` (the CLI) and the preload library
// (tools/preload): the environment the CLI sets for the program, and the report each process of
// the program writes. Header-only and free of CUDA, so both sides include it.
#pragma once

namespace greenctx::run_protocol {

// ---- the environment (set by the CLI, read by the preload library) ----------------------------

/// SMs each confined device runs on, in decimal ("16"). Absent, with no GREENCTX_RUN_SPLIT
/// either: the library does nothing.
inline constexpr const char *env_sms = "GREENCTX_RUN_SMS";
/// The devices to confine: "all", or ordinals in decimal separated by commas ("0,1"). A device
/// the program uses that is not named here runs on all its SMs, and the library says so.
inline constexpr const char *env_devices = "GREENCTX_RUN_DEVICES";
/// The split flags of cuDevSmResourceSplitByCount, in decimal: CUDA's own bits
/// (1 = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING).
inline constexpr const char *env_split_flags = "GREENCTX_RUN_SPLIT_FLAGS";
/// With GREENCTX_RUN_PIECE: the process runs on that piece of this split ("16,rest", the grammar
/// of `greenctx verify`), made as greenctx's library makes it, instead of on GREENCTX_RUN_SMS SMs
/// (then unset). The library is active when either is set.
inline constexpr const char *env_split = "GREENCTX_RUN_SPLIT";
/// The piece of GREENCTX_RUN_SPLIT, counted from 0 in the split's order, in decimal.
inline constexpr const char *env_piece = "GREENCTX_RUN_PIECE";
/// "1": a CUDA guarantee that cannot be kept ends the process at once, with exit_strict.
inline constexpr const char *env_strict = "GREENCTX_RUN_STRICT";
/// A file each process of the program appends one report line to (JSON, fields below).
inline constexpr const char *env_report = "GREENCTX_RUN_REPORT";
/// The pid of the process `greenctx run` became (it execs the program): when that process exits,
/// its library reads the report, prints the summary on stderr and removes the file.
inline constexpr const char *env_root_pid = "GREENCTX_RUN_ROOT_PID";
/// "1": no summary at exit (problems are still printed when they happen).
inline constexpr const char *env_quiet = "GREENCTX_RUN_QUIET";
/// "1": every hooked lookup, context switch and emulated stream on stderr.
inline constexpr const char *env_debug = "GREENCTX_PRELOAD_DEBUG";
/// GREENCTX_PRELOAD_DEBUG=calls traces every hooked call (its thread, ABI and result) as well.
inline constexpr const char *debug_calls = "calls";
/// "1": the library times the program's GPU phase (field_first_work_ns, field_last_sync_ns) and
/// writes its report line even without GREENCTX_RUN_SMS, confining nothing: the unconfined
/// baseline of `greenctx scale --metric gpu-time`.
inline constexpr const char *env_measure = "GREENCTX_RUN_MEASURE";
/// "1": a confined device reports its real SM count (cuDeviceGetAttribute and the device's SM
/// resource), not the partition's (greenctx run --real-sm-count).
inline constexpr const char *env_real_sm_count = "GREENCTX_RUN_REAL_SM_COUNT";
/// "1": the program sees the CUDA 13.1 green-context entry points on an older driver
/// (cuDevSmResourceSplit, cuStreamGetDevResource, the work-queue resource types), made by the
/// library, and a CUDA 13.1+ runtime in it is told driver version 13010 so that it asks for them
/// (greenctx run --cuda-13.1). Works with or without confinement.
inline constexpr const char *env_cuda_13_1 = "GREENCTX_RUN_CUDA_13_1";
/// Overrides where the CLI finds the preload library (checked by loading it before anything runs).
inline constexpr const char *env_preload = "GREENCTX_PRELOAD";

/// Exit status of a program stopped by --strict (GREENCTX_RUN_STRICT=1).
inline constexpr int exit_strict = 86;

// ---- the report: one JSON object per line, one line per process ---------------------------------

/// The process id (number).
inline constexpr const char *field_pid = "pid";
/// Whether the process called the CUDA driver at all (bool).
inline constexpr const char *field_cuda_used = "cuda_used";
/// The device ordinals that got a confined context in this process (array of numbers).
inline constexpr const char *field_confined_devices = "confined_devices";
/// Green contexts the library created (number): one per confined device, plus one per cuCtxCreate.
inline constexpr const char *field_green_contexts = "green_contexts";
/// Blocking streams (flags 0) the library emulated (number).
inline constexpr const char *field_blocking_streams = "blocking_streams";
/// Per-thread default streams the library provided (number).
inline constexpr const char *field_per_thread_streams = "per_thread_streams";
/// CLOCK_MONOTONIC nanoseconds when the process first launched a kernel (or a graph), or 0 when it
/// never did (number). Copies and memsets before it are loading, not the GPU phase.
inline constexpr const char *field_first_work_ns = "first_work_ns";
/// CLOCK_MONOTONIC nanoseconds when the process's last synchronization with the GPU returned (a
/// stream, event or context synchronization, or a synchronous copy or memset), or 0 (number). The
/// span from the first kernel launch to the last synchronization is the program's GPU phase, its
/// start-up left out.
inline constexpr const char *field_last_sync_ns = "last_sync_ns";
/// What could not be kept, each said once (array of strings).
inline constexpr const char *field_problems = "problems";

} // namespace greenctx::run_protocol
