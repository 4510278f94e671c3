// What tle-bench --tune's parts share: finding and running the tools, the GPU it times on, and the tlec command of one configuration.
#pragma once

#include "harness/Launch.h"
#include "harness/Suite.h"
#include "harness/TuneSpace.h"

#include "tle/Runtime/Runtime.h"

#include <string>
#include <utility>
#include <vector>

namespace tle::bench {

/// A tool's path: `flag` if given, else $ENV, else ../src/NAME (the build tree) or NAME beside
/// tle-bench (an installed bin/), else NAME (looked up in PATH).
std::string findTool(const std::string &flag, const char *env, const std::string &name);

/// The whole file; throws BenchError naming it when it cannot be read.
std::string readText(const std::string &path);

/// Runs `argv` (looked up in PATH) with standard output and error written to `logPath`; returns
/// the exit status (negative when it could not start, 128 + N for signal N).
int spawnLogged(const std::vector<std::string> &argv, const std::string &logPath);

/// The GPU of a tuning run: the device, the stream everything runs on, the L2-flush buffer.
struct Gpu {
  rt::Device dev;
  rt::Stream stream;
  rt::DeviceBuffer flush;
};

/// Before a checked launch: the case's output buffers filled with 0xff bytes (a kernel that
/// leaves an element unwritten fails the check), its scratch buffers zeroed.
void poisonOutputs(const CaseSpec &c, std::vector<rt::DeviceBuffer> &bufs);

/// Launches `rl` once on `g`'s stream with the case's device buffers (no synchronisation).
void launchOnce(Gpu &g, const ResolvedLaunch &rl, std::vector<rt::DeviceBuffer> &bufs);

/// `tlec SOURCE -s SIG [-I...] [-n ENTRY] -D (kernel's, case's, config's) -w W -ns S --arch ARCH -o OUT`
/// for kernel `k` of a suite rooted at `root`; `grid` (optional) becomes `-g`, for launchers
/// that compute their grid.
std::vector<std::string> tlecCommand(const std::string &tlec, const KernelSpec &k, const std::string &root,
                                     const std::vector<std::pair<std::string, std::string>> &caseDefines,
                                     const Candidate &config, const std::string &arch, const std::string &out,
                                     const std::vector<std::string> &grid = {});

/// `argv` as one shell-quoted line (for the commands tables print).
std::string shellLine(const std::vector<std::string> &argv);

} // namespace tle::bench
