#ifndef COMMON_CPUFAMILY_H
#define COMMON_CPUFAMILY_H

#include <stddef.h>

/*
 * The CPU family and generation of a host from its CPU model string (as
 * /proc/cpuinfo's "model name" has it): "Zen 2 (Rome)", "Ice Lake-SP",
 * ...; NULL when the string names no model of the table (never a
 * guess).  A kernel change is often quoted per generation ("+13.7% ...
 * +26.2% across Xeon generations"): hosts of one family are grouped.
 */
const char *cpufamily_of(const char *model);

/*
 * A host's derived runner labels, from the CPU model and vendor id
 * ("AuthenticAMD", "GenuineIntel"; NULL when not reported) its runner
 * reports: vendor:amd or vendor:intel, and family:<slug> of the family
 * above (lower case, each run of other characters one '-': "Zen 2
 * (Rome)" is family:zen-2-rome); vendor:unknown and family:unknown when
 * the strings do not say.  Written into vendor and family (each at
 * least CPUFAMILY_LABEL_MAX bytes).
 */
#define CPUFAMILY_LABEL_MAX 64
void cpufamily_labels(
    const char *model, const char *vendor_id, char *vendor, char *family);

/*
 * Whether label is one cpufamily_labels can give: 1 when it is, 0 when
 * it has the vendor: or family: prefix but a value no host can get
 * (the caller names the values: cpufamily_label_values), -1 when it is
 * not a derived label at all.
 */
int cpufamily_label_known(const char *label);

/* The values of "vendor:" (kind 'v') or "family:" ('f') labels, as one
 * ", "-separated string into out (n bytes). */
void cpufamily_label_values(int kind, char *out, size_t n);

#endif
