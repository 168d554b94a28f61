// SPDX-License-Identifier: Apache-2.0
// A program outside greenctx that uses it as an installed or embedded package: the packaging tests
// build it with find_package, with pkg-config and with add_subdirectory, then run it.
//
// It calls real library code that needs no GPU and exits non-zero on a wrong answer. query_driver()
// must either work (a machine with a driver) or throw greenctx::error (no driver, no GPU): anything
// else is a failure. With --expect-no-driver (run with GREENCTX_LIBCUDA pointing at a library that
// does not exist), it must throw greenctx::error with CUDA_ERROR_NO_DEVICE. device_side.cu,
// compiled by nvcc, must have been given C++20 by the package and parse a request the same way;
// with
// --launch (on a GPU) a kernel of that file runs on a 16-SM green context's stream.
#include <greenctx/greenctx.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <string_view>

// device_side.cu
std::string parsed_in_cuda_file(const char *request);
long cuda_file_standard();
int launch_on_green_context();

namespace {

int failures = 0;

void expect_equal(std::string_view what, const std::string &got, std::string_view want) {
  if (got == want) {
    std::cout << "ok: " << what << " == \"" << got << "\"\n";
    return;
  }
  std::cerr << "FAIL: " << what << " is \"" << got << "\", expected \"" << want << "\"\n";
  ++failures;
}

} // namespace

int main(int argc, char **argv) {
  const bool expect_no_driver = argc > 1 && std::string_view(argv[1]) == "--expect-no-driver";
  const bool launch = argc > 1 && std::string_view(argv[1]) == "--launch";

  try {
    expect_equal("parse_partition_request(\"16,rest\").to_string()",
                 greenctx::parse_partition_request("16,rest").to_string(), "16,rest");
    expect_equal("parse_partition_request(\"8, 8, rest\").to_string()",
                 greenctx::parse_partition_request("8, 8, rest").to_string(), "8,8,rest");
    expect_equal("parse_partition_request(\"16, rest\") in the .cu file",
                 parsed_in_cuda_file("16, rest"), "16,rest");
    expect_equal("the .cu file's standard at least C++20",
                 cuda_file_standard() >= 202002L ? "yes" : std::to_string(cuda_file_standard()),
                 "yes");
    expect_equal("format_cuda_version(12050)", greenctx::format_cuda_version(12050), "12.5");
    expect_equal("format_cuda_version(13010)", greenctx::format_cuda_version(13010), "13.1");
  } catch (const std::exception &e) {
    std::cerr << "FAIL: pure library code threw: " << e.what() << "\n";
    return 1;
  }

  // A malformed request is rejected with request_error, a greenctx::error.
  try {
    greenctx::parse_partition_request("rest,16");
    std::cerr << "FAIL: parse_partition_request(\"rest,16\") did not throw\n";
    ++failures;
  } catch (const greenctx::request_error &e) {
    std::cout << "ok: parse_partition_request(\"rest,16\") threw request_error: " << e.what()
              << "\n";
  }

  try {
    const greenctx::driver_info driver = greenctx::query_driver();
    if (expect_no_driver) {
      std::cerr << "FAIL: query_driver() found a driver (" << driver.library
                << ") although none should load\n";
      ++failures;
    } else {
      std::cout << "query_driver(): CUDA driver " << greenctx::format_cuda_version(driver.version)
                << " from " << driver.library << "\n";
    }
  } catch (const greenctx::error &e) {
    std::cout << "query_driver() threw greenctx::error (" << greenctx::result_name(e.code()) << ", "
              << e.api() << "): " << e.what() << "\n";
    if (expect_no_driver && e.code() != CUDA_ERROR_NO_DEVICE) {
      std::cerr << "FAIL: expected CUDA_ERROR_NO_DEVICE without a driver\n";
      ++failures;
    }
  } catch (const std::exception &e) {
    std::cerr << "FAIL: query_driver() threw something other than greenctx::error: " << e.what()
              << "\n";
    ++failures;
  }

  if (launch) {
    try {
      expect_equal("the flag a kernel of the .cu file wrote on a green context's stream",
                   std::to_string(launch_on_green_context()), "1");
    } catch (const std::exception &e) {
      std::cerr << "FAIL: the launch on a green context threw: " << e.what() << "\n";
      ++failures;
    }
  }

  std::cout << "greenctx built against CUDA "
            << greenctx::format_cuda_version(greenctx::toolkit_version()) << "\n";
  if (failures != 0) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "consumer: all checks passed\n";
  return 0;
}
