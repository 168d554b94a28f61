// SPDX-License-Identifier: Apache-2.0
#include "common/cli_common.hpp"

#include "common/build_commit.hpp"

#include <fmt/format.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

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

void warn_about_connections() {
  if (const auto warning = max_connections_warning())
    print_error("warning: " + *warning);
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

void add_device_option(CLI::App &cmd, int &ordinal) {
  cmd.add_option("-d,--device", ordinal, "GPU ordinal (default 0)")
      ->transform(decimal(0, std::numeric_limits<int>::max(), "ORDINAL"))
      ->capture_default_str();
}

void add_ignore_coscheduling_option(CLI::App &cmd, bool &flag) {
  cmd.add_flag("--ignore-coscheduling", flag,
               "Split with IgnoreSmCoscheduling (steps of 2 SMs on CC 9.0, no cluster guarantee)");
}

void add_quiet_option(CLI::App &cmd, bool &flag, const std::string &help) {
  cmd.add_flag("-q,--quiet", flag, help);
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
      {"commit", build_commit()},
  };
}

nlohmann::json with_date_and_command(nlohmann::json env) {
  env["date"] = utc_now();
  env["command"] = command_line();
  return env;
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

std::optional<std::vector<int>> parse_device_list(std::string_view text, const char *api) {
  constexpr const char *example = "give all, or GPU ordinals separated by commas, e.g. 0 or 0,1";
  const auto reject = [api](const std::string &message) {
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, message);
  };
  if (trim_blanks(text).empty())
    reject(fmt::format("the value is empty: {}", example));
  // Blanks after a comma are fine ("0, 1"); around the whole value they are refused, as for every
  // number on the command line (" 16" is not 16).
  if (trim_blanks(text) != text)
    reject(fmt::format("'{}' has blanks around it: {}", text, example));
  if (text == "all")
    return std::nullopt;
  std::vector<int> ordinals;
  unsigned index = 0;
  for (const std::string_view item : list_entries(text)) {
    ++index;
    constexpr unsigned long long max_ordinal = std::numeric_limits<int>::max();
    if (item.empty())
      reject(fmt::format("entry {} of '{}' is empty: {}", index, text, example));
    if (const std::string why = decimal_problem(item, 0, max_ordinal); !why.empty())
      reject(fmt::format("entry {}: {}; {}", index, why, example));
    const int ordinal = static_cast<int>(*read_decimal(item, max_ordinal));
    for (std::size_t j = 0; j < ordinals.size(); ++j)
      if (ordinals[j] == ordinal)
        reject(fmt::format("GPU {} is listed twice (entries {} and {}): name each GPU once",
                           ordinal, j + 1, index));
    ordinals.push_back(ordinal);
  }
  return ordinals;
}

int one_device(const std::string &text, int fallback, const char *api, const std::string &why) {
  if (text.empty())
    return fallback;
  const auto list = parse_device_list(text, api);
  if (!list || list->size() != 1)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "--device " + text + ": " + why);
  return list->front();
}

std::optional<bool> mps_active(const device &dev) {
  try {
    return dev.attribute(CU_DEVICE_ATTRIBUTE_MPS_ENABLED) != 0;
  } catch (const error &) {
    return std::nullopt;
  }
}

std::optional<std::string> own_program_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

void refuse_mps_percentage(const device &dev, const char *what) {
  const char *v = std::getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  if (!v || !mps_active(dev).value_or(false))
    return;
  char *end = nullptr;
  const double pct = std::strtod(v, &end);
  if (*v && !*end && pct >= 100)
    return;
  throw request_error(
      CUDA_ERROR_NOT_SUPPORTED, what,
      fmt::format("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE={} is set and device {} is an MPS client: "
                  "the driver then gives this process {} of its SMs and none in co-scheduled "
                  "units (measured on the H200: 66 SMs at 50%, 116 at 88%), so no split can be "
                  "made, and one made with --ignore-coscheduling comes from SMs the percentage "
                  "does not give. Pieces of one split already keep processes apart: unset the "
                  "variable for this process",
                  v, dev.ordinal(), dev.sms().sm_count()));
}

std::string visible_devices_note() {
  const char *v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v)
    return {};
  return fmt::format(" (CUDA_VISIBLE_DEVICES={}: ordinals count the GPUs it leaves visible)", v);
}

std::vector<int> resolve_device_list(const std::optional<std::vector<int>> &list, int count,
                                     const char *api) {
  if (count <= 0)
    throw error(CUDA_ERROR_NO_DEVICE, api,
                "the driver sees no GPU" + visible_devices_note() + ": nothing to run on");
  std::vector<int> ordinals;
  if (!list) {
    for (int d = 0; d < count; ++d)
      ordinals.push_back(d);
    return ordinals;
  }
  for (int d : *list)
    if (d >= count)
      throw request_error(
          CUDA_ERROR_INVALID_DEVICE, api,
          fmt::format("--device {}: the driver sees {} GPU{} ({}){}; name those, or all", d, count,
                      count == 1 ? "" : "s",
                      count == 1 ? "ordinal 0" : fmt::format("ordinals 0 to {}", count - 1),
                      visible_devices_note()));
  return *list;
}

CLI::Validator device_list_check(const char *api) {
  return CLI::Validator(
      [api](std::string &value) -> std::string {
        try {
          parse_device_list(value, api);
        } catch (const request_error &e) {
          return e.what();
        }
        return {};
      },
      "all|LIST");
}

std::string join_ordinals(const std::vector<int> &ordinals) {
  std::string out;
  for (int x : ordinals)
    out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

} // namespace greenctx::cli
