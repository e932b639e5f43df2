#ifndef COMMON_CPUFAMILY_H
#define COMMON_CPUFAMILY_H

/*
 * The CPU family and generation of a host from its CPU model string (as
 * /proc/cpuinfo's "model name" has it): "Zen 2 (Rome)", "Ice Lake-SP",
 * ...; NULL when the string names no model of the table (never a
 * guess).  A kernel change is often quoted per generation ("+13.7% ...
 * +26.2% across Xeon generations"): hosts of one family are grouped.
 */
const char *cpufamily_of(const char *model);

#endif
