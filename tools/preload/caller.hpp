// SPDX-License-Identifier: Apache-2.0
// Which loaded object a call comes from, and whether that object knows CUDA 13.1's green-context
// API: the preload library raises the driver version it reports (greenctx run --cuda-13.1) only
// for such callers, so that every other library keeps seeing the driver's own version.
#pragma once

#include <string>

namespace greenctx::preload {

/// The path of the loaded object whose code holds `address` ("" when none does).
std::string object_path(const void *address);

/// Whether the object holding `address` names cuDevSmResourceSplit (a CUDA 13.1+ runtime, static
/// or shared, or another library or program built against 13.1+ headers that looks it up or
/// links to it). Read from the object's file once and cached; the preload library itself does
/// not count.
bool knows_cuda_13_1(const void *address);

/// Whether the ELF image `bytes` (an object's file) names `symbol` as a whole string in its
/// read-only data (.rodata*) or its dynamic string table (.dynstr); an image without section
/// headers is read whole. Pure.
bool elf_names(const unsigned char *bytes, std::size_t size, const std::string &symbol);

} // namespace greenctx::preload
