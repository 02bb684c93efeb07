// Errors that cross a boundary as values the CLI can print in one line.
#pragma once

#include <stdexcept>
#include <string>

namespace imgsmith {

// Exit statuses shared by every subcommand; README.md documents them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitGateFailed = 1;
inline constexpr int kExitBadInput = 2;
// A failure inside imgsmith that no input explains (EX_SOFTWARE).
inline constexpr int kExitInternalError = 70;
// A report or file that could not be written (EX_IOERR): a full disk,
// a closed pipe, /dev/full.
inline constexpr int kExitCannotWrite = 74;

// A problem with what the user gave us (a file, a flag, an image). The message
// names the input and says what to do; the CLI prints it and exits 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something the machine refused (a thread, memory, a process limit): exit
// 2, as bad input is, since the user can change it, not imgsmith.
class EnvironmentError : public InputError {
 public:
  using InputError::InputError;
};

// An output that could not be written in full; the message names it. The
// CLI exits 74.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What to do about bytes that are damaged or cut short (a tar header, a
// gzip stream): appended to the message that names them.
inline constexpr const char* kDamagedAdvice =
    "; the file is damaged or incomplete: save, pull or download the image again";

}  // namespace imgsmith
