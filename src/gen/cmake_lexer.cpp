// The commands of a CMakeLists.txt, read as far as detection needs them:
// names and arguments, comments removed, with the line each starts on.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "detect_internal.hpp"

namespace imgsmith::gen {

std::string strip_cmake_comments(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"') quoted = !quoted;
      if (line[i] == '#' && !quoted) {
        line.resize(i);
        break;
      }
    }
    out += line + "\n";
  }
  return out;
}

// Reads the commands of a CMakeLists.txt by hand: a regular expression over
// a whole file recurses once per character in libstdc++ and overflows the
// stack on long argument lists.
std::vector<CMakeCommand> cmake_commands(const std::string& text) {
  std::vector<CMakeCommand> out;
  std::size_t i = 0;
  const std::size_t n = text.size();
  int line = 1;
  std::size_t counted = 0;  // text[0, counted) has been counted into line
  while (i < n) {
    if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    std::size_t k = j;
    while (k < n && (text[k] == ' ' || text[k] == '\t')) ++k;
    if (k >= n || text[k] != '(') {
      i = j;
      continue;
    }
    CMakeCommand c;
    line += static_cast<int>(std::count(text.begin() + static_cast<long>(counted),
                                        text.begin() + static_cast<long>(i), '\n'));
    counted = i;
    c.line = line;
    for (std::size_t x = i; x < j; ++x)
      c.name += static_cast<char>(std::tolower(static_cast<unsigned char>(text[x])));
    int depth = 1;
    std::string word;
    bool quoted = false;
    for (k = k + 1; k < n && depth > 0; ++k) {
      const char ch = text[k];
      if (quoted) {
        if (ch == '"')
          quoted = false;
        else
          word += ch;
        continue;
      }
      if (ch == '"') {
        quoted = true;
      } else if (ch == '(') {
        ++depth;
        word += ch;
      } else if (ch == ')') {
        if (--depth > 0) word += ch;
      } else if (std::isspace(static_cast<unsigned char>(ch))) {
        if (!word.empty()) c.args.push_back(word);
        word.clear();
        continue;
      } else {
        word += ch;
      }
      if (depth == 0 && !word.empty()) c.args.push_back(word);
    }
    if (!word.empty() && depth > 0) c.args.push_back(word);
    out.push_back(std::move(c));
    i = k;
  }
  return out;
}

}  // namespace imgsmith::gen
