// Findings: the waste in an image, each with the bytes its fix would save,
// the fix, the paths and the layers involved. Ids are stable: users deny
// them in CI (--deny) and scripts read them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/util/glob.hpp"

namespace imgsmith {

struct FindingPath {
  std::string path;
  std::uint64_t bytes = 0;
};

struct Finding {
  std::string id;
  std::uint64_t bytes = 0;  // what the fix would save
  std::string message;
  std::string fix;
  std::vector<FindingPath> paths;     // the largest, at most `top`
  std::vector<std::uint32_t> layers;  // layers that added the bytes (and hid them)
  // Below the significance floor: reported for information, not counted in
  // summaries and never matched by --deny.
  bool info = false;
  // Of `bytes`, those the base image's layers added (Analysis::base_layers):
  // the user's Dockerfile cannot remove them.
  std::uint64_t base_bytes = 0;
  // A defect rather than waste (a CUDA binary with no code for a GPU): its
  // fix saves nothing (bytes 0) and it is never info; --deny matches it
  // whenever it is there.
  bool defect = false;
};

// A finding is significant when its saving reaches either figure; one below
// both is info (448 kB of static archives in a 2 GB image is true but not
// worth a failed build).
struct FindingFloor {
  std::uint64_t min_bytes = 1'000'000;
  double min_percent = 0.5;  // of the final image's bytes
};

// Every finding id imgsmith can report.
const std::vector<std::string>& finding_ids();

// Findings with bytes > 0: significant ones first, each group largest
// saving first. Paths matching `ignore` are left out of every finding.
std::vector<Finding> find_waste(const Analysis& analysis, const Attribution& attribution,
                                const std::vector<Glob>& ignore, const FindingFloor& floor = {});

// A finding made outside the walk over the files (the CUDA kernels' ones,
// in api/): `id`'s title and fix from data/findings.json, to be filled in.
// Throws std::logic_error for an id that is not there.
Finding finding_of(const std::string& id);
// Puts `f` among `findings` as find_waste() orders them, info when it is
// below the floor (of an image of `final_bytes`).
void insert_finding(std::vector<Finding>& findings, Finding f, std::uint64_t final_bytes,
                    const FindingFloor& floor = {});

// find_waste() fed one file at a time, as attribute() hands them out, so
// that no list of every file is needed: an image can hold millions.
class WasteFinder {
 public:
  // `analysis` must outlive the finder.
  WasteFinder(const Analysis& analysis, const std::vector<Glob>& ignore);
  ~WasteFinder();
  WasteFinder(const WasteFinder&) = delete;
  WasteFinder& operator=(const WasteFinder&) = delete;

  // One file of the final tree, `category` being the name of its category
  // (Attribution::categories[file.category]).
  void add(const AttributedFile& file, const std::string& category);
  // The findings, as find_waste() gives them, once every file was added;
  // `attribution` holds the categories those files made.
  std::vector<Finding> finish(const Attribution& attribution, const FindingFloor& floor = {});

 private:
  struct Builders;
  std::unique_ptr<Builders> builders_;
};

}  // namespace imgsmith
