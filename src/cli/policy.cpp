#include "policy.hpp"

#include <toml++/toml.h>

#include <filesystem>
#include <regex>
#include <set>

#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

namespace fs = std::filesystem;

std::string where(const std::string& path, const toml::node& node) {
  return path + ":" + std::to_string(node.source().begin.line);
}

std::string text_of(const std::string& path, const std::string& key, const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  throw InputError(where(path, node) + ": " + key + " must be a string such as \"2GB\"");
}

double number_of(const std::string& path, const std::string& key, const toml::node& node) {
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
  throw InputError(where(path, node) + ": " + key + " must be a number between 0 and 1");
}

std::vector<std::string> list_of(const std::string& path, const std::string& key,
                                 const toml::node& node) {
  const auto* arr = node.as_array();
  if (arr == nullptr)
    throw InputError(where(path, node) + ": " + key + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : *arr) {
    const auto* s = item.as_string();
    if (s == nullptr)
      throw InputError(where(path, item) + ": " + key + " must be a list of strings");
    out.push_back(s->get());
  }
  return out;
}

std::string relative_to(const std::string& file, const std::string& value) {
  const fs::path p(value);
  if (p.is_absolute()) return value;
  return (fs::path(file).parent_path() / p).lexically_normal().string();
}

const toml::table& table_at(const std::string& path, const toml::node& node,
                            const std::string& name) {
  const auto* t = node.as_table();
  if (t == nullptr) throw InputError(where(path, node) + ": [" + name + "] must be a table");
  return *t;
}

}  // namespace

Policy load_policy(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw InputError(path + ":" + std::to_string(e.source().begin.line) + ": " +
                     std::string(e.description()));
  }
  Policy p;
  p.path = path;
  for (const auto& [section_key, section] : doc) {
    const std::string section_name(section_key.str());
    if (section_name == "analyze") {
      for (const auto& [k, v] : table_at(path, section, section_name)) {
        const std::string key(k.str());
        if (key == "max-size")
          p.max_size = text_of(path, key, v);
        else if (key == "max-wasted")
          p.max_wasted = text_of(path, key, v);
        else if (key == "max-vram")
          p.max_vram = text_of(path, key, v);
        else if (key == "fits")
          p.fits = text_of(path, key, v);
        else if (key == "precision")
          p.precision = text_of(path, key, v);
        else if (key == "gpus")
          p.gpus = list_of(path, key, v);
        else if (key == "dive-ci")
          p.dive_ci = relative_to(path, text_of(path, key, v));
        else if (key == "rules")
          p.rules = relative_to(path, text_of(path, key, v));
        else if (key == "min-efficiency")
          p.min_efficiency = number_of(path, key, v);
        else if (key == "max-user-wasted-percent")
          p.max_user_wasted_percent = number_of(path, key, v);
        else if (key == "deny")
          p.deny = list_of(path, key, v);
        else if (key == "ignore")
          p.ignore = list_of(path, key, v);
        else if (key == "budget")
          for (const auto& [cat, size] : table_at(path, v, "analyze.budget"))
            p.budgets.emplace_back(std::string(cat.str()), text_of(path, "budget", size));
        else
          throw InputError(where(path, v) + ": unknown key '" + key + "' in [analyze]");
      }
    } else if (section_name == "diff") {
      for (const auto& [k, v] : table_at(path, section, section_name)) {
        const std::string key(k.str());
        if (key == "max-growth")
          p.max_growth = text_of(path, key, v);
        else
          throw InputError(where(path, v) + ": unknown key '" + key + "' in [diff]");
      }
    } else if (section_name == "gen") {
      continue;  // imgsmith gen's; load_gen_policy reads and checks it
    } else {
      throw InputError(where(path, section) + ": unknown section [" + section_name +
                       "] (imgsmith.toml has [analyze], [diff] and [gen])");
    }
  }
  return p;
}

std::optional<GenPolicy> load_gen_policy(const std::string& project_dir) {
  const auto found = find_policy(project_dir);
  if (!found) return std::nullopt;
  const std::string& path = *found;
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw InputError(path + ":" + std::to_string(e.source().begin.line) + ": " +
                     std::string(e.description()) + "; fix the file");
  }
  const toml::node* section = doc.get("gen");
  if (section == nullptr) return std::nullopt;
  GenPolicy g;
  g.path = path;
  auto bad = [&](const toml::node& v, const std::string& key, const std::string& what) {
    return InputError(where(path, v) + ": [gen] " + key + ": " + what);
  };
  auto string_of = [&](const toml::node& v, const std::string& key, const std::string& example) {
    const auto* s = v.as_string();
    if (s == nullptr) throw bad(v, key, "must be a string, such as " + example);
    return s->get();
  };
  static const std::regex kCuda(R"(\d+\.\d+(\.\d+)?)");
  // Debian's package names (Policy 5.6.1), optionally pinned as apt takes it.
  static const std::regex kPackage(R"([a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+~:*-]+)?)");
  for (const auto& [k, v] : table_at(path, *section, "gen")) {
    const std::string key(k.str());
    if (key == "cuda") {
      g.cuda = string_of(v, key, "\"12.4\"");
      if (!std::regex_match(*g.cuda, kCuda))
        throw bad(v, key,
                  "'" + *g.cuda + "' is no CUDA release; give X.Y or X.Y.Z, such as \"12.8\"");
    } else if (key == "flavor") {
      g.flavor = string_of(v, key, "\"runtime\"");
      if (*g.flavor != "auto" && *g.flavor != "base" && *g.flavor != "runtime" &&
          *g.flavor != "devel")
        throw bad(v, key, "'" + *g.flavor + "': choose auto, base, runtime or devel");
    } else if (key == "requirements") {
      g.requirements = string_of(v, key, "\"requirements-gpu.txt\"");
    } else if (key == "cmd") {
      if (v.is_array()) {
        g.cmd = list_of(path, "[gen] cmd", v);
      } else {
        try {
          g.cmd = gen::split_command(
              string_of(v, key, "\"python -m app\" or [\"python\", \"-m\", \"app\"]"));
        } catch (const InputError& e) {
          throw bad(v, key, e.what());
        }
      }
      if (g.cmd->empty()) throw bad(v, key, "is empty; give the command the image runs");
    } else if (key == "port") {
      const auto* i = v.as_integer();
      if (i == nullptr || i->get() < 1 || i->get() > 65535)
        throw bad(v, key, "give a TCP port from 1 to 65535, such as 8080");
      g.port = static_cast<int>(i->get());
    } else if (key == "system_packages") {
      g.system_packages = list_of(path, "[gen] system_packages", v);
      for (const auto& p : g.system_packages)
        if (!std::regex_match(p, kPackage))
          throw bad(
              v, key,
              "'" + p +
                  "' is not a Debian package name (lower case, such as \"ffmpeg\" or \"libgl1\")");
    } else if (key == "extras") {
      g.extras = list_of(path, "[gen] extras", v);
    } else if (key == "writable") {
      g.writable = list_of(path, "[gen] writable", v);
    } else if (key == "gpus") {
      g.gpus = list_of(path, "[gen] gpus", v);
    } else if (key == "packages") {
      const auto* table = v.as_table();
      if (table == nullptr)
        throw bad(v, key,
                  "must be a table of package = need, such as { \"faster-whisper\" = "
                  "\"bundled\" }");
      for (const auto& [name, need] : *table) {
        const auto* text = need.as_string();
        const std::string n = text == nullptr ? std::string() : text->get();
        if (n != "none" && n != "bundled" && n != "system" && n != "system-cudnn")
          throw bad(need, key + "." + std::string(name.str()),
                    "choose none, bundled (its wheels bring their own CUDA), system (it loads "
                    "the image's CUDA) or system-cudnn");
        g.packages[gen::normalise_name(std::string(name.str()))] = n;
      }
    } else {
      throw bad(v, key,
                "unknown key; [gen] has cuda, flavor, cmd, port, system_packages, requirements, "
                "extras, packages, writable and gpus");
    }
  }
  return g;
}

void apply_gen_policy(const GenPolicy& g, gen::Options& o, std::string& requirements) {
  if (o.cuda.empty() && g.cuda) o.cuda = *g.cuda;
  if (o.flavor.empty() && g.flavor) o.flavor = *g.flavor;
  if (o.cmd.empty() && g.cmd) o.cmd = *g.cmd;
  if (o.port == 0 && g.port) o.port = *g.port;
  if (requirements.empty() && g.requirements) requirements = *g.requirements;
  o.system_packages = g.system_packages;
  o.extras = g.extras;
  o.packages = g.packages;
  o.writable = g.writable;
  if (o.target_gpus.empty()) o.target_gpus = g.gpus;
  o.policy_source = g.path + " [gen]";
}

std::optional<std::string> find_policy(const std::string& start) {
  std::error_code ec;
  fs::path dir = fs::absolute(start, ec);
  if (ec) return std::nullopt;
  for (;;) {
    const fs::path candidate = dir / "imgsmith.toml";
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
    if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
    dir = dir.parent_path();
  }
}

std::optional<Policy> command_policy(const std::string& given, bool disabled) {
  if (!given.empty()) return load_policy(given);
  if (disabled) return std::nullopt;
  if (const auto found = find_policy(".")) return load_policy(*found);
  return std::nullopt;
}

}  // namespace imgsmith
