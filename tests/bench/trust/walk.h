/* The work of one op of walk.c: steps of its dependent walk. */
/* note: the first version */
#define STEPS_PER_OP 10000
