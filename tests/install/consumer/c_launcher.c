/* The consumer's C part: the C dispatcher generated for add (add_c.h) on caller-owned memory. */
#include "add_c.h"

#include <stdio.h>

/* Launches add(x, y, z, n) through the C dispatcher on the legacy default stream of `device` and
 * waits; checks the dispatcher's choice for a misaligned pointer. Returns 0 on success. */
int consumer_c_add(int device, uint64_t x, uint64_t y, uint64_t z, int32_t n) {
  tle_rt_status st = add(device, NULL, x, y, z, n);
  if (st != TLE_RT_SUCCESS) {
    fprintf(stderr, "C launcher failed (%d): %s\n", (int)st, tle_launcher_last_error());
    return 1;
  }
  if (tle_rt_device_synchronize(device) != TLE_RT_SUCCESS) {
    fprintf(stderr, "synchronize failed: %s\n", tle_rt_last_error());
    return 1;
  }
  if (add_select(x + 4, y, z, 4096) != 1) {
    fprintf(stderr, "C add_select: a misaligned x should pick specialisation 1\n");
    return 1;
  }
  return 0;
}
