// tle-run's main as tleRunMain, for the tle-tools executable (multicall.cpp).
#define main tleRunMain
#include "tle-run.cpp"
