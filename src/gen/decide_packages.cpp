// What each requirement needs from the GPU image, and the system libraries
// its wheels need: from the tables, what the user told, or "unknown".
#include <regex>
#include <set>

#include "decisions.hpp"

namespace imgsmith::gen {
namespace {

// Words in a distribution's name that speak of CUDA or a GPU: such a
// package, unknown to the tables, is the likeliest to be a GPU one.
bool name_speaks_of_gpu(const std::string& name) {
  static const std::regex kWord(
      R"(cuda\d*x?|cu\d{2,3}|gpu|nvidia|tensorrt|trt|nccl|cudnn|cublas|cutlass|triton)");
  for (const auto& word : split(name, "-"))
    if (std::regex_match(word, kWord)) return true;
  return false;
}

bool known_need(const std::string& need) {
  return need == "none" || need == "bundled" || need == "system" || need == "system-cudnn";
}

std::string extra_why(const std::string& extra, const std::string& need) {
  return "the [" + extra + "] extra: " +
         (need == "bundled"  ? std::string("brings its own CUDA libraries as pip wheels")
          : need == "none"   ? std::string("runs on the CPU")
          : need == "system" ? std::string("uses the system's CUDA libraries")
                             : std::string("uses the system's CUDA and cuDNN libraries"));
}

}  // namespace

const char* basis_name(Basis basis) {
  switch (basis) {
    case Basis::Framework:
      return "data/python-frameworks.json";
    case Basis::Table:
      return "data/python-packages.json";
    case Basis::Pattern:
      return "name pattern";
    case Basis::Told:
      return "told";
    case Basis::NameHint:
      return "unknown (its name speaks of a GPU)";
    case Basis::Unknown:
      return "unknown";
  }
  return "unknown";
}

std::vector<PackageVerdict> classify_packages(const std::vector<Requirement>& requirements,
                                              const Tables& tables, const ToldNeeds& told,
                                              const std::string& lock) {
  std::vector<PackageVerdict> out;
  for (const auto& r : requirements) {
    PackageVerdict v;
    v.name = r.name;
    v.source = r.source;
    v.from_lock = !lock.empty() && r.source.rfind(lock, 0) == 0;
    if (const auto it = told.need.find(r.name); it != told.need.end()) {
      v.basis = Basis::Told;
      v.need = it->second;
      v.why = "as " + told.source + " says";
      v.citation = told.source;
    } else if (const auto f = tables.frameworks.find(r.name); f != tables.frameworks.end()) {
      v.basis = Basis::Framework;
      v.need = f->second.need;
      v.why = f->second.why;
      v.cuda = f->second.cuda;
      v.citation = basis_name(v.basis);
      if (const auto p = tables.packages.find(r.name); p != tables.packages.end())
        v.fact = &p->second;  // its system libraries and what it writes
      for (const auto& extra : r.extras) {
        // Extras compare as PEP 685 normalises them (cuda12_pip is cuda12-pip);
        // the package table knows spellings the frameworks table does not.
        const std::string e = normalise_name(extra);
        if (const auto it = f->second.extras.find(e); it != f->second.extras.end()) {
          v.need = it->second;
          v.why = extra_why(e, it->second);
          v.from_extra = true;
          if (const auto c = f->second.extra_cuda.find(e); c != f->second.extra_cuda.end())
            v.cuda = c->second;
        } else if (v.fact != nullptr && v.fact->extras.count(e) != 0) {
          v.need = v.fact->extras.at(e);
          v.why = extra_why(e, v.need) + " (" + v.fact->source + ")";
          v.citation = v.fact->source;
          v.from_extra = true;
        } else if (name_speaks_of_gpu(e)) {
          v.unknown_extra = e;
        }
      }
    } else if (const auto p = tables.packages.find(r.name); p != tables.packages.end()) {
      v.fact = &p->second;
      v.basis = known_need(p->second.need) ? Basis::Table : Basis::Unknown;
      v.need = known_need(p->second.need) ? p->second.need : "";
      v.why = p->second.why;
      v.cuda = p->second.cuda;
      v.citation = p->second.source;
      for (const auto& extra : r.extras) {
        const std::string e = normalise_name(extra);
        if (const auto it = p->second.extras.find(e); it != p->second.extras.end()) {
          v.need = it->second;
          v.why = extra_why(e, it->second);
          v.from_extra = true;
          v.basis = Basis::Table;
        } else if (name_speaks_of_gpu(e)) {
          v.unknown_extra = e;
        }
      }
    } else {
      for (const auto& pat : tables.patterns)
        if (r.name.size() > pat.suffix.size() && r.name.starts_with(pat.prefix) &&
            r.name.ends_with(pat.suffix)) {
          v.basis = Basis::Pattern;
          v.need = pat.need;
          v.why = pat.why;
          v.cuda = pat.cuda;
          v.citation = pat.prefix + "*" + pat.suffix;
        }
    }
    if (v.need.empty()) {
      v.basis = name_speaks_of_gpu(r.name) ? Basis::NameHint : Basis::Unknown;
      if (v.why.empty())
        v.why = v.basis == Basis::NameHint
                    ? "not in gen's tables, and its name speaks of CUDA or a GPU"
                    : "not in gen's tables";
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<const PackageVerdict*> unknown_packages(const std::vector<PackageVerdict>& verdicts) {
  std::vector<const PackageVerdict*> out;
  std::set<std::string> seen;
  for (const auto& v : verdicts)
    if ((v.need.empty() || (!v.unknown_extra.empty() && !v.from_extra)) &&
        (!v.from_lock || v.basis == Basis::NameHint) && seen.insert(v.name).second)
      out.push_back(&v);
  return out;
}

std::string package_on(const std::string& debian_name, const Tables& tables,
                       const std::string& os) {
  if (os == "debian" || os.empty()) return debian_name;
  for (const auto& [soname, by_os] : tables.sonames) {
    const auto d = by_os.find("debian");
    const auto o = by_os.find(os);
    if (d != by_os.end() && o != by_os.end() && d->second == debian_name) return o->second;
  }
  return debian_name;
}

SystemLibraries system_libraries(const std::vector<PackageVerdict>& verdicts, const Tables& tables,
                                 const std::string& os) {
  SystemLibraries out;
  auto add = [&](std::vector<AptNeed>& list, const std::string& debian_name,
                 const PackageVerdict& v, const std::string& what) {
    const std::string name = package_on(debian_name, tables, os);
    for (auto& existing : list)
      if (existing.package == name) {
        existing.why += ", " + v.name;
        return;
      }
    list.push_back({name, what + " of " + v.name + " (" + v.source + "; " + v.fact->source + ")"});
  };
  for (const auto& v : verdicts) {
    if (v.fact == nullptr) continue;
    for (const auto& p : v.fact->apt) add(out.final_stage, p, v, "run-time dependency");
    for (const auto& p : v.fact->build_apt) add(out.builder, p, v, "build dependency");
  }
  return out;
}

}  // namespace imgsmith::gen
