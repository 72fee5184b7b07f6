/*
 * yagrad/status.h - status codes and the per-thread error message.
 *
 * Every fallible yagrad function returns a yg_status.  YG_OK (0) means
 * success; any other code means failure, and then:
 *   - every out-parameter has been set to NULL (or 0),
 *   - the inputs are unchanged and nothing was leaked,
 *   - yg_last_error() describes the failure in one line of the form
 *     "<op>: <what is wrong>: <values>", e.g.
 *     "mul: cannot broadcast self [2, 3] with other [4]".
 *
 * Codes come from one table (YG_STATUS_MAP) and are append-only.
 * YG_ERR_INTERNAL means a bug in yagrad and nothing else.
 *
 * Thread safety: the message is thread-local; each thread sees the message
 * of its own last failure.  Anything not declared here is not API.
 */
#ifndef YAGRAD_STATUS_H
#define YAGRAD_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define YG_NODISCARD __attribute__((warn_unused_result))
#else
#define YG_NODISCARD
#endif

/* X(name, default message).  Append only: the numeric values are ABI. */
#define YG_STATUS_MAP(X)                                                  \
    X(OK, "success")                                                      \
    X(ERR_INVALID_ARGUMENT, "invalid argument")                           \
    X(ERR_SHAPE, "shape mismatch")                                        \
    X(ERR_DTYPE, "unsupported or mismatched dtype")                       \
    X(ERR_DEVICE, "unsupported or mismatched device")                     \
    X(ERR_INDEX, "index out of range")                                    \
    X(ERR_OUT_OF_MEMORY, "out of memory")                                 \
    X(ERR_AUTOGRAD, "autograd misuse")                                    \
    X(ERR_NOT_IMPLEMENTED, "not implemented")                             \
    X(ERR_INTERNAL, "internal error (a bug in yagrad)")                   \
    X(ERR_IO, "input/output error")

typedef enum yg_status {
#define YG__STATUS_ENUM(name, msg) YG_##name,
    YG_STATUS_MAP(YG__STATUS_ENUM)
#undef YG__STATUS_ENUM
        YG_STATUS_COUNT_
} yg_status;

/* The code's name without prefix, e.g. "ERR_SHAPE"; "UNKNOWN" for a value
 * outside the table.  Cannot fail; the string is static. */
const char *yg_status_name(yg_status status);

/* The table's default message for a code.  Cannot fail; static string. */
const char *yg_status_message(yg_status status);

/* The message of this thread's most recent failure, or "" if none.
 * Returns: borrowed, valid until this thread's next failing yagrad call. */
const char *yg_last_error(void);

/* Sets this thread's message (printf-style) and returns code: for
 * callbacks (hooks) that report a failure through yagrad.  Cannot fail. */
yg_status yg_set_error(yg_status code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_STATUS_H */
