/* Support code for generated launchers (tlec --emit-header, tle-link): grid arithmetic, dispatch rules, image choice, lazy per-device kernels. */
/*
 * Header-only, valid C99 and C++17. The pure parts (grid arithmetic, the dispatcher's choice of a
 * specialisation, the choice of a cubin/PTX image for a device) are used by both the C and the
 * C++ launchers; the lazily loaded kernel (tle_launcher_lazy_kernel) and the error buffer are
 * what C launchers build on. The rules are described in docs/aot.md.
 */
#ifndef TLE_LAUNCHER_SUPPORT_H
#define TLE_LAUNCHER_SUPPORT_H

#include "tle/Runtime/tle_rt.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#define TLE_LAUNCHER_THREAD_LOCAL thread_local
#else
#define TLE_LAUNCHER_THREAD_LOCAL _Thread_local
#endif

/* ------------------------------------------------------------------------------------------ */
/* Grid arithmetic (Python semantics: // and % round toward negative infinity)                  */
/* ------------------------------------------------------------------------------------------ */

/** Evaluation state of one grid: set when an expression divides by zero or overflows. */
typedef struct tle_launcher_grid_ctx {
  int divided_by_zero; /**< non-zero after a division, modulo or cdiv by zero */
  int overflowed;      /**< non-zero after a result (of the whole or a part) outside int64 */
} tle_launcher_grid_ctx;

/** a + b; 0 and ctx->overflowed set when the sum is outside int64. */
static inline int64_t tle_launcher_add(tle_launcher_grid_ctx *ctx, int64_t a, int64_t b) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
    ctx->overflowed = 1;
    return 0;
  }
  return a + b;
}

/** a - b; 0 and ctx->overflowed set when the difference is outside int64. */
static inline int64_t tle_launcher_sub(tle_launcher_grid_ctx *ctx, int64_t a, int64_t b) {
  if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) {
    ctx->overflowed = 1;
    return 0;
  }
  return a - b;
}

/** -a; 0 and ctx->overflowed set for INT64_MIN. */
static inline int64_t tle_launcher_neg(tle_launcher_grid_ctx *ctx, int64_t a) {
  return tle_launcher_sub(ctx, 0, a);
}

/** a * b; 0 and ctx->overflowed set when the product is outside int64. */
static inline int64_t tle_launcher_mul(tle_launcher_grid_ctx *ctx, int64_t a, int64_t b) {
  int bad;
  if (a == 0 || b == 0)
    return 0;
  if (a > 0)
    bad = b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a;
  else
    bad = b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b;
  if (bad) {
    ctx->overflowed = 1;
    return 0;
  }
  return a * b;
}

/**
 * a // b (floor division); 0 and ctx->divided_by_zero set when b == 0, 0 and ctx->overflowed set
 * for INT64_MIN // -1 (2^63 is outside int64; C's division would trap).
 */
static inline int64_t tle_launcher_floordiv(tle_launcher_grid_ctx *ctx, int64_t a, int64_t b) {
  int64_t q;
  if (b == 0) {
    ctx->divided_by_zero = 1;
    return 0;
  }
  if (b == -1)
    return tle_launcher_neg(ctx, a);
  q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  return q;
}

/** a % b with the sign of b (Python's modulo); 0 and ctx->divided_by_zero set when b == 0. */
static inline int64_t tle_launcher_floormod(tle_launcher_grid_ctx *ctx, int64_t a, int64_t b) {
  int64_t r;
  if (b == 0) {
    ctx->divided_by_zero = 1;
    return 0;
  }
  if (b == -1)
    return 0;
  r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/**
 * triton.cdiv: (a + b - 1) // b. For b > 0 the ceiling of a / b, which never overflows; otherwise
 * ctx->overflowed is set when a + b - 1 is outside int64.
 */
static inline int64_t tle_launcher_cdiv(tle_launcher_grid_ctx *ctx, int64_t a, int64_t b) {
  if (b > 0)
    return a / b + (a % b > 0);
  return tle_launcher_floordiv(ctx, tle_launcher_sub(ctx, tle_launcher_add(ctx, a, b), 1), b);
}

/** The smaller of a and b. */
static inline int64_t tle_launcher_min(int64_t a, int64_t b) { return a < b ? a : b; }

/** The larger of a and b. */
static inline int64_t tle_launcher_max(int64_t a, int64_t b) { return a > b ? a : b; }

/**
 * Checks a computed grid: writes an explanation into buf (cap bytes) and returns 0 when a
 * dimension divided by zero, overflowed int64, is negative, or exceeds the CUDA limits (x < 2^31, y and z <= 65535);
 * returns 1 otherwise (a zero dimension is valid: the launcher then launches nothing).
 */
static inline int tle_launcher_check_grid(const tle_launcher_grid_ctx *ctx, const int64_t dims[3],
                                          const char *launcher, const char *grid_text, char *buf,
                                          size_t cap) {
  static const int64_t limit[3] = {INT64_C(2147483647), 65535, 65535};
  static const char axis[3] = {'x', 'y', 'z'};
  int i;
  if (ctx->divided_by_zero) {
    snprintf(buf, cap, "%s: the grid expression (%s) divides by zero for these arguments", launcher,
             grid_text);
    return 0;
  }
  if (ctx->overflowed) {
    snprintf(buf, cap, "%s: the grid expression (%s) overflows int64 for these arguments", launcher,
             grid_text);
    return 0;
  }
  for (i = 0; i < 3; ++i) {
    if (dims[i] < 0 || dims[i] > limit[i]) {
      snprintf(buf, cap,
               "%s: the grid expression (%s) gives %c = %lld, outside [0, %lld] for these arguments",
               launcher, grid_text, axis[i], (long long)dims[i], (long long)limit[i]);
      return 0;
    }
  }
  return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Dispatch: which specialisation accepts the arguments                                         */
/* ------------------------------------------------------------------------------------------ */

/** What a specialisation requires of one argument. */
enum {
  TLE_LAUNCHER_ANY = 0,         /**< nothing */
  TLE_LAUNCHER_MULTIPLE_OF = 1, /**< pointer address / integer value is a multiple of divisor */
  TLE_LAUNCHER_EQUAL_TO_ONE = 2 /**< integer value == 1 (a ':1' hint) */
};

/** How an argument value is held in tle_launcher_arg::bits. */
enum {
  TLE_LAUNCHER_ARG_POINTER = 0,  /**< a device address */
  TLE_LAUNCHER_ARG_SIGNED = 1,   /**< a signed integer, sign-extended to 64 bits */
  TLE_LAUNCHER_ARG_UNSIGNED = 2, /**< an unsigned integer (or bool), zero-extended */
  TLE_LAUNCHER_ARG_OTHER = 3     /**< a floating-point value: never the subject of a requirement */
};

/** One runtime argument value, as the dispatcher sees it. */
typedef struct tle_launcher_arg {
  int kind;      /**< TLE_LAUNCHER_ARG_* */
  uint64_t bits; /**< the address or the integer's two's-complement bits */
} tle_launcher_arg;

/** The requirement of a specialisation on one argument. */
typedef struct tle_launcher_requirement {
  const char *name; /**< the parameter name, for messages */
  int kind;         /**< TLE_LAUNCHER_ANY, _MULTIPLE_OF or _EQUAL_TO_ONE */
  int64_t divisor;  /**< for TLE_LAUNCHER_MULTIPLE_OF: bytes (pointers) or the value's divisor */
} tle_launcher_requirement;

/** Comparisons of a shape predicate (tle_launcher_predicate::op). */
enum {
  TLE_LAUNCHER_LT = 0,    /**< arg < value */
  TLE_LAUNCHER_LE = 1,    /**< arg <= value */
  TLE_LAUNCHER_GT = 2,    /**< arg > value */
  TLE_LAUNCHER_GE = 3,    /**< arg >= value */
  TLE_LAUNCHER_EQ = 4,    /**< arg == value */
  TLE_LAUNCHER_NE = 5,    /**< arg != value */
  TLE_LAUNCHER_MOD_EQ = 6 /**< arg % modulus == value (Python's modulo: the sign of the modulus) */
};

/** A shape predicate of a specialisation on an integer argument, e.g. "M <= 64", "N % 128 == 0". */
typedef struct tle_launcher_predicate {
  const char *text; /**< as written, for messages */
  size_t arg;       /**< the index of the argument it reads */
  int op;           /**< TLE_LAUNCHER_LT ... TLE_LAUNCHER_MOD_EQ */
  int64_t value;    /**< the right-hand side (the remainder for TLE_LAUNCHER_MOD_EQ) */
  int64_t modulus;  /**< for TLE_LAUNCHER_MOD_EQ (not 0) */
} tle_launcher_predicate;

/**
 * A specialisation as the dispatcher sees it: one requirement per caller argument (the promises
 * of its signature), then the shape predicates it was linked with (tle-link --when), all of which
 * must hold.
 */
typedef struct tle_launcher_spec {
  const char *label;                             /**< e.g. "spec 0 (*fp32:16, i32:16)" */
  const tle_launcher_requirement *requirements; /**< as many as the launcher has arguments */
  const tle_launcher_predicate *predicates;      /**< num_predicates of them (NULL when none) */
  size_t num_predicates;                         /**< how many */
} tle_launcher_spec;

/** An argument holding device address `address`. */
static inline tle_launcher_arg tle_launcher_arg_pointer(uint64_t address) {
  tle_launcher_arg a;
  a.kind = TLE_LAUNCHER_ARG_POINTER;
  a.bits = address;
  return a;
}

/** An argument holding signed integer `value`. */
static inline tle_launcher_arg tle_launcher_arg_signed(int64_t value) {
  tle_launcher_arg a;
  a.kind = TLE_LAUNCHER_ARG_SIGNED;
  a.bits = (uint64_t)value;
  return a;
}

/** An argument holding unsigned integer `value`. */
static inline tle_launcher_arg tle_launcher_arg_unsigned(uint64_t value) {
  tle_launcher_arg a;
  a.kind = TLE_LAUNCHER_ARG_UNSIGNED;
  a.bits = value;
  return a;
}

/** A floating-point argument (its value never decides the dispatch). */
static inline tle_launcher_arg tle_launcher_arg_other(void) {
  tle_launcher_arg a;
  a.kind = TLE_LAUNCHER_ARG_OTHER;
  a.bits = 0;
  return a;
}

/** A floating-point argument `value` (its value never decides the dispatch). */
static inline tle_launcher_arg tle_launcher_arg_float(double value) {
  (void)value;
  return tle_launcher_arg_other();
}

/** 1 when `arg` meets `req`, else 0. A requirement on a floating-point argument is never met. */
static inline int tle_launcher_meets(const tle_launcher_requirement *req, const tle_launcher_arg *arg) {
  if (req->kind == TLE_LAUNCHER_ANY)
    return 1;
  if (arg->kind == TLE_LAUNCHER_ARG_OTHER)
    return 0;
  if (req->kind == TLE_LAUNCHER_EQUAL_TO_ONE)
    return arg->bits == 1;
  if (req->divisor <= 1)
    return 1;
  if (arg->kind == TLE_LAUNCHER_ARG_SIGNED)
    return (int64_t)arg->bits % req->divisor == 0;
  return arg->bits % (uint64_t)req->divisor == 0;
}

/** The index of the first argument `spec` rejects, or -1 when it accepts all `nargs`. */
static inline long tle_launcher_first_unmet(const tle_launcher_spec *spec, const tle_launcher_arg *args,
                                            size_t nargs) {
  size_t i;
  for (i = 0; i < nargs; ++i)
    if (!tle_launcher_meets(&spec->requirements[i], &args[i]))
      return (long)i;
  return -1;
}

/** 1 when integer argument `arg` satisfies predicate `p`, else 0 (never for other arguments). */
static inline int tle_launcher_holds(const tle_launcher_predicate *p, const tle_launcher_arg *arg) {
  int64_t x, r;
  if (arg->kind != TLE_LAUNCHER_ARG_SIGNED && arg->kind != TLE_LAUNCHER_ARG_UNSIGNED)
    return 0;
  if (arg->kind == TLE_LAUNCHER_ARG_UNSIGNED && arg->bits > (uint64_t)INT64_MAX) /* above every int64 */
    return p->op == TLE_LAUNCHER_GT || p->op == TLE_LAUNCHER_GE || p->op == TLE_LAUNCHER_NE ||
           (p->op == TLE_LAUNCHER_MOD_EQ && p->modulus > 0 &&
            (int64_t)(arg->bits % (uint64_t)p->modulus) == p->value);
  x = (int64_t)arg->bits;
  switch (p->op) {
  case TLE_LAUNCHER_LT: return x < p->value;
  case TLE_LAUNCHER_LE: return x <= p->value;
  case TLE_LAUNCHER_GT: return x > p->value;
  case TLE_LAUNCHER_GE: return x >= p->value;
  case TLE_LAUNCHER_EQ: return x == p->value;
  case TLE_LAUNCHER_NE: return x != p->value;
  case TLE_LAUNCHER_MOD_EQ:
    if (p->modulus == 0 || (p->modulus == -1 && x == INT64_MIN))
      return p->modulus == -1 && p->value == 0;
    r = x % p->modulus;
    if (r != 0 && ((r < 0) != (p->modulus < 0)))
      r += p->modulus;
    return r == p->value;
  default: return 0;
  }
}

/** The index of the first predicate of `spec` the arguments break, or -1 when all hold. */
static inline long tle_launcher_first_false(const tle_launcher_spec *spec, const tle_launcher_arg *args,
                                            size_t nargs) {
  size_t i;
  for (i = 0; i < spec->num_predicates; ++i)
    if (spec->predicates[i].arg >= nargs || !tle_launcher_holds(&spec->predicates[i], &args[spec->predicates[i].arg]))
      return (long)i;
  return -1;
}

/** 1 when `spec` accepts the arguments: every requirement met and every predicate true. */
static inline int tle_launcher_accepts(const tle_launcher_spec *spec, const tle_launcher_arg *args, size_t nargs) {
  return tle_launcher_first_unmet(spec, args, nargs) < 0 && tle_launcher_first_false(spec, args, nargs) < 0;
}

/** The index of the first specialisation (in order) that accepts the arguments, or -1. */
static inline int tle_launcher_select(const tle_launcher_spec *specs, size_t nspecs,
                                      const tle_launcher_arg *args, size_t nargs) {
  size_t s;
  for (s = 0; s < nspecs; ++s)
    if (tle_launcher_accepts(&specs[s], args, nargs))
      return (int)s;
  return -1;
}

/** Appends to buf (cap bytes, NUL-terminated) why `req` rejects `arg`: "n (= 1000) is not a multiple of 16". */
static inline void tle_launcher_describe_unmet(char *buf, size_t cap, const tle_launcher_requirement *req,
                                               const tle_launcher_arg *arg) {
  size_t len = strlen(buf);
  char value[48];
  if (len + 1 >= cap)
    return;
  if (arg->kind == TLE_LAUNCHER_ARG_POINTER)
    snprintf(value, sizeof value, "0x%llx", (unsigned long long)arg->bits);
  else if (arg->kind == TLE_LAUNCHER_ARG_SIGNED)
    snprintf(value, sizeof value, "%lld", (long long)(int64_t)arg->bits);
  else if (arg->kind == TLE_LAUNCHER_ARG_UNSIGNED)
    snprintf(value, sizeof value, "%llu", (unsigned long long)arg->bits);
  else
    snprintf(value, sizeof value, "a floating-point value");
  if (req->kind == TLE_LAUNCHER_EQUAL_TO_ONE)
    snprintf(buf + len, cap - len, "'%s' (= %s) is not 1", req->name, value);
  else if (arg->kind == TLE_LAUNCHER_ARG_POINTER)
    snprintf(buf + len, cap - len, "'%s' (= %s) is not %lld-byte aligned", req->name, value,
             (long long)req->divisor);
  else
    snprintf(buf + len, cap - len, "'%s' (= %s) is not a multiple of %lld", req->name, value,
             (long long)req->divisor);
}

/** The value of `arg` as text: "0x10004", "-3", "1000". */
static inline void tle_launcher_arg_text(char *out, size_t cap, const tle_launcher_arg *arg) {
  if (arg->kind == TLE_LAUNCHER_ARG_POINTER)
    snprintf(out, cap, "0x%llx", (unsigned long long)arg->bits);
  else if (arg->kind == TLE_LAUNCHER_ARG_SIGNED)
    snprintf(out, cap, "%lld", (long long)(int64_t)arg->bits);
  else if (arg->kind == TLE_LAUNCHER_ARG_UNSIGNED)
    snprintf(out, cap, "%llu", (unsigned long long)arg->bits);
  else
    snprintf(out, cap, "a floating-point value");
}

/**
 * Appends to buf (cap bytes, NUL-terminated) why `spec` rejects the arguments: the first broken
 * requirement ("'n' (= 1000) is not a multiple of 16"), else the first false predicate ("'M'
 * (= 100) breaks M <= 64"). Returns 1 when it rejects them, 0 (appending nothing) when it accepts.
 */
static inline int tle_launcher_describe_rejection(char *buf, size_t cap, const tle_launcher_spec *spec,
                                                  const tle_launcher_arg *args, size_t nargs) {
  long bad = tle_launcher_first_unmet(spec, args, nargs);
  size_t len;
  char value[48];
  const tle_launcher_predicate *p;
  if (bad >= 0) {
    tle_launcher_describe_unmet(buf, cap, &spec->requirements[bad], &args[bad]);
    return 1;
  }
  bad = tle_launcher_first_false(spec, args, nargs);
  if (bad < 0)
    return 0;
  p = &spec->predicates[bad];
  len = strlen(buf);
  if (len + 1 >= cap)
    return 1;
  if (p->arg < nargs) {
    tle_launcher_arg_text(value, sizeof value, &args[p->arg]);
    snprintf(buf + len, cap - len, "'%s' (= %s) breaks %s", spec->requirements[p->arg].name, value, p->text);
  } else {
    snprintf(buf + len, cap - len, "%s reads no argument", p->text);
  }
  return 1;
}

/**
 * Writes into buf (cap bytes) which specialisation the dispatcher launches for these arguments and
 * why: "add: spec 1 [...] chosen; spec 0 [...] rejected: 'M' (= 100) breaks M <= 64", or the
 * explanation of tle_launcher_explain when none accepts them. Returns the chosen index, or -1.
 */
static inline int tle_launcher_explain_choice(char *buf, size_t cap, const char *launcher, const char *kernel,
                                              const tle_launcher_spec *specs, size_t nspecs,
                                              const tle_launcher_arg *args, size_t nargs);

/**
 * Writes into buf (cap bytes) why no specialisation accepts the arguments, naming the launcher,
 * the kernel and, per specialisation, the first argument it rejects:
 * "add (kernel add_kernel): no specialisation accepts these arguments: spec 0 (...): 'n' (= 1000)
 * is not a multiple of 16; ...".
 */
static inline void tle_launcher_explain(char *buf, size_t cap, const char *launcher, const char *kernel,
                                        const tle_launcher_spec *specs, size_t nspecs,
                                        const tle_launcher_arg *args, size_t nargs) {
  size_t s;
  if (cap == 0)
    return;
  snprintf(buf, cap, "%s (kernel %s): no specialisation accepts these arguments", launcher, kernel);
  for (s = 0; s < nspecs; ++s) {
    size_t len = strlen(buf);
    if (tle_launcher_accepts(&specs[s], args, nargs) || len + 1 >= cap)
      continue;
    snprintf(buf + len, cap - len, "%s %s: ", s == 0 ? ":" : ";", specs[s].label);
    tle_launcher_describe_rejection(buf, cap, &specs[s], args, nargs);
  }
}

static inline int tle_launcher_explain_choice(char *buf, size_t cap, const char *launcher, const char *kernel,
                                              const tle_launcher_spec *specs, size_t nspecs,
                                              const tle_launcher_arg *args, size_t nargs) {
  int chosen = tle_launcher_select(specs, nspecs, args, nargs);
  int s;
  if (cap == 0)
    return chosen;
  if (chosen < 0) {
    tle_launcher_explain(buf, cap, launcher, kernel, specs, nspecs, args, nargs);
    return chosen;
  }
  snprintf(buf, cap, "%s: %s chosen", launcher, specs[chosen].label);
  for (s = 0; s < chosen; ++s) {
    size_t len = strlen(buf);
    if (len + 1 >= cap)
      break;
    snprintf(buf + len, cap - len, "; %s rejected: ", specs[s].label);
    tle_launcher_describe_rejection(buf, cap, &specs[s], args, nargs);
  }
  return chosen;
}

/* ------------------------------------------------------------------------------------------ */
/* Images: which embedded cubin / PTX runs on a device                                          */
/* ------------------------------------------------------------------------------------------ */

/** One embedded module image of a kernel. PTX images are NUL-terminated (size excludes the NUL). */
typedef struct tle_launcher_image {
  const char *arch;          /**< the target it was compiled for, e.g. "sm_90a" */
  const unsigned char *data; /**< the cubin, or the PTX text */
  size_t size;               /**< bytes */
  int is_ptx;                /**< non-zero for PTX text */
} tle_launcher_image;

/** Parses "sm_90a" into 9, 0 and arch-specific 1; returns 0 when `arch` is not of that form. */
static inline int tle_launcher_parse_arch(const char *arch, int *major, int *minor, int *specific) {
  int digits = 0, value = 0;
  if (strncmp(arch, "sm_", 3) != 0)
    return 0;
  arch += 3;
  while (*arch >= '0' && *arch <= '9') {
    value = value * 10 + (*arch++ - '0');
    ++digits;
  }
  if (digits < 2)
    return 0;
  *specific = *arch == 'a';
  if (*arch && !(*arch == 'a' && arch[1] == '\0'))
    return 0;
  *major = value / 10;
  *minor = value % 10;
  return 1;
}

/**
 * A preference score for running `image` on a device of compute capability major.minor, or -1
 * when it cannot run there: an exact cubin beats a cubin of the same major and a lower minor
 * (higher minor first), which beats PTX the driver can JIT-compile (newest first). Arch-specific
 * targets (sm_90a) run only on exactly that capability.
 */
static inline int tle_launcher_image_score(const tle_launcher_image *image, int major, int minor) {
  int m, n, specific, cc = major * 10 + minor, icc;
  if (!tle_launcher_parse_arch(image->arch, &m, &n, &specific))
    return -1;
  icc = m * 10 + n;
  if (specific && icc != cc)
    return -1;
  if (!image->is_ptx) {
    if (icc == cc)
      return 3000;
    return m == major && n <= minor ? 2000 + icc : -1;
  }
  return icc <= cc ? 1000 + icc : -1;
}

/** The index of the best image for a device of compute capability major.minor, or -1. */
static inline int tle_launcher_choose_image(const tle_launcher_image *images, size_t n, int major, int minor) {
  int best = -1, bestScore = -1;
  size_t i;
  for (i = 0; i < n; ++i) {
    int score = tle_launcher_image_score(&images[i], major, minor);
    if (score > bestScore) {
      best = (int)i;
      bestScore = score;
    }
  }
  return best;
}

/* ------------------------------------------------------------------------------------------ */
/* C launchers: the last error and lazily loaded kernels                                        */
/* ------------------------------------------------------------------------------------------ */

/** This thread's buffer for the message of the last failing C launcher call (1024 bytes). */
__attribute__((weak)) char *tle_launcher_error_buffer(void) {
  static TLE_LAUNCHER_THREAD_LOCAL char buffer[1024];
  return buffer;
}

/** The message of the last failing C launcher call on this thread ("" when none). */
__attribute__((weak)) const char *tle_launcher_last_error(void) { return tle_launcher_error_buffer(); }

/** Records `status` with the runtime's message (tle_rt_last_error) as the launcher error, prefixed by `launcher`. */
static inline tle_rt_status tle_launcher_fail_rt(const char *launcher, tle_rt_status status) {
  snprintf(tle_launcher_error_buffer(), 1024, "%s: %s", launcher, tle_rt_last_error());
  return status;
}

/**
 * C launchers: checks that the arguments meet `spec` (a single specialisation's promises);
 * otherwise sets tle_launcher_last_error() ("add: argument 'n' (= 1000) is not a multiple of 16
 * (required by ...)") and returns TLE_RT_ERROR_INVALID_ARGUMENT.
 */
static inline tle_rt_status tle_launcher_require_spec(const char *launcher, const tle_launcher_spec *spec,
                                                      const tle_launcher_arg *args, size_t nargs) {
  char *buf = tle_launcher_error_buffer();
  size_t len;
  if (tle_launcher_accepts(spec, args, nargs))
    return TLE_RT_SUCCESS;
  snprintf(buf, 1024, "%s: argument ", launcher);
  tle_launcher_describe_rejection(buf, 1024, spec, args, nargs);
  len = strlen(buf);
  snprintf(buf + len, 1024 - len, " (required by %s)", spec->label);
  return TLE_RT_ERROR_INVALID_ARGUMENT;
}

/**
 * C dispatchers: the index of the first specialisation that accepts the arguments; -1 after
 * setting tle_launcher_last_error() to the explanation of tle_launcher_explain.
 */
static inline int tle_launcher_select_or_fail(const char *launcher, const char *kernel, const tle_launcher_spec *specs,
                                              size_t nspecs, const tle_launcher_arg *args, size_t nargs) {
  int s = tle_launcher_select(specs, nspecs, args, nargs);
  if (s < 0)
    tle_launcher_explain(tle_launcher_error_buffer(), 1024, launcher, kernel, specs, nspecs, args, nargs);
  return s;
}

/**
 * C launchers: converts a computed grid to unsigned dimensions; returns 0 after setting
 * tle_launcher_last_error() when tle_launcher_check_grid rejects it.
 */
static inline int tle_launcher_grid_or_fail(const tle_launcher_grid_ctx *ctx, const int64_t dims[3],
                                            const char *launcher, const char *grid_text, unsigned out[3]) {
  if (!tle_launcher_check_grid(ctx, dims, launcher, grid_text, tle_launcher_error_buffer(), 1024))
    return 0;
  out[0] = (unsigned)dims[0];
  out[1] = (unsigned)dims[1];
  out[2] = (unsigned)dims[2];
  return 1;
}

/** The largest device ordinal + 1 that C launchers cache kernels for. */
#define TLE_LAUNCHER_MAX_DEVICES 64

/**
 * A kernel loaded on first use, once per device, from the best of its images (thread-safe).
 * Images are loaded through libtle_rt's process-wide module cache (tle_rt_module_cache_get with
 * a NULL cache), so launchers that embed the same image (e.g. the kernels of one tle-link bundle)
 * share one loaded module per device.
 */
typedef struct tle_launcher_lazy_kernel {
  const char *kernel;                             /**< the entry name in the images */
  const tle_launcher_image *images;               /**< the images to choose from */
  size_t num_images;                              /**< how many */
  pthread_mutex_t mutex;                          /**< guards loading */
  tle_rt_module modules[TLE_LAUNCHER_MAX_DEVICES]; /**< per device ordinal */
  tle_rt_kernel kernels[TLE_LAUNCHER_MAX_DEVICES]; /**< per device ordinal, published last */
  int image_plus_one[TLE_LAUNCHER_MAX_DEVICES];    /**< per device: 1 + index of the loaded image */
} tle_launcher_lazy_kernel;

/** Static initialiser of a tle_launcher_lazy_kernel. */
#define TLE_LAUNCHER_LAZY_KERNEL_INIT(kernel, images, num_images) \
  { (kernel), (images), (num_images), PTHREAD_MUTEX_INITIALIZER, {0}, {0}, {0} }

/**
 * The kernel on device `device`, loading it on first use: the C ABI cannot query a device's
 * compute capability, so images are tried by preference for the newest device (cubins before
 * PTX, newer targets first) and the first one the driver accepts is kept. On failure returns the
 * status and sets tle_launcher_last_error() (prefixed by `launcher`).
 */
static inline tle_rt_status tle_launcher_get_kernel(tle_launcher_lazy_kernel *lk, const char *launcher, int device,
                                                   tle_rt_kernel *out) {
  tle_rt_kernel k;
  tle_rt_status st = TLE_RT_ERROR_OTHER;
  int prevScore = 1 << 30;
  char tried[256];
  if (device < 0 || device >= TLE_LAUNCHER_MAX_DEVICES) {
    snprintf(tle_launcher_error_buffer(), 1024, "%s: device ordinal %d is outside [0, %d)", launcher, device,
             TLE_LAUNCHER_MAX_DEVICES);
    return TLE_RT_ERROR_INVALID_ARGUMENT;
  }
  k = __atomic_load_n(&lk->kernels[device], __ATOMIC_ACQUIRE);
  if (k) {
    *out = k;
    return TLE_RT_SUCCESS;
  }
  pthread_mutex_lock(&lk->mutex);
  k = lk->kernels[device];
  tried[0] = '\0';
  /* Preference order for the newest device: cubin before PTX, newer target first. */
  while (!k) {
    int best = -1, bestScore = -1, major, minor, specific;
    size_t i, len;
    tle_rt_module m = NULL;
    for (i = 0; i < lk->num_images; ++i) {
      int score;
      if (!tle_launcher_parse_arch(lk->images[i].arch, &major, &minor, &specific))
        continue;
      score = (lk->images[i].is_ptx ? 0 : 10000) + (major * 10 + minor) * 2 + specific;
      if (score < prevScore && score > bestScore) {
        best = (int)i;
        bestScore = score;
      }
    }
    if (best < 0)
      break;
    prevScore = bestScore;
    len = strlen(tried);
    snprintf(tried + len, sizeof tried - len, "%s%s %s", len ? ", " : "", lk->images[best].arch,
             lk->images[best].is_ptx ? "PTX" : "cubin");
    st = tle_rt_module_cache_get(NULL, device, lk->images[best].data, lk->images[best].size, &m);
    if (st == TLE_RT_ERROR_NO_DRIVER)
      break;
    if (st != TLE_RT_SUCCESS)
      continue;
    st = tle_rt_module_get_kernel(m, lk->kernel, &k);
    if (st != TLE_RT_SUCCESS) {
      tle_rt_module_unload(m);
      tle_rt_module_cache_evict(NULL, device, lk->images[best].data, lk->images[best].size, NULL);
      k = NULL;
      continue;
    }
    lk->modules[device] = m;
    lk->image_plus_one[device] = best + 1;
    __atomic_store_n(&lk->kernels[device], k, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lk->mutex);
  if (!k) {
    if (st == TLE_RT_ERROR_NO_DRIVER || !tried[0])
      return tle_launcher_fail_rt(launcher, st);
    snprintf(tle_launcher_error_buffer(), 1024, "%s: no image of kernel %s loads on device %d (tried %s); last error: %s",
             launcher, lk->kernel, device, tried, tle_rt_last_error());
    return st;
  }
  *out = k;
  return TLE_RT_SUCCESS;
}

/**
 * tle_launcher_get_kernel for a launch on CUstream `stream`: when the kernel is not loaded on
 * `device` yet and the stream is being captured into a CUDA graph, where a module load is not
 * allowed, fails with TLE_RT_ERROR_INVALID_ARGUMENT naming `load_function` to call before the
 * capture, instead of loading.
 */
static inline tle_rt_status tle_launcher_get_kernel_for_stream(tle_launcher_lazy_kernel *lk, const char *launcher,
                                                              const char *load_function, int device, void *stream,
                                                              tle_rt_kernel *out) {
  int capturing = 0;
  tle_rt_status st;
  if (device >= 0 && device < TLE_LAUNCHER_MAX_DEVICES) {
    tle_rt_kernel k = __atomic_load_n(&lk->kernels[device], __ATOMIC_ACQUIRE);
    if (k) {
      *out = k;
      return TLE_RT_SUCCESS;
    }
  }
  st = tle_rt_stream_is_capturing(stream, &capturing);
  if (st != TLE_RT_SUCCESS)
    return tle_launcher_fail_rt(launcher, st);
  if (capturing) {
    snprintf(tle_launcher_error_buffer(), 1024,
             "%s: kernel %s is not loaded on device %d and the stream is being captured into a CUDA graph, "
             "where loading a module is not allowed; call %s(%d) before the capture",
             launcher, lk->kernel, device, load_function, device);
    return TLE_RT_ERROR_INVALID_ARGUMENT;
  }
  return tle_launcher_get_kernel(lk, launcher, device, out);
}

/**
 * The kernel on `device` for a graph node (NAME_node): never loads it, since adding a node must
 * not load a module (not allowed while any stream capture runs). When it is not loaded yet,
 * fails with TLE_RT_ERROR_INVALID_ARGUMENT naming `load_function` to call first.
 */
static inline tle_rt_status tle_launcher_get_loaded_kernel(tle_launcher_lazy_kernel *lk, const char *launcher,
                                                          const char *load_function, int device, tle_rt_kernel *out) {
  if (device >= 0 && device < TLE_LAUNCHER_MAX_DEVICES) {
    tle_rt_kernel k = __atomic_load_n(&lk->kernels[device], __ATOMIC_ACQUIRE);
    if (k) {
      *out = k;
      return TLE_RT_SUCCESS;
    }
  }
  snprintf(tle_launcher_error_buffer(), 1024,
           "%s: kernel %s is not loaded on device %d; call %s(%d) before adding it to a graph (adding a graph node "
           "never loads a module)",
           launcher, lk->kernel, device, load_function, device);
  return TLE_RT_ERROR_INVALID_ARGUMENT;
}

/**
 * Releases every loaded kernel and module, and drops their images from the process-wide module
 * cache (a module still used by another launcher stays loaded for it). Not to be called while
 * launches may be in flight.
 */
static inline void tle_launcher_unload(tle_launcher_lazy_kernel *lk) {
  int d;
  pthread_mutex_lock(&lk->mutex);
  for (d = 0; d < TLE_LAUNCHER_MAX_DEVICES; ++d) {
    tle_rt_kernel k = __atomic_exchange_n(&lk->kernels[d], (tle_rt_kernel)NULL, __ATOMIC_ACQ_REL);
    int image = lk->image_plus_one[d] - 1;
    if (k)
      tle_rt_kernel_release(k);
    if (lk->modules[d])
      tle_rt_module_unload(lk->modules[d]);
    if (image >= 0 && (size_t)image < lk->num_images)
      tle_rt_module_cache_evict(NULL, d, lk->images[image].data, lk->images[image].size, NULL);
    lk->modules[d] = NULL;
    lk->image_plus_one[d] = 0;
  }
  pthread_mutex_unlock(&lk->mutex);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLE_LAUNCHER_SUPPORT_H */
