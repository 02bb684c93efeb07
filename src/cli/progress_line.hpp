// The progress line the commands show on stderr, and --progress.
#pragma once

#include <string>

namespace imgsmith {

// --progress: auto shows a progress line when stderr is a terminal (CI
// logs get the report, not a ticker), always shows it anyway (on a
// terminal one line redrawn, elsewhere a line a second at most), never
// shows none. -q is never.
enum class ProgressMode { Auto, Always, Never };
// "auto", "always" or "never"; throws InputError otherwise.
ProgressMode parse_progress_mode(const std::string& text);
inline const char* kProgressHelp =
    "Progress on stderr (stage, layers and bytes done, rate, time left): auto\n"
    "(when stderr is a terminal), always, never";

// The progress line, on stderr only: stdout holds the report.
class ProgressLine {
 public:
  explicit ProgressLine(ProgressMode mode);
  ~ProgressLine();
  void show(const std::string& text);
  // Erases the line (on a terminal): what follows starts on a clean line.
  void clear();

 private:
  bool enabled_;
  bool terminal_;
  bool shown_ = false;
  double last_line_ = -1;  // seconds since start, of the last line (not a terminal)
  std::string last_text_;
};

}  // namespace imgsmith
