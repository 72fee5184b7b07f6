/*
 * yagrad/options.h - the short form of ops with several defaulted
 * arguments.
 *
 * C has no default arguments, so yg_<op> takes every argument.  An op with
 * two or more defaulted arguments also has
 *
 *   yg_status yg_<op>_opt(<its arguments without a default>,
 *                         const yg_<op>_options *options, <outs>);
 *
 * whose options struct holds exactly the defaulted arguments.  NULL, or a
 * member left zero, means that argument's default, so with designated
 * initializers a call names only what differs:
 *
 *   const int64_t k[] = {2, 2};
 *   st = yg_max_pool2d_opt(x, k, 2, &(yg_max_pool2d_options){.stride = YG_INTS(1, 1)}, &y);
 *   st = yg_layer_norm_opt(x, shape, 1, &(yg_layer_norm_options){.eps = YG_SET(1e-6)}, &y);
 *   st = yg_cross_entropy_opt(logits, target, NULL, &loss);  all defaults
 *
 * A member's type follows the argument's:
 *   int / int?             yg_opt_int    set with YG_SET(v)
 *   float, Scalar (or ?)   yg_opt_float  set with YG_SET(v)
 *   bool                   yg_opt_bool   set with YG_SET(v)
 *   int[]                  yg_opt_ints   set with YG_INTS(...), or
 *                                        {.set = true, .items = p, .len = n}
 *   Tensor?, ScalarType?,  the full form's pointer (NULL: the default)
 *   Device?, Generator?
 *   str                    const char * (NULL: the default)
 * The generated header lists each struct with its members' defaults.  The
 * short form fills in the defaults and calls the full form: same checks,
 * same errors, same results.
 */
#ifndef YAGRAD_OPTIONS_H
#define YAGRAD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An optional argument: .set false (the zero value) means the default. */
typedef struct yg_opt_int {
    bool set;
    int64_t value;
} yg_opt_int;

typedef struct yg_opt_float {
    bool set;
    double value;
} yg_opt_float;

typedef struct yg_opt_bool {
    bool set;
    bool value;
} yg_opt_bool;

/* An optional int[]: items borrowed for the call (len entries). */
typedef struct yg_opt_ints {
    bool set;
    const int64_t *items;
    int64_t len;
} yg_opt_ints;

/* A set yg_opt_int, yg_opt_float or yg_opt_bool member: .eps = YG_SET(1e-6). */
#define YG_SET(v) {.set = true, .value = (v)}

/* A set yg_opt_ints member of one or more items: .stride = YG_INTS(2, 2).
 * The items live in a compound literal of the enclosing block. */
#define YG_INTS(...)                                                                               \
    {.set = true, .items = (const int64_t[]){__VA_ARGS__},                                         \
     .len = (int64_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))}

#ifdef __cplusplus
}
#endif

#endif /* YAGRAD_OPTIONS_H */
