// What the code-scanning formats (SARIF, GitLab Code Quality) share
// (internal to src/render): each finding and each failed gate check as one
// result, with a rule, a severity, a location in the image and a
// fingerprint that stays the same from run to run while the problem does.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "format.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/percent_encode.hpp"
#include "imgsmith/util/sha256.hpp"

namespace imgsmith::render_detail {

// How much a result matters: a failed gate check fails the build, a
// defect (code the image cannot run) is wrong whatever its size, waste is
// worth fixing, and waste below the significance floor is for information.
enum class ResultWeight { info, waste, defect, failed_gate };

struct CiResult {
  std::string rule;     // a finding's id, or "gate/<rule's kind>" ("gate/max-size")
  std::string title;    // the rule's one-line description
  std::string fix;      // how to fix it, the rule's generic advice
  std::string message;  // this result's text
  ResultWeight weight = ResultWeight::waste;
  std::string path;  // in the image ("/usr/lib/x.so"), or "" for the image as a whole
  std::vector<FindingPath> other_paths;  // a finding's further paths, largest first
  std::vector<std::uint32_t> layers;     // the layers that added the bytes
  std::uint64_t bytes = 0;               // what the fix saves (findings)
  std::string identity;                  // what makes the result the same one in the next run
};

// A path in the image as a relative URI reference (RFC 3986): the leading
// '/' dropped, every byte but the unreserved ones and '/' percent-encoded,
// so that a name with spaces, a ':' or bytes that are not UTF-8 is still one
// valid reference that decodes back to the exact name. A result about the
// image as a whole (path "") is at its root, ".": not at its name, which a
// CI run tags anew each time (app:<commit>) and which would make each run's
// result a new alert.
inline std::string_view image_relative(std::string_view path) {
  while (path.starts_with('/')) path.remove_prefix(1);
  return path.empty() ? "." : path;
}
inline std::string image_uri(std::string_view path) {
  return percent_encode(image_relative(path), "/");
}

// "deny:pip-cache" -> "gate/deny", "fits:H100:/models/x" -> "gate/fits".
inline std::string gate_rule(std::string_view rule) {
  return "gate/" + std::string(rule.substr(0, rule.find(':')));
}

// A fingerprint of `identity`: its SHA-256 in hex, so that no file name's
// bytes reach a field that tools compare as text.
inline std::string fingerprint(std::string_view identity) {
  const std::string digest = sha256_digest(std::string(identity));  // "sha256:<hex>"
  return digest.substr(digest.find(':') + 1);
}

// Every finding, then every failed gate check, in the report's order.
inline std::vector<CiResult> ci_results(const Report& report) {
  std::vector<CiResult> out;
  const auto& known = finding_ids();
  if (report.findings != nullptr)
    for (const Finding& f : *report.findings) {
      CiResult r;
      r.rule = f.id;
      // The rule's own words where this imgsmith knows the id; a saved report
      // from another version may name one it does not.
      if (std::find(known.begin(), known.end(), f.id) != known.end()) {
        const Finding generic = finding_of(f.id);
        r.title = generic.message;
        r.fix = generic.fix;
      } else {
        r.title = f.message;
        r.fix = f.fix;
      }
      r.weight = f.defect ? ResultWeight::defect
                 : f.info ? ResultWeight::info
                          : ResultWeight::waste;
      r.bytes = f.bytes;
      r.message = f.message + (f.bytes > 0 ? " (" + format_size(f.bytes) + " to save)" : "") +
                  ". Fix: " + f.fix;
      if (!f.paths.empty()) {
        r.path = f.paths.front().path;
        r.other_paths.assign(f.paths.begin() + 1, f.paths.end());
      }
      r.layers = f.layers;
      r.identity = "finding\n" + f.id + "\n" + r.path;
      out.push_back(std::move(r));
    }
  for (const GateCheck& c : report.gate.checks) {
    if (c.passed) continue;
    CiResult r;
    r.rule = gate_rule(c.rule);
    r.title = "a gate rule (" + r.rule.substr(5) + ") failed";
    r.fix = "make the image meet the rule, or change the rule's limit in the gate's options";
    r.weight = ResultWeight::failed_gate;
    r.message =
        "gate " + c.rule + " failed: " +
        (c.message.empty() ? "limit " + gate_value(c.limit) + ", actual " + gate_value(c.actual)
                           : c.message);
    // A model's gate names its file after the GPU ("fits:H100:/models/x").
    if (const auto slash = c.rule.find(":/"); slash != std::string::npos)
      r.path = c.rule.substr(slash + 1);
    r.identity = "gate\n" + c.rule;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace imgsmith::render_detail
