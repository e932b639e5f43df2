#include <stdio.h>

#include "cli/cli.h"

int
cmd_config(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "perfwatch config: not built yet\n");
	return 2;
}
