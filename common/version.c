#include "common/version.h"

/* The Makefile defines it for this file alone (PW_VERSION). */
#ifndef PERFWATCH_VERSION
#define PERFWATCH_VERSION "unknown"
#endif

const char *
pw_version(void)
{
	return PERFWATCH_VERSION;
}
