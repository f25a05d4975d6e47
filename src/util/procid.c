/*
 * procid.c - this process's identity (see procid.h).
 */
#define _GNU_SOURCE
#include "procid.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct procid self;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void make_self(void)
{
    if (gethostname(self.node, sizeof self.node) != 0 || !self.node[0])
        snprintf(self.node, sizeof self.node, "localhost");
    self.node[sizeof self.node - 1] = '\0';
    self.pid = (long)getpid();
    unsigned char raw[PROCID_INSTANCE_LEN / 2];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2hex(self.instance, sizeof self.instance, raw, sizeof raw);
}

const struct procid *procid_self(void)
{
    pthread_once(&self_once, make_self);
    return &self;
}

bool procid_pid_alive(long pid)
{
    if (pid <= 0) return false;
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}
