/*
 * fuzz_replay.c - runs a libFuzzer target's LLVMFuzzerTestOneInput over
 * the files of a corpus directory, without libFuzzer, so every preset's
 * CTest replays the seeds and every input a fuzzer has found (issue 18:
 * "every input any fuzzer has found becomes a CTest case").  Linked once
 * with fuzz/fuzz_ops.c and once with fuzz/fuzz_ir.c.  The targets trap
 * when a property breaks; under the asan preset the sanitizers report
 * what the finding was (undefined behaviour, a leak).
 *
 * usage: fuzz_replay_<target> DIR...   (prints each file before running it)
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs one file; returns the number of files run (0 or 1). */
static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    long len;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
        exit(2);
    }
    /* An exact-size copy: ASan reports any read past the input. */
    data = malloc(len > 0 ? (size_t)len : 1);
    if (data == NULL || fread(data, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    printf("%s\n", path);
    fflush(stdout);
    LLVMFuzzerTestOneInput(data, (size_t)len);
    free(data);
    return 1;
}

/* Runs every regular file of dir, in name order. */
static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int ran = 0;

    if (d == NULL) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", dir);
        exit(2);
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        ran += replay_file(names[i]);
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv) {
    int ran = 0;

    if (LLVMFuzzerInitialize != NULL)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        ran += replay_dir(argv[i]);
    printf("fuzz_replay: %d inputs, no property broken\n", ran);
    return ran > 0 ? 0 : 1;
}
