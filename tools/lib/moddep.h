/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which module files the running kernel's modprobe would find: its
 * modules.dep, read once and asked by module name.  Loaded modules are
 * another question (/proc/modules, /sys/module).
 */
#ifndef TOOLS_MODDEP_H
#define TOOLS_MODDEP_H

#include <stdbool.h>

/* /lib/modules/$(uname -r)/modules.dep, NUL-terminated, for free(); NULL
 * where there is none.
 */
char *moddep_read(void);

/* Whether modules.dep (moddep_read) lists <name>.ko, compressed or not. */
bool moddep_lists(const char *moddep, const char *name);

#endif /* TOOLS_MODDEP_H */
