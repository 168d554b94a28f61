// SPDX-License-Identifier: Apache-2.0
// SM resources of the 13.1 API as plain cudaDevResource values.
//
// A cudaDevResource of SM type stands for one or more driver resources (the pieces of a group
// that greenctx built from several split-by-count pieces). greenctx keeps the pieces of each split
// call in a record and writes a tag into the resource's internal padding: the record, which of its
// pieces the resource holds, and the promised co-scheduled unit. Resources stay plain values that
// can be copied as structs; records live for the rest of the process (13.1 has no call to free a
// resource either).
#pragma once

#include "greenctx/cuda_compat.h"
#include "greenctx/plan/resource.hpp"

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

namespace greenctx::compat {

constexpr std::size_t max_pieces = 128;
using piece_mask = std::bitset<max_pieces>;

enum class tag_kind : std::uint32_t {
  splittable = 1, // a device's or context's SM resource
  group = 2,      // a group of a split
  remainder = 3,  // the remainder of a split
  workqueue = 5,  // a device's or context's work queues
};

/// What greenctx writes into a resource's internal padding.
struct resource_tag {
  std::uint32_t magic = 0x52435447; // "GTCR"
  tag_kind kind = tag_kind::splittable;
  std::uint64_t record = 0;
  std::uint64_t mask[2] = {};
  std::uint32_t coscheduled = 0;
  std::uint32_t needs_cluster_check = 0;
  std::uint64_t request = 0; // the split request (several records when it took several calls)
  std::uint32_t exact = 0;   // a group without Backfill: every SM is in a co-scheduled unit
};

/// Keeps the pieces of one split call (or one whole resource) of device `ordinal`; returns the
/// record's id. Throws CUDA_ERROR_NOT_SUPPORTED above max_pieces pieces.
std::uint64_t add_record(int ordinal, std::vector<sm_resource> pieces);

/// A fresh id for one cudaDevSmResourceSplit call (which may take several records).
std::uint64_t next_request();

/// How an exported SM resource is tagged, besides its record and pieces.
struct sm_tag_fields {
  tag_kind kind = tag_kind::group;
  unsigned coscheduled = 0;
  bool needs_cluster_check = false;
  std::uint64_t request = 0;
  bool exact = false;
};

/// Writes an SM resource holding the pieces `mask` of record `id`.
void export_sm(cudaDevResource &out, std::uint64_t id, const piece_mask &mask,
               const sm_tag_fields &fields);

/// Fills `out` as an SM resource that can be split (a device's or context's resource).
void export_splittable(const sm_resource &sms, int ordinal, cudaDevResource &out);

/// The pieces an SM resource stands for.
struct sm_view {
  resource_tag tag;
  int ordinal = 0;
  std::vector<sm_resource> pieces;
};

/// Reads an SM resource back. Throws with `api`, naming `which`, when it is not an SM resource
/// made by greenctx.
sm_view view_sm(const cudaDevResource &in, const char *api, const std::string &which);

/// The resource a split may start from: a device's or context's, not a split output.
sm_resource splittable_input(const cudaDevResource *input, const char *api);

} // namespace greenctx::compat
