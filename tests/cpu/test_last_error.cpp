// The calling thread's last error, and GREENCTX_LOG_FILE.
#include <greenctx/plan/error.hpp>
#include <greenctx/plan/partition_plan.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace greenctx {
namespace {

TEST(LastError, KeepsTheLastMessagePerThread) {
  clear_last_error();
  EXPECT_EQ(last_error_message(), "");
  EXPECT_THROW(parse_partition_request("16,,rest"), request_error);
  const std::string mine = last_error_message();
  EXPECT_NE(mine.find("empty"), std::string::npos) << mine;
  std::string other;
  std::thread([&] { other = last_error_message(); }).join();
  EXPECT_EQ(other, "") << "another thread saw this thread's error";
  clear_last_error();
  EXPECT_EQ(last_error_message(), "");
}

TEST(LastError, IsWrittenToTheLogFileWhenSet) {
  const std::string path = ::testing::TempDir() + "greenctx-log-test.txt";
  std::remove(path.c_str());
  ASSERT_EQ(::setenv("GREENCTX_LOG_FILE", path.c_str(), 1), 0);
  EXPECT_THROW(parse_partition_request("0,rest"), request_error);
  EXPECT_THROW(parse_partition_request("abc"), request_error);
  ::unsetenv("GREENCTX_LOG_FILE");
  EXPECT_THROW(parse_partition_request("-1"), request_error); // not logged: unset again
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  const std::string log = text.str();
  EXPECT_NE(log.find("[greenctx::parse_partition_request] CUresult 1: item 1 of '0,rest'"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("'abc'"), std::string::npos) << log;
  EXPECT_EQ(log.find("negative"), std::string::npos) << log;
  std::remove(path.c_str());
}

} // namespace
} // namespace greenctx
