// SPDX-License-Identifier: Apache-2.0
// The preload library of `greenctx run` on a fake driver (fake_cuda.cpp): which context it makes
// current, and the events it inserts so that blocking streams, the legacy stream and the
// per-thread default stream keep CUDA's ordering rules. Runs without a GPU; the same rules are
// checked against the real driver by the programs in tests/run/.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#undef cuGetProcAddress

#include "preload_fixture.hpp"

namespace {

using namespace preload_test;

class Preload : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(preload(), nullptr) << dlerror();
    ASSERT_NE(cu().launch, nullptr);
    ctx_ = confined();
    take_log();
  }
  CUcontext ctx_ = nullptr;
};

TEST_F(Preload, ThePrimaryContextBecomesOneGreenContextForEveryThread) {
  EXPECT_NE(ctx_, primary0);
  EXPECT_NE(ctx_, nullptr);
  CUcontext other = nullptr;
  std::thread([&] {
    cu().set_current(primary0);
    cu().get_current(&other);
  }).join();
  EXPECT_EQ(other, ctx_) << "every thread shares one green context";
  EXPECT_EQ(find_prefix(take_log(), "green_create"), -1) << "made once, not per thread";
}

TEST_F(Preload, StreamsCreatedWithFlagsZeroReadZero) {
  CUstream blocking = nullptr, non_blocking = nullptr;
  ASSERT_EQ(cu().stream_create(&blocking, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu().stream_create(&non_blocking, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  unsigned flags = 99;
  ASSERT_EQ(cu().get_flags(blocking, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, 0u);
  ASSERT_EQ(cu().get_flags(non_blocking, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  cu().stream_destroy(blocking);
  cu().stream_destroy(non_blocking);
}

TEST_F(Preload, ABlockingStreamWaitsForTheLegacyStreamAndTheOtherWayRound) {
  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, 0), CUDA_SUCCESS);
  cu().run(nullptr);
  take_log();
  cu().run(s);
  auto log = take_log();
  // An event recorded on the legacy stream, waited for by s, before the launch on s.
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[0].rfind("record ", 0), 0u);
  EXPECT_EQ(log[0].substr(log[0].size() - 5), " null");
  const std::string event = log[0].substr(7, log[0].find(' ', 7) - 7);
  EXPECT_EQ(log[1], "wait " + h(s) + " " + event);
  EXPECT_EQ(log[2], "launch " + h(s));

  cu().run(s); // nothing new on the legacy stream: no second wait
  EXPECT_EQ(take_log(), std::vector<std::string>{"launch " + h(s)});

  cu().run(nullptr); // the legacy stream waits for s's work
  log = take_log();
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[0].rfind("record ", 0), 0u);
  EXPECT_EQ(log[0].substr(log[0].size() - h(s).size()), h(s));
  EXPECT_EQ(log[1].rfind("wait null ", 0), 0u);
  EXPECT_EQ(log[2], "launch null");

  cu().run(nullptr); // s has no new work: no second wait
  EXPECT_EQ(take_log(), std::vector<std::string>{"launch null"});
  cu().stream_destroy(s);
}

TEST_F(Preload, ASynchronousCopyWaitsForBlockingStreams) {
  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, 0), CUDA_SUCCESS);
  cu().run(s);
  take_log();
  char buf[4] = {};
  cu().copy(0, buf, sizeof buf);
  const auto log = take_log();
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[1].rfind("wait null ", 0), 0u);
  EXPECT_EQ(log[2], "copy");
  cu().stream_destroy(s);
}

TEST_F(Preload, DestroyingABlockingStreamLeavesTheLegacyStreamWaitingForItsWork) {
  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, 0), CUDA_SUCCESS);
  cu().run(s);
  take_log();
  cu().stream_destroy(s);
  const auto log = take_log();
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[0].substr(log[0].size() - h(s).size()), h(s));
  EXPECT_EQ(log[1].rfind("wait null ", 0), 0u);
  EXPECT_EQ(log[2], "stream_destroy " + h(s));
}

TEST_F(Preload, APerThreadSynchronousCopyGoesToTheLegacyStreamAfterTheThreadsStream) {
  cu().run(CU_STREAM_PER_THREAD);
  take_log();
  char buf[4] = {};
  ASSERT_EQ(cu().copy_ptds(0, buf, sizeof buf), CUDA_SUCCESS);
  const auto log = take_log();
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[1].rfind("wait null ", 0), 0u);
  EXPECT_EQ(log[2], "copy") << "the legacy variant: the driver refuses the per-thread one here";
}

TEST_F(Preload, AWaitOnTheLegacyStreamIsLegacyWorkToo) {
  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, 0), CUDA_SUCCESS);
  cu().run(s);
  take_log();
  const CUevent program_event = reinterpret_cast<CUevent>(0x77);
  cu().wait_event(nullptr, program_event, 0);
  const auto log = take_log();
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[1].rfind("wait null ", 0), 0u);
  EXPECT_EQ(log[2], "wait null " + h(program_event));
  cu().stream_destroy(s);
}

TEST_F(Preload, StreamsBeingCapturedAreLeftOutOfTheJoins) {
  using set_fn = void (*)(CUstream, bool);
  auto set_capturing = reinterpret_cast<set_fn>(dlsym(RTLD_DEFAULT, "fake_cuda_set_capturing"));
  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, 0), CUDA_SUCCESS);
  cu().run(nullptr);
  take_log();
  set_capturing(s, true);
  cu().run(s);       // no wait for the legacy stream inside the capture
  cu().run(nullptr); // and no event recorded on the capturing stream
  EXPECT_EQ(take_log(), (std::vector<std::string>{"launch " + h(s), "launch null"}));
  set_capturing(s, false);
  cu().run(nullptr); // after the capture, the legacy stream catches up with s
  const auto log = take_log();
  ASSERT_EQ(log.size(), 3u) << testing::PrintToString(log);
  EXPECT_EQ(log[1].rfind("wait null ", 0), 0u);
  cu().stream_destroy(s);
}

TEST_F(Preload, AGraphUploadedOnThePerThreadStreamGoesToTheThreadsStream) {
  cu().run(CU_STREAM_PER_THREAD);
  auto log = take_log();
  const long at = find_prefix(log, "launch ");
  ASSERT_GE(at, 0) << testing::PrintToString(log);
  const std::string mine = log[static_cast<std::size_t>(at)].substr(7);
  ASSERT_NE(cu().instantiate, nullptr);
  CUDA_GRAPH_INSTANTIATE_PARAMS p{};
  p.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  p.hUploadStream = CU_STREAM_PER_THREAD;
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cu().instantiate(&exec, nullptr, &p), CUDA_SUCCESS);
  log = take_log();
  EXPECT_TRUE(contains(log, "graph_instantiate upload " + mine)) << testing::PrintToString(log);
  // The caller's parameters: its own stream kept, the driver's two outputs given back.
  EXPECT_EQ(p.hUploadStream, CU_STREAM_PER_THREAD);
  EXPECT_EQ(p.hErrNode_out, reinterpret_cast<CUgraphNode>(0x77));
  EXPECT_EQ(p.result_out, CUDA_GRAPH_INSTANTIATE_SUCCESS);
  EXPECT_NE(exec, nullptr);
  // Without an upload the stream is not looked at.
  p = {};
  p.hUploadStream = CU_STREAM_PER_THREAD;
  ASSERT_EQ(cu().instantiate(&exec, nullptr, &p), CUDA_SUCCESS);
  EXPECT_EQ(take_log(), (std::vector<std::string>{"graph_instantiate"}));
}

TEST_F(Preload, NonBlockingStreamsAreLeftAlone) {
  CUstream n = nullptr;
  ASSERT_EQ(cu().stream_create(&n, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // Work an earlier test of this process left on a blocking stream (the thread's per-thread
  // stream) makes the next legacy launch wait for it, as CUDA requires: that launch comes first.
  cu().run(nullptr);
  take_log();
  cu().run(nullptr);
  cu().run(n);
  cu().run(nullptr);
  EXPECT_EQ(take_log(), (std::vector<std::string>{"launch null", "launch " + h(n), "launch null"}));
  cu().stream_destroy(n);
}

TEST_F(Preload, EachThreadGetsItsOwnPerThreadStreamDestroyedWhenItEnds) {
  cu().run(CU_STREAM_PER_THREAD);
  auto log = take_log();
  const long at = find_prefix(log, "launch ");
  ASSERT_GE(at, 0) << testing::PrintToString(log);
  const std::string mine = log[static_cast<std::size_t>(at)];
  EXPECT_NE(mine, "launch per-thread");
  // The per-thread variant's NULL stream is the same stream, launched through the legacy entry.
  cu().launch_ptsz(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  log = take_log();
  EXPECT_TRUE(contains(log, mine)) << testing::PrintToString(log);

  std::string theirs;
  std::thread([&] {
    cu().set_current(primary0);
    cu().run(CU_STREAM_PER_THREAD);
    const auto l = take_log();
    theirs = l[static_cast<std::size_t>(find_prefix(l, "launch "))];
  }).join();
  EXPECT_NE(theirs, mine);
  log = take_log();
  EXPECT_TRUE(contains(log, "stream_destroy " + theirs.substr(7))) << testing::PrintToString(log);

  unsigned flags = 99; // a per-thread default stream is blocking
  ASSERT_EQ(cu().get_flags(CU_STREAM_PER_THREAD, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, 0u);
}

TEST_F(Preload, CtxCreateMakesAGreenContextOfItsOwn) {
  CUcontext own = nullptr;
  ASSERT_EQ(cu().ctx_create(&own, 0, 0), CUDA_SUCCESS);
  EXPECT_NE(own, ctx_);
  CUcontext current = nullptr;
  cu().get_current(&current);
  EXPECT_EQ(current, own);
  auto log = take_log();
  EXPECT_GE(find_prefix(log, "green_create"), 0) << testing::PrintToString(log);
  EXPECT_EQ(find_prefix(log, "real ctx_create"), -1);

  // Its blocking streams follow its own legacy stream: the join pushes no other context's work.
  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, 0), CUDA_SUCCESS);
  unsigned flags = 99;
  cu().get_flags(s, &flags);
  EXPECT_EQ(flags, 0u);
  cu().stream_destroy(s);

  ASSERT_EQ(cu().ctx_destroy(own), CUDA_SUCCESS);
  log = take_log();
  EXPECT_TRUE(contains(log, "green_destroy " + h(own))) << testing::PrintToString(log);
  cu().get_current(&current);
  EXPECT_EQ(current, ctx_) << "a destroyed current context is popped";
}

TEST_F(Preload, ADeviceLeftOutOfDeviceListRunsUnconfined) {
  // GREENCTX_RUN_DEVICES=0: device 1 is not confined, and says so.
  ASSERT_EQ(cu().set_current(primary1), CUDA_SUCCESS);
  CUcontext current = nullptr;
  cu().get_current(&current);
  EXPECT_EQ(current, primary1);
  cu().set_current(primary0);
}

TEST_F(Preload, ManyThreadsAtOnceKeepTheBookkeepingConsistent) {
  // Launches on the legacy, a shared blocking, a non-blocking and the per-thread streams, and
  // streams created and destroyed, from 8 threads at once (run under ThreadSanitizer too: see
  // tests/preload/README.md). Every launch must reach the driver exactly once.
  CUstream shared = nullptr, free_running = nullptr;
  ASSERT_EQ(cu().stream_create(&shared, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu().stream_create(&free_running, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  take_log();
  constexpr int threads = 8, rounds = 300;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      cu().set_current(primary0);
      for (int i = 0; i < rounds; ++i) {
        cu().run(nullptr);
        cu().run(shared);
        cu().run(free_running);
        cu().run(CU_STREAM_PER_THREAD);
        if ((i + t) % 50 == 0) {
          CUstream mine = nullptr;
          cu().stream_create(&mine, 0);
          cu().run(mine);
          cu().stream_destroy(mine);
        }
      }
    });
  for (auto &t : pool)
    t.join();
  const auto log = take_log();
  long launches = 0;
  for (const auto &line : log)
    launches += line.rfind("launch ", 0) == 0;
  long own_streams = 0;
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < rounds; ++i)
      own_streams += (i + t) % 50 == 0;
  EXPECT_EQ(launches, threads * rounds * 4 + own_streams);
  EXPECT_EQ(find_prefix(log, "launch per-thread"), -1) << "the per-thread handle never reaches it";
  cu().stream_destroy(shared);
  cu().stream_destroy(free_running);
}

TEST_F(Preload, AConfinedDeviceReportsThePartitionsSmCount) {
  EXPECT_EQ(cu().sm_count(0), 16) << "device 0 is confined to 16 SMs";
  EXPECT_EQ(cu().sm_count(1), 132) << "device 1 is not confined (GREENCTX_RUN_DEVICES=0)";
  int major = 0;
  ASSERT_EQ(cu().attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), CUDA_SUCCESS);
  EXPECT_EQ(major, 9) << "other attributes pass through";
  CUdevResource r{};
  ASSERT_EQ(cu().resource(0, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, 16u) << "the device's SM resource is the green context's";
  ASSERT_EQ(cu().resource(1, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, 132u);
}

TEST_F(Preload, TheProgramSeesOnePrimaryContext) {
  // cuDevicePrimaryCtxRetain, cuCtxGetCurrent, cuCtxPopCurrent, cuStreamGetCtx and the pointer
  // attributes all name the green context, on every thread; the real primary context never shows.
  CUcontext retained = nullptr;
  ASSERT_EQ(cu().retain(&retained, 0), CUDA_SUCCESS);
  EXPECT_EQ(retained, ctx_);
  ASSERT_EQ(cu().push(retained), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  ASSERT_EQ(cu().pop(&popped), CUDA_SUCCESS);
  EXPECT_EQ(popped, ctx_);
  CUcontext other_thread = nullptr;
  std::thread([&] {
    CUcontext r = nullptr;
    cu().retain(&r, 0);
    cu().push(r);
    cu().get_current(&other_thread);
  }).join();
  EXPECT_EQ(other_thread, ctx_);

  CUstream s = nullptr;
  ASSERT_EQ(cu().stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUcontext of_stream = nullptr;
  ASSERT_EQ(cu().stream_ctx(s, &of_stream), CUDA_SUCCESS);
  EXPECT_EQ(of_stream, ctx_);
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(0x1);
  ASSERT_EQ(cu().stream_ctx_v2(s, &of_stream, &green), CUDA_SUCCESS);
  EXPECT_EQ(of_stream, ctx_) << "cuStreamGetCtx_v2 names the context";
  EXPECT_EQ(green, nullptr) << "and no green context, as for a primary context's stream";
  green = reinterpret_cast<CUgreenCtx>(0x1);
  ASSERT_EQ(cu().stream_green(s, &green), CUDA_SUCCESS);
  EXPECT_EQ(green, nullptr);
  cu().stream_destroy(s);

  CUcontext of_memory = nullptr;
  ASSERT_EQ(cu().pointer(&of_memory, CU_POINTER_ATTRIBUTE_CONTEXT, 0x1234), CUDA_SUCCESS);
  EXPECT_EQ(of_memory, ctx_) << "the fake driver answers with the real primary context";
  CUpointer_attribute what[] = {CU_POINTER_ATTRIBUTE_CONTEXT};
  void *where[] = {&of_memory};
  of_memory = nullptr;
  ASSERT_EQ(cu().pointers(1, what, where, 0x1234), CUDA_SUCCESS);
  EXPECT_EQ(of_memory, ctx_);
}

// The report lines written so far (each process of the test appends one at its exit).
std::vector<std::string> report_lines() {
  std::ifstream in(report_path());
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  return lines;
}

long long field(const std::string &line, const std::string &name) {
  const auto at = line.find("\"" + name + "\":");
  return at == std::string::npos ? -1 : std::atoll(line.c_str() + at + name.size() + 3);
}

// Work, then a synchronization, in a child process; its report line says when each happened.
void expect_gpu_phase_stamped(void (*work)()) {
  EXPECT_EXIT(
      {
        work();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  const auto lines = report_lines();
  ASSERT_FALSE(lines.empty()) << "no report at " << report_path();
  const long long first = field(lines.back(), "first_work_ns");
  const long long last = field(lines.back(), "last_sync_ns");
  EXPECT_GT(first, 0) << lines.back();
  EXPECT_GE(last, first) << lines.back();
}

TEST_F(Preload, TheGpuPhaseIsStampedFromTheFirstWorkToTheLastSynchronization) {
  expect_gpu_phase_stamped([] {
    cu().run(nullptr);
    cu().sync(nullptr);
    cu().run(nullptr);
    cu().ctx_sync();
  });
}

TEST(PreloadMeasureOnly, TimesTheGpuPhaseAndConfinesNothing) {
  if (!std::getenv("GREENCTX_RUN_MEASURE"))
    GTEST_SKIP() << "runs as its own ctest entry, with GREENCTX_RUN_MEASURE=1";
  ASSERT_NE(preload(), nullptr) << dlerror();
  ASSERT_EQ(cu().set_current(primary0), CUDA_SUCCESS);
  CUcontext current = nullptr;
  cu().get_current(&current);
  EXPECT_EQ(current, primary0) << "nothing is confined";
  EXPECT_EQ(cu().sm_count(0), 132);
  take_log();
  expect_gpu_phase_stamped([] {
    cu().run(nullptr);
    cu().sync(nullptr);
  });
}

TEST(PreloadRealSmCount, TheDeviceKeepsItsRealSmCount) {
  if (!std::getenv("GREENCTX_RUN_REAL_SM_COUNT"))
    GTEST_SKIP() << "runs as its own ctest entry, with GREENCTX_RUN_REAL_SM_COUNT=1";
  ASSERT_NE(preload(), nullptr) << dlerror();
  EXPECT_NE(confined(), primary0) << "still confined";
  EXPECT_EQ(cu().sm_count(0), 132);
  CUdevResource r{};
  ASSERT_EQ(cu().resource(0, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, 132u);
}

// `greenctx run --split S --piece I`: the process's context is made on that piece, and the
// program is told the piece's SM count. Runs as ctest entries of its own, each with a split, a
// piece and the SMs the fake driver's split gives that piece (GREENCTX_TEST_PIECE_SMS; 0: the
// piece cannot be made, and the device stays unconfined, said).
TEST(PreloadPiece, TheProcessRunsOnItsPieceOfTheSplit) {
  const char *want = std::getenv("GREENCTX_TEST_PIECE_SMS");
  if (!want || !std::getenv("GREENCTX_RUN_SPLIT"))
    GTEST_SKIP() << "runs as its own ctest entries, with GREENCTX_RUN_SPLIT and a piece";
  ASSERT_NE(preload(), nullptr) << dlerror();
  const int sms = std::atoi(want);
  take_log();
  const CUcontext c = confined();
  if (sms == 0) {
    EXPECT_EQ(c, primary0) << "a piece that cannot be made leaves the device unconfined";
    EXPECT_EQ(cu().sm_count(0), 132);
    return;
  }
  EXPECT_NE(c, primary0);
  EXPECT_EQ(cu().sm_count(0), sms);
  CUdevResource r{};
  ASSERT_EQ(cu().resource(0, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, static_cast<unsigned>(sms));
}

TEST(PreloadStrict, AGuaranteeThatCannotBeKeptEndsTheProgram) {
  if (const char *v = std::getenv("GREENCTX_RUN_STRICT"); !v || std::string(v) != "1")
    GTEST_SKIP() << "runs as its own ctest entry, with GREENCTX_RUN_STRICT=1";
  ASSERT_NE(preload(), nullptr) << dlerror();
  EXPECT_EXIT(cu().set_current(primary1), ::testing::ExitedWithCode(86),
              "device 1 is used but not confined");
}

} // namespace
