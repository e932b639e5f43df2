#ifndef CONFIG_JOB_YAML_H
#define CONFIG_JOB_YAML_H

/*
 * A job written back as the YAML of a job file (docs/CONFIG.md), for a
 * report's "To reproduce": the keys that say what runs and what is
 * measured (name, parser, build, command, runs, max_runs, timeout,
 * metrics), each line after INDENT, in block style only (one list
 * item or mapping key a line, no braces); every string is a double-quoted
 * scalar with '"', '\' and control bytes escaped, so no text of a job or a mail
 * can end it. config_parse_job reads the result back as the same job.  Pure.
 */
#include "common/buf.h"

struct job_config;

void config_job_yaml(
    struct buf *b, const char *indent, const struct job_config *j);

#endif
