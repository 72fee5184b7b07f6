/*
 * status.c - status code names and the thread-local error message.
 *
 * Every failure in yagrad goes through yg__fail(), which formats the
 * message into a thread-local buffer and returns the code, so a caller
 * writes `return yg__fail(YG_ERR_SHAPE, "mm: ...")` and the return stays
 * visible.  The buffer is fixed-size (1 KiB): messages are one line and a
 * truncated message is better than an allocation that can itself fail.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"


static _Thread_local char last_error[YG__MESSAGE_CAP];

const char *yg_status_name(yg_status status)
{
    switch (status) {
#define YG__STATUS_NAME(name, msg)                                                                 \
    case YG_##name:                                                                                \
        return #name;
        YG_STATUS_MAP(YG__STATUS_NAME)
#undef YG__STATUS_NAME
    default:
        return "UNKNOWN";
    }
}

const char *yg_status_message(yg_status status)
{
    switch (status) {
#define YG__STATUS_MSG(name, msg)                                                                  \
    case YG_##name:                                                                                \
        return msg;
        YG_STATUS_MAP(YG__STATUS_MSG)
#undef YG__STATUS_MSG
    default:
        return "unknown status";
    }
}

const char *yg_last_error(void)
{
    return last_error;
}

yg_status yg__fail(yg_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

yg_status yg_set_error(yg_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

yg_status yg__fail_prefix(yg_status code, const char *prefix)
{
    size_t plen = strlen(prefix), mlen = strlen(last_error);
    /* Already prefixed (a nested call of the same op): keep it as is. */
    if (strncmp(last_error, prefix, plen) == 0 && last_error[plen] == ':')
        return code;
    if (plen + 2 >= sizeof last_error)
        return code;
    if (plen + 2 + mlen >= sizeof last_error)
        mlen = sizeof last_error - plen - 3; /* truncate the old message */
    memmove(last_error + plen + 2, last_error, mlen);
    memcpy(last_error, prefix, plen);
    last_error[plen] = ':';
    last_error[plen + 1] = ' ';
    last_error[plen + 2 + mlen] = '\0';
    return code;
}
