// SPDX-License-Identifier: Apache-2.0
// A PyTorch C++ extension that uses greenctx's C++ API: it keeps a partition set of one
// split, and runs a matmul on a stream of one of its pieces through torch's own stream machinery
// (c10::cuda::getStreamFromExternal and a stream guard), so the op runs on that piece's SMs.
// Built by check.py with torch.utils.cpp_extension.load and -std=c++20.
#include <greenctx/greenctx.hpp>

#include <torch/extension.h>

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {

// Made once per split and kept: a green context is costly to make and, on driver 580, leaks
// device memory when destroyed.
struct split_state {
  greenctx::device gpu;
  greenctx::partition_set parts;
  std::vector<greenctx::stream> streams;
};

split_state &state_for(const std::string &split) {
  // Never destroyed: at exit torch may have torn down CUDA before static destructors run.
  static auto *states = new std::map<std::string, std::unique_ptr<split_state>>;
  auto &slot = (*states)[split];
  if (!slot) {
    greenctx::device gpu(0);
    auto parts = greenctx::partition_set::create(gpu, greenctx::parse_partition_request(split));
    std::vector<greenctx::stream> streams;
    for (const auto &part : parts.parts())
      streams.push_back(part.context.create_stream());
    slot.reset(new split_state{std::move(gpu), std::move(parts), std::move(streams)});
  }
  return *slot;
}

// a @ b on piece `piece` of `split`; returns the product and the SMs that piece holds.
std::tuple<torch::Tensor, int64_t> matmul_on_piece(const torch::Tensor &a, const torch::Tensor &b,
                                                   const std::string &split, int64_t piece) {
  split_state &s = state_for(split);
  if (piece < 0 || piece >= static_cast<int64_t>(s.streams.size()))
    throw std::out_of_range("piece " + std::to_string(piece) + " is not one of the " +
                            std::to_string(s.streams.size()) + " pieces of " + split);
  auto native = reinterpret_cast<cudaStream_t>(s.streams[piece].native_handle());
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromExternal(native, a.device().index());
  // The inputs come from torch's current stream: the piece's stream waits for them first.
  at::cuda::CUDAEvent inputs_ready;
  inputs_ready.record(c10::cuda::getCurrentCUDAStream(a.device().index()));
  inputs_ready.block(stream);
  torch::Tensor out;
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    out = a.matmul(b);
  }
  stream.synchronize();
  return {out, static_cast<int64_t>(s.parts.parts()[piece].obtained())};
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("matmul_on_piece", &matmul_on_piece, "a @ b on a piece of a greenctx split");
}
