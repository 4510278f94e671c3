// Source files and caret diagnostics.
#include "tle/Support/Diagnostics.h"

#include <fstream>
#include <iostream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return 0;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return addFile(path, ss.str());
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

DiagnosticEngine::DiagnosticEngine(const SourceManager &sm) : sm_(sm), os_(&std::cerr) {}

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
  os << "  " << line << '\n' << "  ";
  // Keep tabs so that the caret lines up with the source line in a terminal.
  for (uint32_t i = 1; i < loc.col && i - 1 < line.size(); ++i)
    os << (line[i - 1] == '\t' ? '\t' : ' ');
  os << "^\n";
}

void DiagnosticEngine::fatal(SourceLoc loc, const std::string &msg) {
  error(loc, msg);
  throw CompileAborted();
}

} // namespace tle
