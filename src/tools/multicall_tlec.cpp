// tlec's main as tlecMain, for the tle-tools executable (multicall.cpp).
#define main tlecMain
#include "tlec.cpp"
