/*
 * A program outside yagrad's tree, built against an installed yagrad by
 * tests/external/CMakeLists.txt (find_package) and by a plain compiler
 * command line with pkg-config (tests/external/drive.cmake).
 *
 * It fits nothing; it checks one gradient.  For the least-squares loss
 *   L(w) = sum((x w - y)^2),  x [4, 3], w [3, 1], y [4, 1]
 * the gradient is dL/dw = 2 x^T (x w - y).  yagrad computes it with mm
 * (OpenBLAS), sub, mul, sum and backward; this file computes it again
 * with plain loops and compares.  Then, in a build with the CUDA backend,
 * it asks for a GPU: linked with libyagrad.so, the CUDA module must be
 * loaded from the folder libyagrad.so was (whether or not a GPU is
 * there); linked with libyagrad.a, the request must say why there is no
 * GPU.  In a build with MPI, the MPI backend is a module too: linked
 * with libyagrad.so, no MPI library is mapped until the first call of
 * yagrad/distributed.h, which loads the module from libyagrad.so's
 * folder; linked with libyagrad.a, the backend is in the program.  And
 * it reads a tensor from a safetensors file in memory, which needs
 * jansson: linked with libyagrad.a, the package files must name it.  Exit
 * status 0 when all of that holds.
 */
#include <yagrad/cuda.h>
#include <yagrad/distributed.h>
#include <yagrad/yagrad.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N 4
#define D 3

static int check(yg_status st, const char *what)
{
    if (st != YG_OK)
        fprintf(stderr, "%s: %s: %s\n", what, yg_status_name(st), yg_last_error());
    return st == YG_OK;
}

/* The folder of the first mapped file whose name contains part, into
 * dir ("" when none).  Linux only, as the project. */
static void mapped_dir(const char *part, char *dir, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    dir[0] = '\0';
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *path = strchr(line, '/'), *slash;
        if (path == NULL || strstr(path, part) == NULL || (slash = strrchr(path, '/')) == NULL)
            continue;
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
        break;
    }
    if (f != NULL)
        fclose(f);
}

/* A request for a GPU: see the file comment. */
static int check_cuda_module(void)
{
    char lib[2048], module[2048];
    int n = yg_cuda_device_count();
    yg_status st = yg_cuda_check();

    if (strstr(yg_build_info(), " -cuda") != NULL)
        return 1;
    mapped_dir("libyagrad.so", lib, sizeof lib);
    mapped_dir("libyagrad_cuda.so", module, sizeof module);
    printf("cuda: %d device(s), %s; module from '%s', libyagrad.so from '%s'\n", n,
           st == YG_OK ? "ok" : yg_last_error(), module, lib);
    if (lib[0] != '\0') /* linked shared: the module beside it */
        return strcmp(module, lib) == 0;
    /* linked static: no GPU, and the message says why */
    return st == YG_ERR_DEVICE && strstr(yg_last_error(), "cuda: its backend module") != NULL;
}

/* The MPI backend: see the file comment. */
static int check_mpi_module(void)
{
    char lib[2048], module[2048], mpi_before[2048];
    bool available;

    if (strstr(yg_build_info(), " -mpi") != NULL)
        return !yg_distributed_is_available();
    mapped_dir("libyagrad.so", lib, sizeof lib);
    mapped_dir("libmpi.so", mpi_before, sizeof mpi_before);
    available = yg_distributed_is_available();
    mapped_dir("libyagrad_mpi.so", module, sizeof module);
    printf("mpi: %s; module from '%s', libmpi mapped before from '%s'\n",
           available ? "available" : "unavailable", module, mpi_before);
    if (lib[0] != '\0') /* linked shared: loaded on first use, beside it */
        return available && mpi_before[0] == '\0' && strcmp(module, lib) == 0;
    return available && module[0] == '\0'; /* linked static: built in */
}

/* A one-tensor safetensors file, built in memory, read back. */
static int check_safetensors(void)
{
    static const char header[] = "{\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
    unsigned char file[8 + sizeof header - 1 + 8];
    double value = 2.5, got = 0;
    yg_safetensors *f = NULL;
    yg_tensor *t = NULL;
    size_t n = sizeof header - 1;
    for (int i = 0; i < 8; i++)
        file[i] = (unsigned char)((unsigned long long)n >> (8 * i));
    memcpy(file + 8, header, n);
    memcpy(file + 8 + n, &value, 8); /* little-endian hosts only, as yagrad */
    int ok = check(yg_safetensors_open_buffer(file, sizeof file, &f), "safetensors_open") &&
             check(yg_safetensors_get(f, "w", &t), "safetensors_get") &&
             check(yg_tensor_item(t, &got), "item") && got == value;
    yg_release(t);
    yg_safetensors_close(f);
    return ok;
}

int main(void)
{
    double x[N][D], w[D], y[N], expected[D] = {0}, got[D] = {0};
    yg_tensor *tx = NULL, *tw = NULL, *ty = NULL, *pred = NULL, *r = NULL, *r2 = NULL;
    yg_tensor *loss = NULL, *grad = NULL;
    int64_t x_sizes[] = {N, D}, w_sizes[] = {D, 1}, y_sizes[] = {N, 1};
    int ok = 1;

    printf("%s; headers %s\n", yg_build_info(), YG_VERSION_STRING);
    if (!check_cuda_module()) {
        fprintf(stderr, "the CUDA module was not found where it should be\n");
        return 1;
    }
    if (!check_mpi_module()) {
        fprintf(stderr, "the MPI backend was not where it should be\n");
        return 1;
    }
    if (!check_safetensors()) {
        fprintf(stderr, "a safetensors file in memory did not read back\n");
        return 1;
    }
    if (strcmp(yg_version(), YG_VERSION_STRING) != 0) {
        fprintf(stderr, "library %s, headers %s\n", yg_version(), YG_VERSION_STRING);
        return 1;
    }
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < D; j++)
            x[i][j] = sin(1.0 + i * D + j);
        y[i] = 0.5 * i - 1.0;
    }
    for (int j = 0; j < D; j++)
        w[j] = 0.25 * (j + 1);

    /* The reference: 2 x^T (x w - y), by loops. */
    for (int i = 0; i < N; i++) {
        double ri = -y[i];
        for (int j = 0; j < D; j++)
            ri += x[i][j] * w[j];
        for (int j = 0; j < D; j++)
            expected[j] += 2.0 * x[i][j] * ri;
    }

    ok = check(yg_tensor_from_data(x, x_sizes, 2, YG_FLOAT64, &tx), "x") &&
         check(yg_tensor_from_data(w, w_sizes, 2, YG_FLOAT64, &tw), "w") &&
         check(yg_tensor_from_data(y, y_sizes, 2, YG_FLOAT64, &ty), "y") &&
         check(yg_tensor_set_requires_grad(tw, true), "requires_grad") &&
         check(yg_mm(tx, tw, &pred), "mm") && check(yg_sub(pred, ty, 1.0, &r), "sub") &&
         check(yg_mul(r, r, &r2), "mul") && check(yg_sum(r2, &loss), "sum") &&
         check(yg_backward(loss, NULL, false), "backward") &&
         check(yg_tensor_grad(tw, &grad), "grad") &&
         check(yg_tensor_to_f64(grad, got, D), "to_f64");
    if (ok) {
        printf("gradient:");
        for (int j = 0; j < D; j++) {
            printf(" %.6f", got[j]);
            if (fabs(got[j] - expected[j]) > 1e-12 * (1.0 + fabs(expected[j])))
                ok = 0;
        }
        printf("\nexpected:");
        for (int j = 0; j < D; j++)
            printf(" %.6f", expected[j]);
        printf("\n%s\n", ok ? "ok" : "MISMATCH");
    }
    yg_release(grad);
    yg_release(loss);
    yg_release(r2);
    yg_release(r);
    yg_release(pred);
    yg_release(ty);
    yg_release(tw);
    yg_release(tx);
    return ok ? 0 : 1;
}
