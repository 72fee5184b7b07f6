/*
 * observer.c - the op-call observer slot of this thread (observer.h).
 */
#include "core/observer.h"
#include "core/core.h"

#include <stddef.h>

static _Thread_local const yg_op_observer *current;
static _Thread_local void *current_ctx;
static _Thread_local bool current_through;
static _Thread_local int32_t paused;
static _Thread_local int32_t saved_pause;

yg_status yg__obs_install(const char *who,
                          const yg_op_observer *obs,
                          void *ctx,
                          bool through_composites)
{
    if (current != NULL) {
        yg_status st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                                "%s: already tracing on this thread (yg_trace cannot nest)",
                                who);
        current->fail(current_ctx, st);
        return st;
    }
    current = obs;
    current_ctx = ctx;
    current_through = through_composites;
    saved_pause = paused;
    paused = 0;
    return YG_OK;
}

void yg__obs_uninstall(void)
{
    current = NULL;
    current_ctx = NULL;
    paused = saved_pause;
}

bool yg__obs_recording(bool composite)
{
    return current != NULL && paused == 0 && !(composite && current_through);
}

void yg__obs_pause(void)
{
    paused++;
}

void yg__obs_resume(void)
{
    YG_ASSERT(paused > 0);
    paused--;
}

void yg__obs_begin_node(const char *kind)
{
    if (current != NULL)
        current->begin_node(current_ctx, kind);
}

void yg__obs_input(const yg_tensor *t)
{
    if (current != NULL)
        current->input(current_ctx, t);
}

void yg__obs_attr_int(const char *name, int64_t v)
{
    if (current != NULL)
        current->attr_int(current_ctx, name, v);
}

void yg__obs_attr_ints(const char *name, const int64_t *v, int64_t len)
{
    if (current != NULL)
        current->attr_ints(current_ctx, name, v, len);
}

void yg__obs_attr_bools(const char *name, const bool *v, int64_t len)
{
    if (current != NULL)
        current->attr_bools(current_ctx, name, v, len);
}

void yg__obs_attr_float(const char *name, double v)
{
    if (current != NULL)
        current->attr_float(current_ctx, name, v);
}

void yg__obs_attr_str(const char *name, const char *v)
{
    if (current != NULL)
        current->attr_str(current_ctx, name, v);
}

void yg__obs_output(yg_tensor **slot, const yg_tensor *writes)
{
    if (current != NULL)
        current->output(current_ctx, slot, writes);
}

void yg__obs_output_list(yg_tensor ***items, int64_t *len)
{
    if (current != NULL)
        current->output_list(current_ctx, items, len);
}

void yg__obs_generator(const char *name, const yg_generator *generator)
{
    if (current != NULL)
        current->generator(current_ctx, name, generator);
}

yg_status yg__obs_end_node(void)
{
    if (current == NULL)
        return yg__fail(YG_ERR_INTERNAL, "trace: end_node without begin_node");
    return current->end_node(current_ctx);
}

void yg__obs_alias(const yg_tensor *alias, const yg_tensor *of)
{
    if (yg__obs_recording(false))
        current->alias(current_ctx, alias, of);
}

yg_status yg__obs_refuse(const char *op, const char *arg, const char *type)
{
    yg_status st = yg__fail(YG_ERR_NOT_IMPLEMENTED,
                            "trace: %s: argument '%s' of type %s cannot be recorded",
                            op,
                            arg,
                            type);
    if (current != NULL)
        current->fail(current_ctx, st);
    return st;
}
