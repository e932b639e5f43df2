#ifndef COMMON_VERSION_H
#define COMMON_VERSION_H

/* The version of this build (git describe of the tree built, set by the
 * Makefile), "unknown" when the build knew none. */
const char *pw_version(void);

#endif
