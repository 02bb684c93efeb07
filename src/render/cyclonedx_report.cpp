// The image's software bill of materials as CycloneDX 1.5 JSON
// (https://cyclonedx.org/docs/1.5/json/): every package a database in the
// image lists (Attribution::packages: dpkg, rpm, conda, pip, npm/pnpm/Yarn,
// gems, Go and Rust programs), each with its package URL as the purl
// specification builds one (https://github.com/package-url/purl-spec: the
// type per installer, names normalised as each type asks, the rest
// percent-encoded), and the bytes and files imgsmith attributed to it.
// Deterministic: no timestamp, and a serial number derived from the image's
// config digest, so the same image gives the same document.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "imgsmith/render/render.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/percent_encode.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/util/text.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

// Percent-encoding as the purl specification asks: all but ASCII letters,
// digits, ".-_~" and ':' (never encoded).
std::string purl_encode(std::string_view s) { return percent_encode(s, ":"); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// PEP 503's normal form, which the pypi type asks for: lower case, each
// run of '-', '_' and '.' one '-'.
std::string pypi_name(std::string_view name) {
  std::string out;
  for (const char c : lower(name)) {
    const bool separator = c == '-' || c == '_' || c == '.';
    if (separator && !out.empty() && out.back() == '-') continue;
    out += separator ? '-' : c;
  }
  return out;
}

template <class Fn>
void each_line(std::string_view text, Fn fn) {
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    fn(text.substr(from, end - from));
    from = end + 1;
  }
}

// KEY=VALUE lines of an os-release file, quotes removed.
std::map<std::string, std::string> os_release(const Analysis& a) {
  std::map<std::string, std::string> out;
  for (const char* path : {"etc/os-release", "usr/lib/os-release"}) {
    for (const auto& f : a.metadata) {
      if (f.path != path) continue;
      each_line(f.content, [&](std::string_view line) {
        const auto eq = line.find('=');
        if (eq == std::string_view::npos || line.starts_with("#")) return;
        std::string value(line.substr(eq + 1));
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
            value.back() == value.front())
          value = value.substr(1, value.size() - 2);
        out.emplace(std::string(line.substr(0, eq)), value);
      });
      return out;
    }
  }
  return out;
}

// A name-based UUID (RFC 4122's version 5 layout) from the image's
// identity, for the document's serial number.
std::string serial_number(const Analysis& a) {
  const std::string seed = !a.config_digest.empty() ? a.config_digest : a.source;
  const std::string digest = sha256_digest("imgsmith.cyclonedx/" + seed);  // "sha256:<hex>"
  std::string hex = digest.substr(digest.find(':') + 1, 32);
  hex[12] = '5';
  static const char* variant = "89ab";
  hex[16] = variant[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];
  return "urn:uuid:" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

json property(const char* name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

}  // namespace

PackageUrl package_url(const InstalledPackage& p, const std::string& os_id_as_written,
                       const std::string& os_version, const std::string& arch) {
  const std::string os_id = lower(os_id_as_written);
  const std::string distro =
      os_id.empty() ? "" : os_id + (os_version.empty() ? "" : "-" + os_version);
  std::string version = p.version;
  if (version == "(devel)") version.clear();  // Go's mark of a build outside a module's release
  const std::string at = version.empty() ? "" : "@" + purl_encode(version);
  // Qualifiers, sorted by key, empty values left out.
  const auto qualifiers = [](const std::map<std::string, std::string>& q) {
    std::string out;
    for (const auto& [k, v] : q)
      if (!v.empty()) out += (out.empty() ? "?" : "&") + k + "=" + purl_encode(v);
    return out;
  };
  PackageUrl out{"", p.name, ""};
  if (p.installer == "apt") {
    // The deb type's namespace is the vendor; dpkg without an os-release is
    // Debian's own.
    const std::string vendor = os_id.empty() ? "debian" : os_id;
    out.purl = "pkg:deb/" + purl_encode(vendor) + "/" + purl_encode(lower(p.name)) + at +
               qualifiers({{"arch", arch}, {"distro", distro}});
  } else if (p.installer == "rpm") {
    out.purl = "pkg:rpm/" + (os_id.empty() ? "" : purl_encode(os_id) + "/") + purl_encode(p.name) +
               at + qualifiers({{"distro", distro}});
  } else if (p.installer == "conda") {
    out.purl = "pkg:conda/" + purl_encode(p.name) + at;
  } else if (p.installer == "pip") {
    out.purl = "pkg:pypi/" + purl_encode(pypi_name(p.name)) + at;
  } else if (p.installer == "npm" || p.installer == "pnpm" || p.installer == "yarn") {
    std::string_view name = p.name;
    if (name.starts_with('@') && name.find('/') != std::string_view::npos) {
      out.group = std::string(name.substr(0, name.find('/')));
      name.remove_prefix(name.find('/') + 1);
    }
    out.name = std::string(name);
    out.purl = "pkg:npm/" + (out.group.empty() ? "" : purl_encode(out.group) + "/") +
               purl_encode(name) + at;
  } else if (p.installer == "gem") {
    out.purl = "pkg:gem/" + purl_encode(p.name) + at;
  } else if (p.installer == "go") {
    const std::string_view path = p.name;
    std::string namespace_part;
    if (const auto slash = path.rfind('/'); slash != std::string_view::npos) {
      out.group = std::string(path.substr(0, slash));
      out.name = std::string(path.substr(slash + 1));
      for (std::size_t from = 0; from < out.group.size();) {
        const std::size_t end = std::min(out.group.find('/', from), out.group.size());
        namespace_part += (from == 0 ? "" : "/") + purl_encode(out.group.substr(from, end - from));
        from = end + 1;
      }
      namespace_part += "/";
    }
    out.purl = "pkg:golang/" + namespace_part + purl_encode(out.name) + at;
  } else if (p.installer == "cargo") {
    out.purl = "pkg:cargo/" + purl_encode(p.name) + at;
  }
  return out;
}

void render_cyclonedx(const Report& report, std::ostream& out) {
  const Analysis& a = report.analysis;
  if (report.attribution == nullptr || !a.tree)
    throw InputError(
        "cyclonedx needs the image itself (its package databases), not a saved report; "
        "analyze the image with --format cyclonedx");
  const auto os = os_release(a);
  const auto os_value = [&](const char* key) {
    const auto it = os.find(key);
    return it == os.end() ? std::string() : it->second;
  };
  json components = json::array();
  if (const auto id = os.find("ID"); id != os.end()) {
    json system = {
        {"type", "operating-system"}, {"bom-ref", "os"}, {"name", json_text(id->second)}};
    if (const auto v = os.find("VERSION_ID"); v != os.end())
      system["version"] = json_text(v->second);
    if (const auto n = os.find("PRETTY_NAME"); n != os.end())
      system["description"] = json_text(n->second);
    components.push_back(std::move(system));
  }
  for (const InstalledPackage& p : report.attribution->packages) {
    const PackageUrl id = package_url(p, os_value("ID"), os_value("VERSION_ID"), p.architecture);
    json c = {{"type", p.installer == "go" || p.installer == "cargo" ? "application" : "library"},
              {"bom-ref", json_text(p.installer + ":" + p.name + "@" + p.version)},
              {"name", json_text(id.name)}};
    if (!id.group.empty()) c["group"] = json_text(id.group);
    if (!p.version.empty()) c["version"] = json_text(p.version);
    if (!id.purl.empty()) c["purl"] = id.purl;
    c["properties"] = json::array({property("imgsmith:installer", p.installer),
                                   property("imgsmith:files", std::to_string(p.files)),
                                   property("imgsmith:bytes", std::to_string(p.bytes))});
    components.push_back(std::move(c));
  }
  std::string name = !a.tags.empty() ? a.tags.front() : a.source;
  json image = {{"type", "container"}, {"bom-ref", "image"}, {"name", json_text(name)}};
  if (!a.config_digest.empty()) image["version"] = a.config_digest;
  image["properties"] =
      json::array({property("imgsmith:final_bytes", std::to_string(a.final_bytes)),
                   property("imgsmith:platform", a.os + "/" + a.architecture +
                                                     (a.variant.empty() ? "" : "/" + a.variant))});
  const json doc = {
      {"$schema", "http://cyclonedx.org/schema/bom-1.5.schema.json"},
      {"bomFormat", "CycloneDX"},
      {"specVersion", "1.5"},
      {"serialNumber", serial_number(a)},
      {"version", 1},
      {"metadata",
       {{"tools",
         {{"components",
           json::array({{{"type", "application"}, {"name", "imgsmith"}, {"version", kVersion}}})}}},
        {"component", image}}},
      {"components", components}};
  out << doc.dump(2) << "\n";
}

}  // namespace imgsmith
