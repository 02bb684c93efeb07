// Reading Python dependency specifications: PEP 508 requirement lines, PEP
// 503 names, and enough of PEP 440 (plus Poetry's ^ and ~) to tell which
// Python release a project accepts.
#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <vector>

#include "gen_internal.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {

std::string normalise_name(const std::string& name) {
  std::string out;
  bool in_separator = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      in_separator = true;
      continue;
    }
    if (in_separator && !out.empty()) out += '-';
    in_separator = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::optional<Requirement> parse_requirement(const std::string& text, const std::string& source) {
  std::string line = text;
  // A comment starts at '#' at the line's start or after whitespace (PEP 508
  // URLs may hold '#egg=' fragments, which follow no space).
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])))) {
      line.resize(i);
      break;
    }
  line = trim(line);
  if (line.empty() || !std::isalnum(static_cast<unsigned char>(line[0]))) return std::nullopt;
  std::size_t i = 0;
  while (i < line.size() && is_name_char(line[i])) ++i;
  Requirement r;
  r.name = normalise_name(line.substr(0, i));
  r.text = line;
  r.source = source;
  std::string rest = line.substr(i);
  // After a name comes an extra, a specifier, a marker or a URL; anything
  // else ("git+https://...", "./path") is not a requirement by name.
  if (!rest.empty() && std::string(" \t[(;@<>=!~").find(rest[0]) == std::string::npos)
    return std::nullopt;
  if (const auto semi = rest.find(';'); semi != std::string::npos) rest.resize(semi);
  rest = trim(rest);
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return std::nullopt;
    for (const auto& e : split(rest.substr(1, close - 1), ",")) {
      const std::string extra = normalise_name(std::string(trim(e)));
      if (!extra.empty()) r.extras.push_back(extra);
    }
    rest = trim(rest.substr(close + 1));
  }
  if (!rest.empty() && rest[0] == '@') {  // name @ URL: no specifier to read
    r.specifier = "";
    return r;
  }
  if (!rest.empty() && rest.front() == '(' && rest.back() == ')')
    rest = rest.substr(1, rest.size() - 2);
  std::string spec;
  for (char c : rest)
    if (!std::isspace(static_cast<unsigned char>(c))) spec += c;
  // Every clause is an operator and a version; "numpy is great" is prose.
  static const std::regex kClause(R"((===|~=|==|!=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+)");
  if (!spec.empty())
    for (const auto& clause : split(spec, ","))
      if (!std::regex_match(clause, kClause)) return std::nullopt;
  r.specifier = spec;
  return r;
}

// ----- versions ----------------------------------------------------------

namespace {

struct Version {
  std::vector<int> parts;
  bool wildcard = false;  // "3.11.*"
};

std::optional<Version> parse_version(std::string text) {
  Version v;
  if (const auto plus = text.find('+'); plus != std::string::npos) text.resize(plus);
  if (text.size() >= 2 && text.compare(text.size() - 2, 2, ".*") == 0) {
    v.wildcard = true;
    text.resize(text.size() - 2);
  }
  if (text.empty()) return std::nullopt;
  for (const auto& p : split(text, ".")) {
    std::size_t digits = 0;
    while (digits < p.size() && std::isdigit(static_cast<unsigned char>(p[digits]))) ++digits;
    if (digits == 0) break;               // a pre-release tail such as "0rc1" ends the release part
    if (digits > 9) return std::nullopt;  // no release number is that long
    v.parts.push_back(std::stoi(p.substr(0, digits)));
    if (digits != p.size()) break;
  }
  if (v.parts.empty()) return std::nullopt;
  return v;
}

int compare(const std::vector<int>& a, const std::vector<int>& b) {
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int x = i < a.size() ? a[i] : 0;
    const int y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool prefix_matches(const std::vector<int>& candidate, const std::vector<int>& prefix) {
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if ((i < candidate.size() ? candidate[i] : 0) != prefix[i]) return false;
  return true;
}

// One clause against one concrete version. Unknown operators match nothing,
// so a constraint we cannot read never silently picks a Python.
bool clause_holds(const std::vector<int>& v, const std::string& clause) {
  static const char* const kOps[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">", "^", "~"};
  std::string op;
  for (const char* o : kOps)
    if (clause.rfind(o, 0) == 0) {
      op = o;
      break;
    }
  const std::string operand = clause.substr(op.size());
  if (operand == "*" && op.empty()) return true;
  const auto target = parse_version(operand);
  if (!target) return false;
  const auto& t = target->parts;
  if (op.empty()) op = "==";  // Poetry's bare "3.11"
  if (op == "==" || op == "===") {
    if (target->wildcard || t.size() < 3) return prefix_matches(v, t);
    return compare(v, t) == 0;
  }
  if (op == "!=") return !(target->wildcard ? prefix_matches(v, t) : compare(v, t) == 0);
  if (op == "<=") return compare(v, t) <= 0;
  if (op == ">=") return compare(v, t) >= 0;
  if (op == "<") return compare(v, t) < 0;
  if (op == ">") return compare(v, t) > 0;
  if (op == "~=") {
    if (t.size() < 2) return false;
    return compare(v, t) >= 0 && prefix_matches(v, std::vector<int>(t.begin(), t.end() - 1));
  }
  if (op == "^") {  // Poetry: up to the next change of the first non-zero part
    std::vector<int> upper = t;
    std::size_t i = 0;
    while (i + 1 < upper.size() && upper[i] == 0) ++i;
    upper.resize(i + 1);
    ++upper[i];
    return compare(v, t) >= 0 && compare(v, upper) < 0;
  }
  if (op == "~") {  // Poetry: ~3.10 is >=3.10,<3.11; ~3 is >=3,<4
    std::vector<int> upper = t;
    upper.resize(t.size() >= 2 ? 2 : 1);
    ++upper.back();
    return compare(v, t) >= 0 && compare(v, upper) < 0;
  }
  return false;
}

}  // namespace

bool version_less(const std::string& a, const std::string& b) {
  const auto va = parse_version(a);
  const auto vb = parse_version(b);
  if (!va || !vb) return false;
  return compare(va->parts, vb->parts) < 0;
}

bool python_satisfies(const std::string& version, const std::string& specifier) {
  const auto v = parse_version(version);
  if (!v) return false;
  // Spaces go, except that Poetry separates clauses with them (">=3.9 <3.11"):
  // a space between a version and the next operator becomes a comma.
  std::string spec;
  bool pending_space = false;
  for (char c : specifier) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (pending_space && !spec.empty() && std::string("<>=!~^").find(c) != std::string::npos &&
        std::string("<>=!~^,|").find(spec.back()) == std::string::npos)
      spec += ',';
    pending_space = false;
    spec += c;
  }
  if (spec.empty()) return true;
  for (const auto& alternative : split(spec, "||")) {  // Poetry's "or"
    for (int patch = 0; patch <= 40; ++patch) {
      std::vector<int> candidate = {v->parts[0], v->parts.size() > 1 ? v->parts[1] : 0, patch};
      bool all = true;
      for (const auto& clause : split(alternative, ","))
        if (!clause.empty() && !clause_holds(candidate, clause)) {
          all = false;
          break;
        }
      if (all) return true;
    }
  }
  return false;
}

bool release_satisfies(const std::string& version, const std::string& specifier) {
  const auto v = parse_version(version);
  if (!v) return false;
  std::string spec;
  for (char c : specifier)
    if (!std::isspace(static_cast<unsigned char>(c))) spec += c;
  if (spec.empty()) return true;
  for (const auto& clause : split(spec, ","))
    if (!clause.empty() && !clause_holds(v->parts, clause)) return false;
  return true;
}

std::string major_minor(const std::string& version_text) {
  const auto v = parse_version(version_text);
  if (!v) return "";
  return std::to_string(v->parts[0]) + "." + std::to_string(v->parts.size() > 1 ? v->parts[1] : 0);
}

std::string lower_bound_release(const std::string& specifier) {
  // The release a specifier starts from: "==2.6.0" -> 2.6.0, ">=2.6,<2.7" ->
  // 2.6, "~=2.6.1" -> 2.6.1. Upper bounds and exclusions say nothing here.
  for (const auto& clause : split(specifier, ",")) {
    for (const char* op : {"===", "~=", "==", ">=", "^", "~"}) {
      if (clause.rfind(op, 0) != 0) continue;
      if (std::string(op) == "~" && clause.rfind("~=", 0) == 0) continue;
      std::string operand = clause.substr(std::string(op).size());
      if (const auto plus = operand.find('+'); plus != std::string::npos) operand.resize(plus);
      if (operand.size() >= 2 && operand.compare(operand.size() - 2, 2, ".*") == 0)
        operand.resize(operand.size() - 2);
      return operand;
    }
  }
  return "";
}

std::string poetry_to_pep440(const std::string& specifier) {
  std::vector<std::string> out;
  for (const auto& raw : split(specifier, ",")) {
    const std::string clause(trim(raw));
    const bool caret = clause.rfind('^', 0) == 0;
    const bool tilde = clause.rfind('~', 0) == 0 && clause.rfind("~=", 0) != 0;
    if (!caret && !tilde) {
      out.push_back(clause);
      continue;
    }
    const auto v = parse_version(clause.substr(1));
    if (!v) {
      out.push_back(clause);
      continue;
    }
    std::vector<int> upper = v->parts;
    if (caret) {
      std::size_t i = 0;
      while (i + 1 < upper.size() && upper[i] == 0) ++i;
      upper.resize(i + 1);
    } else {
      upper.resize(upper.size() >= 2 ? 2 : 1);
    }
    ++upper.back();
    std::vector<std::string> parts;
    for (int p : upper) parts.push_back(std::to_string(p));
    out.push_back(">=" + clause.substr(1));
    out.push_back("<" + join(parts, "."));
  }
  return join(out, ",");
}

bool exact_pin(const std::string& specifier) {
  return specifier.rfind("==", 0) == 0 && specifier.find(',') == std::string::npos;
}

std::string local_label(const std::string& specifier) {
  const auto plus = specifier.find('+');
  if (plus == std::string::npos) return "";
  std::string label;
  for (std::size_t i = plus + 1;
       i < specifier.size() && std::isalnum(static_cast<unsigned char>(specifier[i])); ++i)
    label += specifier[i];
  return label;
}

std::vector<std::string> split_command(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                 (text[i + 1] == '"' || text[i + 1] == '\\')) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
    } else {
      word += c;
    }
  }
  if (quote != 0)
    throw InputError("--cmd: the quote " + std::string(1, quote) + " is never closed");
  if (in_word) words.push_back(word);
  if (words.empty()) throw InputError("--cmd: the command is empty; give the program to run");
  return words;
}

}  // namespace imgsmith::gen
