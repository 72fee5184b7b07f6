/*
 * dump.c - the C half of the NumPy reference check: runs every OpInfo
 * sample and writes its inputs and yagrad's output as .npy files for
 * reference.py, which recomputes each output with NumPy and compares.
 *
 * Usage: opinfo_dump OUT_DIR.  Writes OUT_DIR/ops.txt (every op of
 * yg__ops[]: name, then the C name), OUT_DIR/manifest.txt (one line per
 * run: index, op, dtype, number of inputs, the sample's description) and
 * OUT_DIR/<index>_<dtype>_in<k>.npy / _out.npy.  Each sample runs in
 * float64 and, where the sample sweeps dtypes, in every other dtype its op
 * claims.  Values are stored as float64 ('<f8'), which holds every float32
 * and every int64 the samples use exactly; the manifest keeps the dtype.
 * Exit status 0 unless a file cannot be written or a sample fails.
 */
#include "opinfo/opinfo.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool write_npy(const char *path, const yg_tensor *t) {
    char header[256], shape[160] = "";
    size_t pos = 0, hlen;
    int64_t n = yg_tensor_numel(t), ndim = yg_tensor_ndim(t);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    FILE *f;
    bool ok;

    if (v == NULL || yg_tensor_to_f64(t, v, n) != YG_OK) {
        free(v);
        return false;
    }
    for (int64_t d = 0; d < ndim; d++)
        pos += (size_t)snprintf(shape + pos,
                                sizeof shape - pos,
                                "%lld,%s",
                                (long long)yg_tensor_sizes(t)[d],
                                d + 1 < ndim ? " " : "");
    hlen = (size_t)snprintf(
        header, sizeof header, "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", shape);
    /* magic (6) + version (2) + length (2) + header, padded to 64 with a
     * final newline */
    while ((10 + hlen + 1) % 64 != 0)
        header[hlen++] = ' ';
    header[hlen++] = '\n';
    f = fopen(path, "wb");
    if (f == NULL) {
        free(v);
        return false;
    }
    unsigned char pre[10] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             (unsigned char)(hlen & 0xff),
                             (unsigned char)(hlen >> 8)};
    ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre && fwrite(header, 1, hlen, f) == hlen &&
         fwrite(v, sizeof *v, (size_t)n, f) == (size_t)n;
    ok = fclose(f) == 0 && ok;
    free(v);
    return ok;
}

/* Runs sample i in dtype; writes its files and manifest line. */
static bool dump_sample(const char *dir, FILE *manifest, int i, yg_dtype dtype) {
    const sample *s = opinfo_sample_at(i);
    yg_tensor *x[MAX_IN] = {0}, *y = NULL;
    char path[4096];
    bool ok = true;

    for (int k = 0; k < s->n_inputs; k++)
        x[k] = opinfo_make_input(s, k, dtype, 4000 + (uint64_t)(i * 7 + k), false, 0);
    if (opinfo_call(s, x, &y) != YG_OK) {
        fprintf(stderr,
                "opinfo_dump: %s (%s, %s) failed: %s\n",
                s->op,
                s->what,
                yg_dtype_name(dtype),
                yg_last_error());
        ok = false;
    }
    for (int k = 0; k < s->n_inputs && ok; k++) {
        snprintf(path, sizeof path, "%s/%d_%s_in%d.npy", dir, i, yg_dtype_name(dtype), k);
        ok = write_npy(path, x[k]);
    }
    if (ok) {
        snprintf(path, sizeof path, "%s/%d_%s_out.npy", dir, i, yg_dtype_name(dtype));
        ok = write_npy(path, y);
    }
    if (ok)
        fprintf(manifest,
                "%d\t%s\t%s\t%s\t%d\t%s\n",
                i,
                s->op,
                yg_dtype_name(dtype),
                yg_dtype_name(yg_tensor_dtype(y)),
                s->n_inputs,
                s->what);
    yg_release(y);
    for (int k = 0; k < s->n_inputs; k++)
        yg_release(x[k]);
    return ok;
}

/* "add_.Scalar" -> "add_scalar_", as gen names the C function. */
static void c_name(const char *name, char *buf, size_t len) {
    size_t base = strcspn(name, ".");
    bool inplace = base > 0 && name[base - 1] == '_';
    size_t n = (size_t)snprintf(buf, len, "%.*s", (int)(base - (inplace ? 1 : 0)), name);
    if (name[base] == '.') {
        n += (size_t)snprintf(buf + n, len - n, "_");
        for (const char *c = name + base + 1; *c != '\0' && n + 1 < len; c++)
            buf[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        buf[n] = '\0';
    }
    if (inplace && n + 1 < len)
        snprintf(buf + n, len - n, "_");
}

int main(int argc, char **argv) {
    char path[4096], cname[128];
    FILE *ops, *manifest;
    int failures = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: opinfo_dump OUT_DIR\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/ops.txt", argv[1]);
    ops = fopen(path, "w");
    snprintf(path, sizeof path, "%s/manifest.txt", argv[1]);
    manifest = fopen(path, "w");
    if (ops == NULL || manifest == NULL) {
        fprintf(stderr, "opinfo_dump: cannot write into %s\n", argv[1]);
        return 1;
    }
    for (int32_t k = 0; k < yg__ops_count; k++) {
        c_name(yg__ops[k].name, cname, sizeof cname);
        fprintf(ops, "%s\t%s\n", yg__ops[k].name, cname);
    }
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        const yg_op_info *op = opinfo_op(s->op);
        bool sweeps = (s->flags & OPINFO_NO_DTYPE_SWEEP) == 0;
        failures += !dump_sample(argv[1], manifest, i, YG_FLOAT64);
        for (int d = 0; d < YG_DTYPE_COUNT_ && op != NULL && sweeps; d++)
            if (d != YG_FLOAT64 && (op->dtypes & YG_DTYPE_BIT(d)) &&
                !opinfo_refused_on(s, (yg_dtype)d) &&
                !((s->flags & OPINFO_JOINS_WITH_CAT) &&
                  !(opinfo_op("cat")->dtypes & YG_DTYPE_BIT(d))))
                failures += !dump_sample(argv[1], manifest, i, (yg_dtype)d);
    }
    failures += fclose(ops) != 0;
    failures += fclose(manifest) != 0;
    return failures == 0 ? 0 : 1;
}
