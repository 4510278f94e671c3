// Source files and caret diagnostics.
#include "tle/Support/Diagnostics.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

namespace tle {

uint32_t SourceManager::addFile(std::string path, std::string text) {
  File f;
  f.path = std::move(path);
  f.text = std::move(text);
  f.lineStarts.push_back(0);
  for (size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n')
      f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size());
}

uint32_t SourceManager::loadFile(const std::string &path, std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "cannot read '" + path + "': it is a directory";
    return 0;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return 0;
  }
  // Read in chunks up to the limit: the size of a device or a pipe is not known beforehand.
  std::string text;
  std::vector<char> chunk(size_t(1) << 16);
  while (in.read(chunk.data(), std::streamsize(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), size_t(in.gcount()));
    if (text.size() > kMaxSourceBytes) {
      error = "'" + path + "' is larger than " + std::to_string(kMaxSourceBytes >> 20) +
              " MiB, the limit on a source file";
      return 0;
    }
  }
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return 0;
  }
  return addFile(path, std::move(text));
}

const std::string &SourceManager::path(uint32_t file) const {
  static const std::string none = "<command line>";
  if (file == 0 || file > files_.size())
    return none;
  return files_[file - 1].path;
}

const std::string &SourceManager::text(uint32_t file) const {
  static const std::string none;
  if (file == 0 || file > files_.size())
    return none;
  return files_[file - 1].text;
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  if (file == 0 || file > files_.size())
    return {};
  const File &f = files_[file - 1];
  if (line == 0 || line > f.lineStarts.size())
    return {};
  size_t start = f.lineStarts[line - 1];
  size_t end = line < f.lineStarts.size() ? f.lineStarts[line] - 1 : f.text.size();
  if (end > start && f.text[end - 1] == '\r')
    --end;
  return std::string_view(f.text).substr(start, end - start);
}

DiagnosticEngine::DiagnosticEngine(SourceManager &sm) : sm_(sm), os_(&std::cerr) {}

void DiagnosticEngine::report(Severity sev, SourceLoc loc, const std::string &msg) {
  const char *kind = sev == Severity::Error ? "error" : sev == Severity::Warning ? "warning" : "note";
  if (sev == Severity::Error)
    ++numErrors_;
  std::ostream &os = *os_;
  if (loc.valid())
    os << sm_.path(loc.file) << ':' << loc.line << ':' << loc.col << ": ";
  else if (loc.file != 0)
    os << sm_.path(loc.file) << ": ";
  else
    os << "tlec: ";
  os << kind << ": " << msg << '\n';
  if (!loc.valid())
    return;
  std::string_view line = sm_.lineText(loc.file, loc.line);
  if (line.empty())
    return;
  // A long line is shown as an excerpt around the caret, marked with "..." at a cut end.
  size_t caret = std::min<size_t>(loc.col ? loc.col - 1 : 0, line.size());
  size_t first = 0, last = line.size();
  if (line.size() > kMaxExcerpt) {
    first = caret > kMaxExcerpt / 2 ? caret - kMaxExcerpt / 2 : 0;
    last = std::min(line.size(), first + kMaxExcerpt);
    auto continuation = [&](size_t i) { return i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80; };
    while (first < caret && continuation(first)) // whole UTF-8 characters only
      ++first;
    while (last > caret && continuation(last))
      --last;
  }
  std::string_view shown = line.substr(first, last - first);
  const char *before = first > 0 ? "..." : "";
  os << "  " << before << shown << (last < line.size() ? "..." : "") << '\n' << "  " << before;
  // Keep tabs so that the caret lines up with the source line in a terminal.
  for (size_t i = first; i < caret; ++i)
    os << (line[i] == '\t' ? '\t' : ' ');
  os << "^\n";
}

void DiagnosticEngine::fatal(SourceLoc loc, const std::string &msg) {
  error(loc, msg);
  throw CompileAborted();
}

} // namespace tle
