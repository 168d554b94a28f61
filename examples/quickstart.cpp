// SPDX-License-Identifier: Apache-2.0
// An example like README.md's, complete: split a GPU into 16 SMs + the rest, run work on both,
// order them with an event, and check with %smid where the work ran. Needs a GPU; exits 3 without
// one.
#include <greenctx/greenctx.hpp>

#include <chrono>
#include <cstdio>

int main() try {
  using namespace std::chrono_literals;
  greenctx::device gpu(0);                      // retains the primary context
  auto parts = greenctx::partition_set::create( // one split: 16 SMs + the rest, disjoint
      gpu, greenctx::parse_partition_request("16,rest"));
  const greenctx::green_context &critical = parts.parts()[0].context;
  const greenctx::green_context &background = parts.parts()[1].context;

  greenctx::stream fast = critical.create_stream(); // kernels here use only those 16 SMs
  greenctx::stream bulk = background.create_stream();
  greenctx::sm_probe probe(gpu, 2000); // a kernel that records the SM of each block
  probe.launch(fast);
  greenctx::launch_spin(bulk, 4096, 100us); // any launch API works on native_handle() too

  greenctx::event done(critical);
  critical.record(done); // all work of the context so far
  background.wait(done); // later work there waits for it
  critical.synchronize();
  bulk.synchronize();

  std::printf("critical partition: %u SMs held, probe used %zu SMs; background: %u SMs\n",
              parts.parts()[0].obtained(), probe.sms_used().size(), parts.parts()[1].obtained());
  return probe.sms_used().size() <= parts.parts()[0].obtained() ? 0 : 1;
} catch (const greenctx::error &e) {
  std::fprintf(stderr, "quickstart: %s\n", e.what());
  return e.code() == CUDA_ERROR_NO_DEVICE ? 3 : 1;
}
