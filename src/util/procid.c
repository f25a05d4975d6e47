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
#include <sys/stat.h>
#include <unistd.h>

static struct procid self;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* The first 8 characters of the kernel's boot id ("" when unknown). */
static void boot_id(char out[9])
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f) return;
    char line[64];
    if (fgets(line, sizeof line, f) && strlen(line) >= 8) {
        memcpy(out, line, 8);
        out[8] = '\0';
    }
    fclose(f);
}

static void make_self(void)
{
    char host[200];
    if (gethostname(host, sizeof host) != 0 || !host[0]) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    char boot[9];
    boot_id(boot);
    struct stat ns;
    unsigned long long pidns =
        stat("/proc/self/ns/pid", &ns) == 0 ? (unsigned long long)ns.st_ino : 0;
    snprintf(self.node, sizeof self.node, "%s/%s/%llu", host, boot, pidns);
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

/* A zombie (killed, not yet reaped by its parent) still answers kill(0),
 * but does nothing more: Linux's /proc/<pid>/stat says so by its state,
 * the field after the parenthesised name (which may hold any byte). */
static bool zombie(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close = strrchr(buf, ')');
    return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

bool procid_pid_alive(long pid)
{
    if (pid <= 0) return false;
    if (kill((pid_t)pid, 0) != 0) return errno != ESRCH;
    return !zombie(pid);
}
