// tle-tools: tlec and tle-run in one executable for the installed tree (LLVM linked once); the name it is run by picks the tool.
//
// Installed as bin/tlec, with bin/tle-run a symbolic link to it (cmake/TLEInstall.cmake): the two
// tools share nearly all of their code (the compiler and LLVM), so one executable halves the
// installed size. The build tree keeps the separate src/tlec and src/tle-run.
#include <cstring>

int tlecMain(int argc, char **argv);
int tleRunMain(int argc, char **argv);

/// Runs tle-run when invoked as "tle-run" (any directory), else tlec.
int main(int argc, char **argv) {
  const char *name = argc > 0 && argv[0] ? argv[0] : "tlec";
  if (const char *slash = std::strrchr(name, '/'))
    name = slash + 1;
  return std::strcmp(name, "tle-run") == 0 ? tleRunMain(argc, argv) : tlecMain(argc, argv);
}
