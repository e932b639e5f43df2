#ifndef COMMON_RUN_METRICS_H
#define COMMON_RUN_METRICS_H

/*
 * Metrics the runner adds to every run on its own, which the verdict
 * reads back by name (runners/agent_claim.c writes them, daemon/verdict.c
 * uses them).
 *
 * OTHER_CPU_METRIC: the share of the host's CPU time, in percent, that
 * other work used while the run ran (runners/host.h
 * host_other_cpu_pct).  Informational; every judged metric of the pair
 * is adjusted for it (docs/ANALYSIS.md, "Other work on the host").
 */
#define OTHER_CPU_METRIC "host.other_cpu_pct"

#endif
