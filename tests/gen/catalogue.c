/*
 * catalogue.c - runs yagrad-gen on one malformed-spec case of the error
 * catalogue (tests/gen/errors/<case>.case) and checks that it fails the
 * way the case says: exit status 1, exactly the expected stderr (every
 * "FILE:LINE:COL: error: message" line and the summary line), and nothing
 * written to the output directory.
 *
 *   gen_catalogue [--update] GEN_EXE CASE_FILE WORK_DIR
 *
 * With --update the case's expected section is replaced by what gen printed
 * (for writing a new case; review the diff of the case file before keeping
 * it).
 * A case file is a short comment followed by sections, each introduced by
 * a line "--- <name>":
 *   --- native_functions.yaml      written to WORK_DIR/specs/ (empty if absent)
 *   --- derivatives.yaml           written to WORK_DIR/specs/ (empty if absent)
 *   --- expected                   gen's exact stderr (the last section)
 * Keeping each case in one file keeps the YAML, the kernel headers and the
 * message a reviewer must check side by side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SECTIONS 16

typedef struct section {
    char name[256];
    char *text;
    size_t len;
} section;

static char *read_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;

    if (f == NULL)
        return NULL;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap == 0 ? 8192 : cap * 2;
            buf = realloc(buf, cap);
            if (buf == NULL) {
                fclose(f);
                return NULL;
            }
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    if (len_out != NULL)
        *len_out = len;
    return buf;
}

static bool write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL) {
        fprintf(stderr, "catalogue: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* mkdir -p of path's directory part (or of path itself when is_dir). */
static void make_dirs(const char *path, bool is_dir)
{
    char buf[8192];

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(buf, 0777);
        *p = '/';
    }
    if (is_dir)
        mkdir(buf, 0777);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Splits text into sections at lines "--- name". */
static int split_sections(char *text, section *sections)
{
    int n = 0;
    char *p = text;

    while (*p != '\0') {
        char *eol = strchr(p, '\n');
        char *next = eol != NULL ? eol + 1 : p + strlen(p);
        if (strncmp(p, "--- ", 4) == 0) {
            if (n == MAX_SECTIONS)
                return -1;
            size_t nl = (size_t)((eol != NULL ? eol : next) - (p + 4));
            if (nl >= sizeof(sections[n].name))
                return -1;
            memcpy(sections[n].name, p + 4, nl);
            sections[n].name[nl] = '\0';
            sections[n].text = next;
            sections[n].len = 0;
            n++;
        } else if (n > 0) {
            sections[n - 1].len = (size_t)(next - sections[n - 1].text);
        }
        p = next;
    }
    return n;
}

static const section *find_section(const section *s, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].name, name) == 0)
            return &s[i];
    return NULL;
}

/* Runs argv with stderr to err_path; returns the exit status or -1. */
static int run(char *const *argv, const char *err_path)
{
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0)
            _exit(127);
        dup2(fd, 2);
        close(fd);
        int null_fd = open("/dev/null", O_WRONLY);
        if (null_fd >= 0) {
            dup2(null_fd, 1);
            close(null_fd);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "catalogue: yagrad-gen died from signal %d (it must never crash)\n",
                WTERMSIG(status));
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
    section sections[MAX_SECTIONS];
    char path[8192];

    bool update = argc > 1 && strcmp(argv[1], "--update") == 0;
    if (update) {
        argv++;
        argc--;
    }
    if (argc != 4) {
        fputs("usage: gen_catalogue [--update] GEN_EXE CASE_FILE WORK_DIR\n", stderr);
        return 2;
    }
    const char *gen = argv[1], *case_file = argv[2], *work = argv[3];
    char *text = read_file(case_file, NULL);
    if (text == NULL) {
        fprintf(stderr, "catalogue: cannot read %s\n", case_file);
        return 2;
    }
    int n = split_sections(text, sections);
    const section *expected = n > 0 ? find_section(sections, n, "expected") : NULL;
    if (expected == NULL || expected != &sections[n - 1]) {
        fprintf(stderr, "catalogue: %s must end with an '--- expected' section\n", case_file);
        return 2;
    }
    nftw(work, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    make_dirs(work, true);
    snprintf(path, sizeof(path), "%s/specs", work);
    make_dirs(path, true);
    for (int i = 0; i < n; i++) {
        const section *s = &sections[i];
        if (strcmp(s->name, "expected") == 0)
            continue;
        if (strcmp(s->name, "native_functions.yaml") != 0 &&
            strcmp(s->name, "derivatives.yaml") != 0) {
            fprintf(stderr, "catalogue: unknown section '%s' in %s\n", s->name, case_file);
            return 2;
        }
        snprintf(path, sizeof(path), "%s/specs/%s", work, s->name);
        make_dirs(path, false);
        if (!write_file(path, s->text, s->len))
            return 2;
    }
    const char *defaults[] = {"specs/native_functions.yaml", "specs/derivatives.yaml"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", work, defaults[i]);
        if (access(path, F_OK) != 0) {
            make_dirs(path, false);
            write_file(path, "", 0);
        }
    }

    char specs[4096], out[4096], err[4096];
    snprintf(specs, sizeof(specs), "%s/specs", work);
    snprintf(out, sizeof(out), "%s/out", work);
    snprintf(err, sizeof(err), "%s/stderr.txt", work);
    char *gen_argv[] = {(char *)gen, specs, out, NULL};
    int rc = run(gen_argv, err);

    size_t actual_len = 0;
    char *actual = read_file(err, &actual_len);
    bool ok = true;
    if (update && actual != NULL) {
        size_t head = (size_t)(expected->text - text);
        FILE *f = fopen(case_file, "wb");
        if (f == NULL || fwrite(text, 1, head, f) != head ||
            fwrite(actual, 1, actual_len, f) != actual_len || fclose(f) != 0) {
            fprintf(stderr, "catalogue: cannot update %s\n", case_file);
            return 2;
        }
        printf("updated %s (exit status %d)\n", case_file, rc);
        free(actual);
        free(text);
        return 0;
    }
    if (rc != 1) {
        fprintf(stderr, "FAIL: yagrad-gen exited with %d, expected 1\n", rc);
        ok = false;
    }
    if (actual == NULL || actual_len != expected->len ||
        memcmp(actual, expected->text, expected->len) != 0) {
        fprintf(stderr, "FAIL: stderr differs.\n--- expected\n%.*s--- actual\n%s",
                (int)expected->len, expected->text, actual != NULL ? actual : "(none)\n");
        ok = false;
    }
    if (access(out, F_OK) == 0) {
        fprintf(stderr, "FAIL: yagrad-gen wrote %s although the specs have errors\n", out);
        ok = false;
    }
    if (ok)
        printf("ok: %s\n", case_file);
    free(actual);
    free(text);
    return ok ? 0 : 1;
}
