/* Fuzz regression: tle_launcher_floordiv(INT64_MIN, -1) traps (SIGFPE); a launcher from tlec -g "(-9223372036854775807 - 1) // -1, 1, 1" evaluates it at launch. */
/* Usage (from the repository root): cc -Iinclude tests/fuzz/regressions/launcher_floordiv_intmin.c && ./a.out */
#include "tle/Runtime/tle_launcher.h"

int main(void) {
  volatile int64_t a = INT64_MIN, b = -1;
  tle_launcher_grid_ctx ctx = {0};
  return (int)(tle_launcher_floordiv(&ctx, a, b) & 1);
}
