// SPDX-License-Identifier: Apache-2.0
// pool: layouts made once and switched at run time, checked where the hardware sees it (%smid).
#include "gpu_fixture.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

namespace greenctx::test {
namespace {

using namespace std::chrono_literals;

class PoolTest : public gpu_test {
protected:
  // The distinct SMs a probe of `blocks` blocks used on `s`.
  std::vector<unsigned> probe(stream_ref s, unsigned blocks = 4000) {
    const sm_probe p(dev(), blocks);
    p.launch(s);
    s.synchronize();
    return p.sms_used();
  }
};

TEST_F(PoolTest, layouts_with_the_same_partition_share_its_context_and_streams) {
  const pool p = pool::create(dev(), {"16,rest", "16,16,rest"});
  const pool_stats &st = p.stats();
  EXPECT_EQ(st.layouts, 2u);
  EXPECT_EQ(st.partitions, 5u);
  // The first 16-SM piece is the same split piece in both layouts; the rests differ.
  EXPECT_LT(st.contexts, st.partitions);
  EXPECT_EQ(st.contexts, 4u);
  EXPECT_EQ(st.streams, st.contexts * 2);
  const pool_layout &a = p.layout("16,rest"), &b = p.layout("16,16,rest");
  EXPECT_EQ(a.parts[0].slot, b.parts[0].slot);
  EXPECT_EQ(a.parts[0].context, b.parts[0].context);
  EXPECT_EQ(a.parts[0].streams, b.parts[0].streams);
  EXPECT_NE(a.parts[1].slot, b.parts[2].slot);
  // Shared or not, the SMs are the same wherever the slot is.
  EXPECT_EQ(probe(a.parts[0].streams[0]), probe(b.parts[0].streams[1]));
  EXPECT_GT(st.creation_time.count(), 0);
}

TEST_F(PoolTest, a_partition_shares_its_context_with_layouts_whose_sizes_need_finer_pieces) {
  // "16,rest" alone splits by 16; "16,8,rest" needs pieces of 8. The pool splits both by 8, so the
  // 16 SMs are the same two pieces in both (the adaptive measurement's critical partition).
  const pool p = pool::create(dev(), {"16,rest", "16,8,rest", "16,64,rest"});
  const pool_layout &wide = p.layout("16,rest");
  for (const char *name : {"16,8,rest", "16,64,rest"}) {
    SCOPED_TRACE(name);
    const pool_layout &narrow = p.layout(name);
    EXPECT_EQ(narrow.parts[0].slot, wide.parts[0].slot);
    EXPECT_EQ(narrow.parts[0].context, wide.parts[0].context);
    EXPECT_EQ(narrow.parts[0].sm_count, 16u);
  }
  EXPECT_EQ(p.stats().contexts, 6u); // one 16, three rests, an 8 and a 64
  const auto sms = probe(wide.parts[0].streams[0], 8000);
  EXPECT_EQ(sms.size(), 16u);
  for (const pool_layout &l : p.layouts())
    for (std::size_t i = 1; i < l.parts.size(); ++i)
      for (unsigned sm : probe(l.parts[i].streams[0], 8000))
        EXPECT_FALSE(std::binary_search(sms.begin(), sms.end(), sm))
            << l.name << " partition " << i << " runs on SM " << sm << " of the shared 16";
}

TEST_F(PoolTest, whole_device_layouts_share_one_context_over_every_sm) {
  const pool p = pool::create(dev(), {"all", "rest"});
  EXPECT_EQ(p.stats().contexts, 1u);
  const pool_partition &all = p.layout("all").parts.at(0);
  EXPECT_TRUE(all.context.is_green());
  EXPECT_EQ(all.label(), "all");
  EXPECT_EQ(all.sm_count, dev().sms().sm_count());
  EXPECT_EQ(probe(all.streams[0], 8000).size(), dev().sms().sm_count());
}

TEST_F(PoolTest, every_partition_stays_on_its_sms_and_a_layouts_partitions_are_disjoint) {
  const pool p = pool::create(dev(), {"16,rest", "32,rest", "64,rest", "16,16,rest", "all"});
  for (const pool_layout &l : p.layouts()) {
    SCOPED_TRACE(l.name);
    std::set<unsigned> seen;
    for (const pool_partition &part : l.parts) {
      for (stream_ref s : part.streams) {
        const auto used = probe(s, 8000);
        EXPECT_EQ(used.size(), part.sm_count) << "partition " << part.label();
        EXPECT_EQ(s.sms().sm_count(), part.sm_count);
      }
      for (unsigned sm : probe(part.streams[0], 8000))
        EXPECT_TRUE(seen.insert(sm).second) << "SM " << sm << " used by two partitions";
    }
  }
}

TEST_F(PoolTest, switching_changes_the_layout_in_use_and_refuses_unknown_names) {
  pool p = pool::create(dev(), {"16,rest", "64,rest", "all"});
  EXPECT_EQ(p.current_index(), 0u);
  EXPECT_EQ(p.current().name, "16,rest");
  EXPECT_EQ(p.use("64, rest"), 0u);
  EXPECT_EQ(p.current().name, "64,rest");
  EXPECT_EQ(p.current().parts[0].sm_count, 64u);
  EXPECT_EQ(p.use(2), 1u);
  EXPECT_EQ(p.current().name, "all");
  try {
    p.use("32,rest");
    FAIL() << "no error for a layout the pool lacks";
  } catch (const request_error &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'32,rest'"), std::string::npos) << m;
    EXPECT_NE(m.find("'16,rest', '64,rest', 'all'"), std::string::npos) << m;
  }
  EXPECT_THROW(p.use(3), request_error);
  EXPECT_EQ(p.current().name, "all") << "a refused switch changed the layout";
  // A moved pool keeps its layouts and the one in use.
  pool q = std::move(p);
  EXPECT_EQ(q.current().name, "all");
  EXPECT_TRUE(p.layouts().empty());
}

TEST_F(PoolTest, bad_requests_are_refused_with_the_reason) {
  EXPECT_THROW(pool::create(dev(), std::vector<std::string>{}), request_error);
  EXPECT_THROW(pool::create(dev(), {"16,rest", "16, rest"}), request_error);
  EXPECT_THROW(pool::create(dev(), {"16,rest"}, {.streams_per_partition = 0}), request_error);
  try {
    pool::create(dev(), {"16,rest", "1000,rest"});
    FAIL() << "no error for a layout larger than the GPU";
  } catch (const request_error &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("layout '1000,rest' cannot be made"), std::string::npos) << m;
  }
}

TEST_F(PoolTest, drain_orders_the_new_layouts_work_after_the_old_ones) {
  const pool p = pool::create(dev(), {"16,rest", "32,rest"});
  const stream_ref old_stream = p.layout("16,rest").parts[1].streams[0];
  const stream_ref new_stream = p.layout("32,rest").parts[0].streams[0];
  const sm_probe slow(dev(), 1, 300ms), quick(dev(), 1, 0ns);

  // Without drain the new layout's work does not wait: it finishes while the old kernel spins.
  slow.launch(old_stream);
  quick.launch(new_stream);
  new_stream.synchronize();
  EXPECT_FALSE(old_stream.ready()) << "the control is void: the slow kernel ended too soon";
  old_stream.synchronize();

  // With drain it waits for every stream of the old layout.
  slow.launch(old_stream);
  p.drain(0, 1);
  quick.launch(new_stream);
  new_stream.synchronize();
  EXPECT_TRUE(old_stream.ready()) << "work after drain() finished before the old layout's work";
  // The other streams of the new layout wait too.
  slow.launch(old_stream);
  p.drain(0, 1);
  const stream_ref other = p.layout("32,rest").parts[1].streams[1];
  quick.launch(other);
  other.synchronize();
  EXPECT_TRUE(old_stream.ready());
  p.synchronize(0);
}

TEST_F(PoolTest, thirty_two_threads_switch_and_launch_and_every_kernel_stays_in_its_partition) {
  pool p = pool::create(dev(), {"16,rest", "32,rest", "64,rest", "16,16,rest", "all"});
  // Where each shared context's kernels may run, measured alone first.
  std::map<std::size_t, std::set<unsigned>> allowed;
  for (const pool_layout &l : p.layouts())
    for (const pool_partition &part : l.parts)
      if (!allowed.count(part.slot)) {
        const auto used = probe(part.streams[0], 8000);
        ASSERT_EQ(used.size(), part.sm_count);
        allowed[part.slot] = std::set<unsigned>(used.begin(), used.end());
      }

  constexpr int threads = 32, rounds = 40;
  std::atomic<int> launches{0}, errors{0}, outside{0};
  std::mutex mutex;
  std::string first_problem;
  auto note = [&](const std::string &what) {
    std::lock_guard lock(mutex);
    if (first_problem.empty())
      first_problem = what;
  };
  std::vector<std::thread> pool_threads;
  for (int t = 0; t < threads; ++t)
    pool_threads.emplace_back([&, t] {
      try {
        std::mt19937 rng(t);
        const sm_probe probe_t(dev(), 256, 2us);
        for (int r = 0; r < rounds; ++r) {
          p.use(rng() % p.layouts().size());
          const pool_layout &seen = p.current();
          const pool_partition &part = seen.parts[rng() % seen.parts.size()];
          const stream_ref s = part.streams[rng() % part.streams.size()];
          probe_t.launch(s);
          s.synchronize();
          launches++;
          for (unsigned sm : probe_t.sms_used())
            if (!allowed.at(part.slot).count(sm)) {
              outside++;
              note("a kernel of layout " + seen.name + " partition " + part.label() +
                   " ran on SM " + std::to_string(sm));
            }
        }
      } catch (const std::exception &e) {
        errors++;
        note(e.what());
      }
    });
  for (auto &th : pool_threads)
    th.join();
  EXPECT_EQ(errors.load(), 0) << first_problem;
  EXPECT_EQ(outside.load(), 0) << first_problem;
  EXPECT_EQ(launches.load(), threads * rounds);
}

TEST_F(PoolTest, ten_thousand_switches_take_no_device_memory) {
  pool p = pool::create(dev(), {"16,rest", "32,rest", "64,rest", "all"});
  EXPECT_EQ(p.stats().contexts, 7u) << "16, 32, 64, three rests and all: nothing to share";
  // Warm up: a launch on every stream and one drain, so that lazy allocations come first.
  const sm_probe probe_w(dev(), 64, 0ns);
  for (std::size_t i = 0; i < p.layouts().size(); ++i) {
    for (const pool_partition &part : p.layouts()[i].parts)
      for (stream_ref s : part.streams)
        probe_w.launch(s);
    p.drain(i, (i + 1) % p.layouts().size());
    p.synchronize(i);
  }
  const std::size_t before = dev().memory_info().first;
  std::size_t previous = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::size_t next = static_cast<std::size_t>(i) % p.layouts().size();
    previous = p.use(next);
    if (i % 100 == 0) { // a drain now and then: its events must not pile up either
      p.drain(previous, next);
      probe_w.launch(p.current().parts[0].streams[0]);
    }
  }
  for (std::size_t i = 0; i < p.layouts().size(); ++i)
    p.synchronize(i);
  const std::size_t after = dev().memory_info().first;
  const auto grown = static_cast<long long>(before) - static_cast<long long>(after);
  EXPECT_LE(grown, 2ll << 20) << "device memory grew by " << grown << " bytes";
}

} // namespace
} // namespace greenctx::test
