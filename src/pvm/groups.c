/* groups.c - placeholder until the group functions land (branch pvm-groups). */
#include "pvm/pvm.h"

void pvm_groups_task_leave(struct pvm_task *t) {}
