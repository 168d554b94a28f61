// SPDX-License-Identifier: Apache-2.0
#include "common/help.hpp"

#include "common/build_commit.hpp"

#include <greenctx/version.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

namespace greenctx::cli {
namespace {

// The column an option's description starts in: after the name and two spaces or more, within
// `width`; 0 when the line is not an option's.
std::size_t description_column(std::string_view line, std::size_t width) {
  if (!line.starts_with("  ") || line.size() < 3 || line[2] == ' ')
    return 0;
  const std::size_t gap = line.find("  ", 2);
  if (gap == std::string_view::npos)
    return 0;
  const std::size_t start = line.find_first_not_of(' ', gap);
  return start != std::string_view::npos && start < width / 2 ? start : 0;
}

void wrap_line(std::string_view line, std::size_t width, std::string &out) {
  if (line.size() <= width) {
    out.append(line);
    return;
  }
  std::size_t indent = description_column(line, width);
  if (indent == 0)
    indent = std::min(line.find_first_not_of(' '), width / 2);
  std::size_t pos = 0;
  bool first = true;
  while (pos < line.size()) {
    const std::size_t room = first ? width : width - indent;
    std::string_view rest = line.substr(pos);
    if (!first)
      rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
    if (rest.empty())
      break;
    std::size_t cut = rest.size();
    if (rest.size() > room) {
      const std::size_t space = rest.rfind(' ', room);
      // After the first line a break must leave a word behind it; a word longer than the room
      // stays whole, up to the next space.
      cut = space != std::string_view::npos && space > (first ? indent : 0)
                ? space
                : std::min(rest.find(' ', room), rest.size());
    }
    if (!first)
      out.append("\n").append(indent, ' ');
    std::string_view piece = rest.substr(0, cut);
    while (!piece.empty() && piece.back() == ' ')
      piece.remove_suffix(1);
    out.append(piece);
    pos = static_cast<std::size_t>(rest.data() - line.data()) + cut;
    first = false;
  }
}

class wrapping : public CLI::Formatter {
public:
  std::string make_help(const CLI::App *app, std::string name,
                        CLI::AppFormatMode mode) const override {
    return wrap_text(CLI::Formatter::make_help(app, std::move(name), mode), help_width());
  }
};

// The options of one command, in completion order: long names, then short ones.
std::string option_words(const CLI::App &app) {
  std::string words;
  for (const CLI::Option *o : app.get_options()) {
    for (const std::string &l : o->get_lnames())
      words += " --" + l;
    for (const std::string &s : o->get_snames())
      words += " -" + s;
  }
  return words;
}

// The options of one command that take a value, as a case pattern ("--json|--csv"); empty when
// none does.
std::string valued_options(const CLI::App &app) {
  std::string pattern;
  for (const CLI::Option *o : app.get_options()) {
    if (o->get_positional() || o->get_expected_min() == 0)
      continue;
    for (const std::string &l : o->get_lnames())
      pattern += (pattern.empty() ? "--" : "|--") + l;
    for (const std::string &s : o->get_snames())
      pattern += (pattern.empty() ? "-" : "|-") + s;
  }
  return pattern;
}

} // namespace

std::string wrap_text(std::string_view text, std::size_t width) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    wrap_line(text.substr(0, end), width, out);
    if (end == std::string_view::npos)
      break;
    out.push_back('\n');
    text.remove_prefix(end + 1);
  }
  return out;
}

std::size_t help_width() {
  if (const char *columns = std::getenv("COLUMNS")) {
    char *end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n >= 40 && n <= 1000)
      return static_cast<std::size_t>(n);
  }
  winsize w{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
    return std::max<std::size_t>(w.ws_col, 40);
  return 100;
}

std::shared_ptr<CLI::Formatter> wrapping_formatter() {
  return std::make_shared<wrapping>();
}

std::string exit_footer(std::string_view one, std::string_view more) {
  return fmt::format(
      "Exit codes: 0 ok;{} 2 bad input (flags, counts, a split, a GPU ordinal), before anything "
      "runs; 3 no NVIDIA driver or no GPU; 4 the driver lacks a needed feature; 5 another CUDA "
      "error{}. Every number is decimal: 016 is 16; 0x10, -1 and 1e3 are refused.",
      one.empty() ? "" : fmt::format(" 1 {};", one), more.empty() ? "" : fmt::format("; {}", more));
}

std::string version_line() {
  return fmt::format("greenctx {} (commit {})", GREENCTX_VERSION_STRING, build_commit());
}

std::string bash_completion(const CLI::App &app) {
  std::string commands;
  std::string cases;
  for (const CLI::App *sub : app.get_subcommands({})) {
    if (sub->get_group().empty())
      continue; // hidden: the internal commands
    commands += " " + sub->get_name();
    const std::string valued = valued_options(*sub);
    cases += fmt::format("    {})\n", sub->get_name());
    if (!valued.empty())
      cases += fmt::format("      case $prev in {}) COMPREPLY=($(compgen -f -- \"$cur\")); "
                           "return ;; esac\n",
                           valued);
    cases += fmt::format("      words_here='{}' ;;\n", option_words(*sub).substr(1));
  }
  return fmt::format(
      "# bash completion for greenctx {version}, made by `greenctx completion bash` from its\n"
      "# parser. Source it, or install it as share/bash-completion/completions/greenctx.\n"
      "_greenctx() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} cmd=\"\" i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    [ \"${{COMP_WORDS[i]}}\" = -- ] && {{ COMPREPLY=($(compgen -c -- \"$cur\")); return; "
      "}}\n"
      "    case ${{COMP_WORDS[i]}} in -*) ;; *) [ -z \"$cmd\" ] && cmd=${{COMP_WORDS[i]}} ;; esac\n"
      "  done\n"
      "  local words_here\n"
      "  case $cmd in\n"
      "    \"\") words_here='{top} {commands}' ;;\n"
      "    help) words_here='{commands}' ;;\n"
      "{cases}"
      "    *) return ;;\n"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words_here\" -- \"$cur\"))\n"
      "}}\n"
      "complete -o default -F _greenctx greenctx\n",
      fmt::arg("version", GREENCTX_VERSION_STRING), fmt::arg("top", option_words(app).substr(1)),
      fmt::arg("commands", commands.substr(1)), fmt::arg("cases", cases));
}

} // namespace greenctx::cli
