// What tle-bench --tune's parts share (see TuneCommon.h).
#include "TuneCommon.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

extern char **environ;

namespace tle::bench {

std::string findTool(const std::string &flag, const char *env, const std::string &name) {
  if (!flag.empty())
    return flag;
  if (const char *e = std::getenv(env); e && *e)
    return e;
  std::string local = executableDirectory() + "/../src/" + name; // the build tree
  if (access(local.c_str(), X_OK) == 0)
    return local;
  std::string beside = executableDirectory() + "/" + name; // an installed tree: bin/
  if (access(beside.c_str(), X_OK) == 0)
    return beside;
  return name; // PATH
}

std::string readText(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw BenchError("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int spawnLogged(const std::vector<std::string> &argv, const std::string &logPath) {
  std::vector<char *> av;
  for (const std::string &a : argv)
    av.push_back(const_cast<char *>(a.c_str()));
  av.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int err = posix_spawnp(&pid, av[0], &fa, nullptr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0)
    return -err;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void poisonOutputs(const CaseSpec &c, std::vector<rt::DeviceBuffer> &bufs) {
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == "output")
      bufs[i].fillBytes(0xff);
    else if (c.buffers[i].role == "scratch")
      bufs[i].fillBytes(0);
}

void launchOnce(Gpu &g, const ResolvedLaunch &rl, std::vector<rt::DeviceBuffer> &bufs) {
  std::vector<uint64_t> slots(rl.args.size());
  std::vector<void *> ptrs(rl.args.size());
  for (size_t i = 0; i < rl.args.size(); ++i) {
    slots[i] = rl.args[i].pointer ? bufs[size_t(rl.args[i].buffer)].address() : rl.args[i].bits;
    ptrs[i] = &slots[i];
  }
  rl.kernel->kernel->launchRaw(rt::Grid(rl.grid[0], rl.grid[1], rl.grid[2]), g.stream, ptrs.data(), ptrs.size());
}

std::vector<std::string> tlecCommand(const std::string &tlec, const KernelSpec &k, const std::string &root,
                                     const std::vector<std::pair<std::string, std::string>> &caseDefines,
                                     const Candidate &config, const std::string &arch, const std::string &out,
                                     const std::vector<std::string> &grid) {
  const std::string src = !k.source.empty() && k.source[0] == '/' ? k.source : root + "/" + k.source;
  std::vector<std::string> av = {tlec, src, "-s", k.signature};
  for (const std::string &a : includeArgs(k, root))
    av.push_back(a);
  if (!k.entry.empty())
    av.insert(av.end(), {"-n", k.entry});
  for (const auto &[n, v] : k.defines)
    av.push_back("-D" + n + "=" + v);
  for (const auto &[n, v] : caseDefines)
    av.push_back("-D" + n + "=" + v);
  for (const auto &[n, v] : config.constexprs)
    av.push_back(fmt::format("-D{}={}", n, v));
  if (!grid.empty()) {
    std::string g;
    for (const std::string &d : grid)
      g += (g.empty() ? "" : ", ") + d;
    av.insert(av.end(), {"-g", g});
  }
  av.insert(av.end(), {"-w", std::to_string(config.numWarps), "-ns", std::to_string(config.numStages), "--arch", arch,
                       "-o", out});
  return av;
}

std::string shellLine(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv) {
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                   "_-./=:,+@%") == std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? a : "\"" + a + "\"");
  }
  return s;
}

} // namespace tle::bench
