/*
 * grad_mode.c - the per-thread switch that says whether ops record
 * backward nodes.  Thread-local so that one thread's no-grad scope (an
 * optimizer step, an evaluation loop) never affects another thread.
 */
#include "autograd/node.h"
#include "yagrad/autograd.h"

static _Thread_local bool grad_disabled; /* zero-initialised: enabled */

bool yg_is_grad_enabled(void)
{
    return !grad_disabled;
}

bool yg_set_grad_enabled(bool enabled)
{
    bool prev = !grad_disabled;
    grad_disabled = !enabled;
    return prev;
}
