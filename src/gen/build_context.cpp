// The docker build context: where the project sits in it (--context), and
// which paths the project names outside its own directory COPY can reach.
#include <algorithm>
#include <system_error>

#include "gen_internal.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

bool climbs_out(const std::string& rel) { return rel == ".." || rel.rfind("../", 0) == 0; }

// COPY's plain form splits its arguments at whitespace.
bool has_space(const std::string& path) { return path.find_first_of(" \t") != std::string::npos; }

// "a/b/../c/" as "a/c"; "" as ".".
std::string normal(const fs::path& path) {
  std::string s = path.lexically_normal().generic_string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s.empty() ? "." : s;
}

}  // namespace

BuildContext::BuildContext(const fs::path& project, const fs::path& context,
                           std::vector<Evidence>& evidence)
    : project_(project), context_(context.empty() ? project : context), evidence_(evidence) {
  std::error_code ec;
  if (context.empty()) {
    canonical_ = fs::weakly_canonical(fs::absolute(project, ec), ec);
    return;
  }
  const auto status = fs::status(context, ec);
  if (ec || !fs::exists(status) || !fs::is_directory(status))
    throw InputError("--context " + context.string() + ": " +
                     (fs::exists(status) ? "not a directory" : "no such directory") +
                     "; give the project directory " + project.string() +
                     " or a directory above it");
  std::error_code project_ec;
  const fs::path real_project = fs::canonical(project, project_ec);
  canonical_ = fs::canonical(context, ec);
  if (ec || project_ec)
    throw InputError("--context " + context.string() + ": cannot resolve it (" +
                     (ec ? ec : project_ec).message() + ")");
  // Real paths, so that a symlinked checkout or "services/.." is judged by
  // where it is.
  const fs::path within = real_project.lexically_relative(canonical_);
  if (within.empty() || climbs_out(normal(within)))
    throw InputError(
        "--context " + context.string() + " is not the project directory " + project.string() +
        " or a directory above it; the build context must hold the project, so pass one of its "
        "ancestors (such as the repository's root)");
  project_path_ = normal(within) == "." ? "" : normal(within);
  if (has_space(project_path_))
    throw InputError(
        "--context " + context.string() + ": the project's path in it, '" + project_path_ +
        "', holds a space, which the Dockerfile's COPY lines cannot name; rename the directory");
}

BuildContext::Reached BuildContext::reach(const std::string& from, const std::string& named,
                                          const std::string& where, const std::string& at,
                                          const std::string& what) {
  const std::string rel = normal(fs::path(from) / named);
  if (!climbs_out(rel)) return {rel, true};
  if (project_path_.empty())
    throw InputError(at + ": " + what + " is outside the project directory " + project_.string() +
                     ", which is the docker build context; COPY cannot reach it. Pass --context " +
                     holding_both(rel) +
                     " to build from a directory that holds both, or copy it into the project");
  const std::string in_context = normal(fs::path(project_path_) / rel);
  if (climbs_out(in_context))
    throw InputError(at + ": " + what + " is outside the build context " + context_.string() +
                     " (--context); COPY cannot reach it. Pass --context " + holding_both(rel) +
                     ", which holds both, or copy it into the context");
  // ../api/x.txt from services/api is the project's own x.txt.
  if (in_context == project_path_) return {".", true};
  if (in_context.rfind(project_path_ + "/", 0) == 0)
    return {in_context.substr(project_path_.size() + 1), true};
  std::error_code ec;
  const fs::file_status status = fs::status(project_ / rel, ec);
  if (status.type() == fs::file_type::not_found)
    throw InputError(at + ": " + what + " names " + (context_ / in_context).string() +
                     ", which is missing; fix the line or create it");
  if (has_space(in_context))
    throw InputError(at + ": " + what + " names " + in_context +
                     ", whose space the Dockerfile's COPY lines cannot "
                     "name; rename it");
  const bool directory = fs::is_directory(status);
  record({in_context, directory, where});
  evidence_.push_back({where, what + " is outside the project, in the build context: copied from " +
                                  in_context + (directory ? "/" : "") +
                                  " to the same place beside the project"});
  return {rel, false};
}

std::vector<OutsidePath> BuildContext::outside_paths() const {
  std::vector<OutsidePath> sorted = outside_;
  std::sort(sorted.begin(), sorted.end(),
            [](const OutsidePath& a, const OutsidePath& b) { return a.path < b.path; });
  return sorted;
}

// The directory the leading ".." of `rel` climb to from the project: it
// holds both the project and what `rel` names.
std::string BuildContext::holding_both(const std::string& rel) const {
  fs::path up;
  for (const auto& part : fs::path(rel)) {
    if (part != "..") break;
    up /= "..";
  }
  return normal(project_ / up);
}

// One entry per path: a directory stands for what is under it, so it is
// copied once.
void BuildContext::record(const OutsidePath& path) {
  auto under = [](const std::string& inner, const std::string& outer) {
    return outer == "." || inner == outer || inner.rfind(outer + "/", 0) == 0;
  };
  for (const auto& o : outside_)
    if (o.directory && under(path.path, o.path)) return;
  if (path.directory)
    outside_.erase(std::remove_if(outside_.begin(), outside_.end(),
                                  [&](const OutsidePath& o) { return under(o.path, path.path); }),
                   outside_.end());
  outside_.push_back(path);
}

}  // namespace imgsmith::gen
