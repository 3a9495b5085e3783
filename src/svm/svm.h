/*
 * svm.h - the svm layer as the rest of UPVM sees it: the composition root
 * (src/run) reads its settings before the nodes start and wires it into
 * every node.  Programs use include/upvm_svm.h.
 */
#ifndef UPVM_SVM_H_INTERNAL
#define UPVM_SVM_H_INTERNAL

#include "util/compiler.h"

/* UPVM_SVM_MANAGER, UPVM_SVM_FAULT: a bad value ends the process with its
 * line (util/env.h).  Before the nodes start, so that it is said once. */
void svm_read_settings(void) HIDDEN;

/* Every node of a job, before node_job_ready: register the layer's frames
 * and hooks.  (A job of one node needs no call: the first shared
 * allocation does it.) */
void svm_init(void) HIDDEN;

#endif /* UPVM_SVM_H_INTERNAL */
