/*
 * samples_other.c - OpInfo samples (see opinfo.h).
 */
#include "opinfo.h"

const sample opinfo_other_samples[] = {
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
