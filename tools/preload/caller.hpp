// SPDX-License-Identifier: Apache-2.0
// Which loaded object a call comes from, and whether that object knows CUDA 13.1's green-context
// API: the preload library raises the driver version it reports (greenctx run --cuda-13.1) only
// for such callers that are no CUDA runtime, so that every other library, and every runtime
// (which checks the version against the driver), keeps seeing the driver's own version.
#pragma once

#include <string>

namespace greenctx::preload {

/// The path of the loaded object whose code holds `address` ("" when none does).
std::string object_path(const void *address);

/// What the object holding `address` is, for the driver version it is told.
enum class caller_kind {
  other,        ///< told the driver's own version
  knows_13_1,   ///< names cuDevSmResourceSplit (a program or library on the driver API built
                ///< against 13.1+ headers, which looks it up or links to it): told 13010
  runtime,      ///< a CUDA runtime (static or shared) that does not know 13.1
  runtime_13_1, ///< a CUDA 13.1+ runtime: told the driver's own version, which it checks
};

/// The kind of the object holding `address`, read from its file once and cached (by the text
/// cudart carries for its errors, and the name cuDevSmResourceSplit). The preload library itself
/// is `other`.
caller_kind kind_of_caller(const void *address);

/// Whether the ELF image `bytes` (an object's file) names `symbol` as a whole string in its
/// read-only data (.rodata*) or its dynamic string table (.dynstr); an image without section
/// headers is read whole. Pure.
bool elf_names(const unsigned char *bytes, std::size_t size, const std::string &symbol);

} // namespace greenctx::preload
