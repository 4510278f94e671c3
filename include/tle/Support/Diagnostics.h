// Source files, source locations and user-facing diagnostics (file:line:col: error: ...).
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tle {

/// A position in a source file. `line` and `col` are 1-based; col counts characters
/// (Unicode code points are not distinguished from bytes). `file == 0` with `line == 0`
/// means "no location" (used for command-line input such as signatures).
struct SourceLoc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return line != 0; }
};

/// Owns the text of every source file seen by one compilation and maps locations back to
/// lines for caret diagnostics. File ids start at 1; id 0 is reserved for "no file".
class SourceManager {
public:
  /// Registers `text` under `path` and returns its file id.
  uint32_t addFile(std::string path, std::string text);
  /// The largest source file loadFile reads: 16 MiB (a kernel module is far smaller; the limit
  /// stops `tlec /dev/zero` from reading without end).
  static constexpr size_t kMaxSourceBytes = size_t(16) << 20;
  /// Reads a file from disk; returns 0 and leaves `error` set when it cannot be read (it does not
  /// exist, is a directory, or holds more than kMaxSourceBytes bytes), naming the path.
  uint32_t loadFile(const std::string &path, std::string &error);
  const std::string &path(uint32_t file) const;
  const std::string &text(uint32_t file) const;
  /// The text of 1-based line `line` of `file`, without its newline; empty when out of range.
  std::string_view lineText(uint32_t file, uint32_t line) const;

private:
  struct File {
    std::string path;
    std::string text;
    std::vector<size_t> lineStarts;
  };
  std::deque<File> files_; ///< a deque: a file's text stays in place as files are added
};

enum class Severity { Note, Warning, Error };

/// Thrown after a fatal user error has been reported; the driver catches it and exits 1.
struct CompileAborted : std::exception {
  const char *what() const noexcept override { return "compilation aborted"; }
};

/// Reports diagnostics in the clang format:
///   file:line:col: error: message
///     <source line>
///          ^
/// Errors are counted; `fatal` reports and throws CompileAborted.
class DiagnosticEngine {
public:
  /// `sm` may gain files while diagnostics are reported (the modules a kernel's file imports).
  explicit DiagnosticEngine(SourceManager &sm);
  /// The most characters of a source line a diagnostic shows: a longer line is shown as an
  /// excerpt of this many bytes around the caret, "..." marking each cut end.
  static constexpr size_t kMaxExcerpt = 512;
  /// Redirects output (default std::cerr).
  void setStream(std::ostream &os) { os_ = &os; }

  void report(Severity sev, SourceLoc loc, const std::string &msg);
  void error(SourceLoc loc, const std::string &msg) { report(Severity::Error, loc, msg); }
  void warning(SourceLoc loc, const std::string &msg) { report(Severity::Warning, loc, msg); }
  void note(SourceLoc loc, const std::string &msg) { report(Severity::Note, loc, msg); }
  /// Reports an error and throws CompileAborted.
  [[noreturn]] void fatal(SourceLoc loc, const std::string &msg);

  unsigned numErrors() const { return numErrors_; }
  const SourceManager &sources() const { return sm_; }
  SourceManager &sources() { return sm_; }

private:
  SourceManager &sm_;
  std::ostream *os_;
  unsigned numErrors_ = 0;
};

} // namespace tle
