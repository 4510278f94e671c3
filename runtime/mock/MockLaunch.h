// The driver test double's record of its last launch, shared by the double (which fills it) and
// the tests that read it through mock_last_launch().
#pragma once

/// What the last launch looked like: the function's name, the grid and block, dynamic shared
/// memory, the stream, the first 8 bytes of each of up to 16 arguments, the cluster shape, whether
/// it was cooperative and went through cuLaunchKernelEx, and how many launches came.
struct MockLaunch {
  char function[128];
  unsigned grid[3], block[3], shared;
  void *stream;
  unsigned numArgs;
  unsigned char args[16][8];
  unsigned cluster[3];
  int cooperative;
  int viaEx;
  int launches;
};
