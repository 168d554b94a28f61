# SPDX-License-Identifier: Apache-2.0
# The CLI's pure code (the report model and every command's record, the SM-list options), as
# paths under tools/greenctx: the library greenctx_cli_report here, and the sanitizer tier's build
# of the same code with the process module (tests/sanitize/CMakeLists.txt).
set(greenctx_cli_report_sources
  report/output.cpp
  report/record.cpp
  report/record_json.cpp
  report/record_svg.cpp
  report/svg.cpp
  report/table.cpp
  common/sm_list_option.cpp
  commands/bench/adaptive_record.cpp
  commands/bench/bandwidth_record.cpp
  commands/bench/comm_plan.cpp
  commands/bench/comm_record.cpp
  commands/bench/latency_record.cpp
  commands/info/info_record.cpp
  commands/split/split_record.cpp
  commands/verify/verify_record.cpp
  commands/scale/metric.cpp
  commands/scale/records.cpp
  commands/scale/scale_record.cpp
  commands/scale/sm_list.cpp
  commands/tune/tune_record.cpp)
