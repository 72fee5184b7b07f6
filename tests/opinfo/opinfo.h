/*
 * opinfo.h - the OpInfo table: sample inputs for every op of
 * specs/native_functions.yaml, shared by the suites that check ops
 * generically (test_opinfo.c: samples, dtype claims, non-contiguous inputs,
 * in-place twins; test_gradcheck.c: gradcheck and gradgradcheck; dump.c:
 * the NumPy reference driver).
 *
 * A sample is one call of one op on inputs described by shape and value
 * range.  The inputs are built by opinfo_make_input in the dtype under test:
 * floating inputs (F64, C64) take that dtype, index inputs (I64) stay
 * int64.  The table is split by family (samples_*.c, each a NULL-op
 * terminated array listed in opinfo.c); an op of yg__ops[] without a row
 * fails opinfo.every_op_has_samples.
 */
#ifndef YAGRAD_TEST_OPINFO_H
#define YAGRAD_TEST_OPINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "generated_int.h"
/* The public headers but the ops, whose sections each test includes as
 * it uses them (adding an op recompiles the tests of its section). */
#include "yagrad/autograd.h"
#include "yagrad/conv.h"
#include "yagrad/cpu.h"
#include "yagrad/cuda.h"
#include "yagrad/distributed.h"
#include "yagrad/jit.h"
#include "yagrad/onnx.h"
#include "yagrad/optim.h"
#include "yagrad/random.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"
#include "yagrad/version.h"
#include "yagrad/ops_views.h"

#define MAX_IN 6

typedef struct input_spec {
    int64_t ndim;
    int64_t sizes[4];
    double lo, hi; /* value range (integers for YG_INT64 inputs) */
    yg_dtype dtype; /* YG_FLOAT64: the dtype under test, requires grad in
                       gradcheck; YG_INT64: an index, always int64 */
    bool constant;  /* a floating input that does not require grad */
} input_spec;

/* Calls the op on x (inputs in row order); *out receives a new reference. */
typedef yg_status (*sample_fn)(yg_tensor *const *x, yg_tensor **out);

typedef struct sample {
    const char *op; /* the op's name in yg__ops[], e.g. "sum.dim" */
    const char *what;
    int n_inputs;
    input_spec in[MAX_IN];
    sample_fn fn;
    /* In-place ops only: the out-of-place twin called with the same
     * arguments, which opinfo.test_inplace_matches_out_of_place compares. */
    sample_fn twin;
    unsigned flags; /* OPINFO_* */
} sample;

/* sample.flags */
/* The op takes any shape (implied for generated pointwise ops): test_opinfo
 * also runs the sample with every input 0-dim, and with every input empty
 * ([0] appended to its sizes). */
#define OPINFO_ANY_SHAPE 1u
/* float64 only: the sample mixes floating and int64 operands, so type
 * promotion, not the dtype under test, picks the loop. */
#define OPINFO_NO_DTYPE_SWEEP 2u
/* The op refuses non-contiguous inputs by design (view): checked to fail. */
#define OPINFO_CONTIGUOUS_ONLY 4u
/* A pointwise op's sample that needs its own shapes (it transposes an
 * input, say): no 0-dim and empty variants. */
#define OPINFO_FIXED_SHAPE 8u
/* The sample joins the outputs of a list op with cat: the dtype runners
 * skip the dtypes cat does not claim. */
#define OPINFO_JOINS_WITH_CAT 16u
/* A composite op whose result carries no gradient (zeros_like): not
 * gradchecked.  Without it, a composite sample's result must require grad. */
#define OPINFO_NO_GRAD 32u
/* The sample passes a Scalar that is not an integer (alpha 2.5): on int64
 * and int32, which the op claims, it is refused ("add: alpha 2.5 is not an
 * integer, self is int64"); test_opinfo checks that message instead of a
 * result, and a twin sample with integer Scalars covers those dtypes. */
#define OPINFO_FRACTIONAL_SCALAR 64u

#define F64(lo_, hi_, nd, ...) {nd, {__VA_ARGS__}, lo_, hi_, YG_FLOAT64, false}
#define I64(lo_, hi_, nd, ...) {nd, {__VA_ARGS__}, lo_, hi_, YG_INT64, false}
/* A floating input of a non_differentiable argument. */
#define C64(lo_, hi_, nd, ...) {nd, {__VA_ARGS__}, lo_, hi_, YG_FLOAT64, true}

/* In-place ops write a non-leaf copy of x[0] (a leaf that requires grad
 * may not be written); the gradient flows back through the copy. */
#define INPLACE_SAMPLE(name, call)                                                                 \
    static yg_status name(yg_tensor *const *x, yg_tensor **o)                                      \
    {                                                                                              \
        yg_tensor *self = NULL, *same = NULL;                                                      \
        yg_status st = yg_clone(x[0], &self);                                                      \
        if (st == YG_OK)                                                                           \
            st = call;                                                                             \
        yg_release(same);                                                                          \
        if (st == YG_OK)                                                                           \
            *o = self;                                                                             \
        else                                                                                       \
            yg_release(self);                                                                      \
        return st;                                                                                 \
    }
/* The same, plus name##_twin: the out-of-place op with the same arguments
 * (self is x[0]), which opinfo.test_inplace_matches_out_of_place compares. */
#define INPLACE_TWIN_SAMPLE(name, call, twin)                                                      \
    INPLACE_SAMPLE(name, call)                                                                     \
    static yg_status name##_twin(yg_tensor *const *x, yg_tensor **o)                               \
    {                                                                                              \
        const yg_tensor *self = x[0];                                                              \
        return twin;                                                                               \
    }

/* The family tables (NULL-op terminated), gathered by opinfo_sample_at. */
extern const sample opinfo_derivative_samples[]; /* samples_derivatives.c */
extern const sample opinfo_derivative_more_samples[]; /* samples_derivatives_more.c */
extern const sample opinfo_inplace_samples[];    /* samples_inplace.c */
extern const sample opinfo_backward_samples[];   /* samples_backward.c */
extern const sample opinfo_composite_samples[];  /* samples_composite.c */
extern const sample opinfo_edge_samples[];       /* samples_edge.c */
extern const sample opinfo_creation_samples[];   /* samples_creation.c */

/* Ops with no sample yet: reported (by name) by every_op_has_samples,
 * which passes only while each is still an op without samples. */
extern const char *const opinfo_known_gaps[];

/* Dtypes an op does not claim but accepts on some samples, documented
 * here rather than refused (NULL-op terminated): test_opinfo skips them
 * and fails when one is refused after all (a stale entry). */
typedef struct opinfo_accepted {
    const char *op;
    yg_dtype dtype;
    const char *why;
} opinfo_accepted;
extern const opinfo_accepted opinfo_accepts_unclaimed[];

/* Runs s->fn on x after seeding the default generator with OPINFO_SEED,
 * so that random ops draw the same values on every call of a sample. */
#define OPINFO_SEED 20241121u
yg_status opinfo_call(const sample *s, yg_tensor *const *x, yg_tensor **out);

/* The number of samples, and sample i of the whole table. */
int opinfo_sample_count(void);
const sample *opinfo_sample_at(int i);

/* The op named name in yg__ops[], or NULL. */
const yg_op_info *opinfo_op(const char *name);
/* Whether s is refused on dtype by design (OPINFO_FRACTIONAL_SCALAR on an
 * integer dtype), though its op claims dtype. */
bool opinfo_refused_on(const sample *s, yg_dtype dtype);
/* The derivative entry named name, or NULL. */
const yg_derivative_info *opinfo_derivative(const char *name);
/* Whether s is gradchecked: its op has a derivative entry with
 * differentiable inputs, or is composite (differentiable through its
 * parts) and not marked OPINFO_NO_GRAD; samples whose inputs are all
 * integer are not. */
bool opinfo_is_differentiable(const sample *s);

/* Input i of s as a new tensor of dtype (floating inputs; index inputs stay
 * int64), deterministic for seed.  With noncontig, the same values in a
 * non-contiguous layout (transposed storage for 2+ dims, every other
 * element of a larger tensor for 1 dim); shape_mode 1 makes it 0-dim,
 * 2 empty.  Never requires grad. */
yg_tensor *opinfo_make_input(const sample *s, int i, yg_dtype dtype, uint64_t seed,
                             bool noncontig, int shape_mode);

#endif /* YAGRAD_TEST_OPINFO_H */
