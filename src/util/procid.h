/*
 * procid.h - who this process is, for work that must be told apart from a
 * dead process's work: the node, the pid, and an instance id drawn at
 * random once per process, so that a later process that happens to get the
 * same pid is never taken for this one. The node is where a pid means
 * something: the host name, the kernel's boot and the pid namespace
 * ("shop-1/1a2b3c4d/4026531836"), so that two machines or containers that
 * share a host name (a cloned VM, containers all named alike, each server
 * pid 1) never judge each other's pids by their own process table.
 */
#ifndef BR_PROCID_H
#define BR_PROCID_H

#include "common.h"

#define PROCID_INSTANCE_LEN 32 /* hex digits */

struct procid {
    char node[256];
    long pid;
    char instance[PROCID_INSTANCE_LEN + 1];
};

/* This process's identity, made on first use (thread-safe). Borrowed for
 * the life of the process. */
const struct procid *procid_self(void);

/* True unless the kernel says no process has that pid on this node, or
 * that it is a zombie (killed or ended, not yet reaped by its parent). */
bool procid_pid_alive(long pid);

#endif
