#include "cli_common.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <ctime>

namespace greenctx::cli {

int exit_code_for(const error &e) noexcept {
  if (dynamic_cast<const request_error *>(&e))
    return exit_usage;
  if (dynamic_cast<const unsupported_error *>(&e))
    return exit_unsupported;
  switch (e.code()) {
  case CUDA_ERROR_INVALID_DEVICE:
    return exit_usage;
  case CUDA_ERROR_NO_DEVICE:
    return exit_no_gpu;
  case CUDA_ERROR_NOT_SUPPORTED: // e.g. a co-scheduled count this driver cannot guarantee
    return exit_unsupported;
  default:
    return exit_cuda_error;
  }
}

void print_error(const std::string &message) {
  std::fprintf(stderr, "greenctx: %s\n", message.c_str());
}

CLI::Validator decimal(unsigned long long min, unsigned long long max,
                       std::optional<std::string> description) {
  return CLI::Validator(
      [min, max](std::string &value) -> std::string {
        std::string why = decimal_problem(value, min, max);
        if (why.empty())
          value = std::to_string(*read_decimal(value, max)); // "016" -> "16": CLI11 reads 0-octal
        return why;
      },
      description ? std::move(*description) : fmt::format("in [{} - {}]", min, max));
}

nlohmann::json environment_json(const driver_info &drv, const device &dev) {
  const auto [major, minor] = dev.compute_capability();
  const sm_resource sms = dev.sms();
  return {
      {"driver_version", format_cuda_version(drv.version)},
      {"toolkit_version", format_cuda_version(toolkit_version())},
      {"device", dev.ordinal()},
      {"gpu", dev.name()},
      {"compute_capability", fmt::format("{}.{}", major, minor)},
      {"sm_count", sms.sm_count()},
      {"min_partition", sms.min_partition_size()},
      {"coscheduled_alignment", sms.coscheduled_alignment()},
  };
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

namespace {
std::string &stored_command_line() {
  static std::string line;
  return line;
}
} // namespace

void set_command_line(int argc, char **argv) {
  std::string &line = stored_command_line();
  line.clear();
  for (int i = 0; i < argc; ++i)
    line += (i ? " " : "") + std::string(argv[i]);
}

const std::string &command_line() {
  return stored_command_line();
}

std::string format_us(double us) {
  if (us >= 1000.0)
    return fmt::format("{:.2f} ms", us / 1000.0);
  return fmt::format("{:.1f} us", us);
}

} // namespace greenctx::cli
