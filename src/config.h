/* The configuration's defaults and rules (config.c): tfmm_config_defaults
 * and tfmm_config_check (declared in internal.h, which every part of the
 * library includes). */
#ifndef TFMM_CONFIG_H
#define TFMM_CONFIG_H

#include "internal.h"

/* fmm or bh. */
int tfmm_method_is_tree(tfmm_method m);

#endif
