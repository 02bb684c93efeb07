// A small Dockerfile reader and the rules generated Dockerfiles must pass:
// hadolint's rules listed in docs/cuda-images.md (hadolint is not packaged here), and
// imgsmith's own (multi-stage, no compiler in the final stage, ...).
#pragma once

#include <string>
#include <vector>

namespace imgsmith::test {

struct Instruction {
  std::string keyword;  // upper case: FROM, RUN, COPY...
  std::string args;     // continuation lines joined with spaces
  int line = 0;
  int stage = -1;  // index of the FROM it belongs to
};

struct Dockerfile {
  std::vector<Instruction> instructions;
  std::vector<std::string> stage_images;  // the image of each FROM
  std::vector<std::string> comments;      // comment lines, '#' included
};

Dockerfile parse_dockerfile(const std::string& text);

// What a rule needs to know beyond the text.
struct RuleContext {
  bool expect_probe = false;
  bool gpu = false;
  bool devel_final_allowed = false;  // --flavor devel was asked for
  bool source_before_deps = false;
  bool syntax_line = false;
  // Triton compiles kernels at start (gen's documented exception): gcc and
  // the Python headers may be installed in the final stage, nothing else.
  bool runtime_compiler = false;
  // apt packages the project itself declares (apt.txt, imgsmith.toml), which
  // gen installs as written: unpinned ones are the project's choice.
  std::vector<std::string> declared_apt;
};

// Every rule the Dockerfile breaks, one line each ("DL3008 line 12: ...").
std::vector<std::string> check_rules(const std::string& text, const RuleContext& context);

}  // namespace imgsmith::test
