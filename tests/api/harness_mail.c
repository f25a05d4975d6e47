/*
 * harness_mail.c - the SMTP sink of the tests (tests/tools/smtp_sink.py) and the
 * messages it keeps (see harness.h).
 */
#define _GNU_SOURCE
#include "harness_internal.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- the SMTP sink --------------------------------------------------------------------------- */

#define PYTHON  "/usr/bin/python3"
#define SINK_PY BARBERIA_TESTS_DIR "/tools/smtp_sink.py"

void smtp_sink_start(struct smtp_sink *k, const char *root, int port, const char *const *extra)
{
    snprintf(k->dir, sizeof k->dir, "%s/mail", root);
    snprintf(k->log, sizeof k->log, "%s/sink.log", root);
    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    const char *argv[32] = {PYTHON, SINK_PY, "--dir", k->dir, "--port", portarg};
    int n = 6;
    for (; extra && *extra && n < 30; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    int pfd[2];
    if (pipe(pfd) != 0) fail_msg("pipe: %s", strerror(errno));
    int logfd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (logfd < 0) fail_msg("cannot create %s", k->log);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        die_with(parent);
        dup2(pfd[1], 1);
        dup2(logfd, 2);
        close(pfd[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    close(logfd);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    k->pid = pid;
    /* the first line of its stdout is the port it listens on */
    char line[32] = "";
    size_t got = 0;
    int64_t deadline = clock_mono_ms() + 60000;
    while (!memchr(line, '\n', got) && got < sizeof line - 1) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        int left = (int)(deadline - clock_mono_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0) break;
        ssize_t r = read(pfd[0], line + got, sizeof line - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    line[got] = '\0';
    close(pfd[0]);
    k->port = (int)strtol(line, NULL, 10);
    if (k->port <= 0) {
        char *log = read_file(k->log, NULL);
        fail_msg("smtp_sink.py did not start: %s", log ? log : "");
    }
    if (port && k->port != port) fail_msg("smtp_sink.py listens on %d, not %d", k->port, port);
}

void srv_start_mailing(struct srv *s, struct smtp_sink *k, const char *const *env)
{
    srv_init(s);
    smtp_sink_start(k, s->dir, 0, NULL);
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", k->port);
    const char *all[64] = {url};
    size_t n = 1;
    for (; env && *env && n < 63; env++)
        all[n++] = *env;
    all[n] = NULL;
    srv_start(s, all, NULL);
}

int smtp_sink_stop(struct smtp_sink *k)
{
    if (k->pid <= 0) return 0;
    kill(k->pid, SIGTERM);
    int rc = wait_child(k->pid, 20000);
    k->pid = 0;
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t smtp_sink_files(const struct smtp_sink *k, char ***paths)
{
    *paths = NULL;
    DIR *d = opendir(k->dir);
    if (!d) return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".json")) continue;
        *paths = realloc(*paths, (n + 1) * sizeof **paths);
        size_t need = strlen(k->dir) + l + 2;
        (*paths)[n] = malloc(need);
        snprintf((*paths)[n], need, "%s/%s", k->dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(*paths, n, sizeof **paths, cmp_names);
    return n;
}

void smtp_sink_free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

size_t smtp_sink_count(const struct smtp_sink *k)
{
    char **paths;
    size_t n = smtp_sink_files(k, &paths);
    smtp_sink_free_paths(paths, n);
    return n;
}

struct sink_goal {
    const struct smtp_sink *k;
    size_t n;
};

static bool sink_holds(void *ud)
{
    const struct sink_goal *g = ud;
    return smtp_sink_count(g->k) >= g->n;
}

bool smtp_sink_wait(const struct smtp_sink *k, size_t n, int timeout_ms)
{
    struct sink_goal g = {k, n};
    return wait_until(sink_holds, &g, timeout_ms);
}

json_t *smtp_sink_messages(const struct smtp_sink *k, const char *rcpt, const char *needle)
{
    char **paths;
    size_t n = smtp_sink_files(k, &paths);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *m = smtp_sink_message(paths[i]);
        const char *text = jstr(m, "text");
        const char *to = json_string_value(json_array_get(json_object_get(m, "rcpt_tos"), 0));
        if ((!needle || (text && strstr(text, needle))) && (!rcpt || (to && !strcmp(to, rcpt))))
            json_array_append_new(out, m);
        else
            json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    return out;
}

struct messages_goal {
    const struct smtp_sink *k;
    const char *rcpt, *needle;
    size_t n;
};

static bool messages_there(void *ud)
{
    const struct messages_goal *g = ud;
    json_t *all = smtp_sink_messages(g->k, g->rcpt, g->needle);
    bool ok = json_array_size(all) >= g->n;
    json_decref(all);
    return ok;
}

bool smtp_sink_wait_messages(const struct smtp_sink *k, const char *rcpt, const char *needle,
                             size_t n, int timeout_ms)
{
    struct messages_goal g = {k, rcpt, needle, n};
    return wait_until(messages_there, &g, timeout_ms);
}

json_t *smtp_sink_message(const char *path)
{
    const char *argv[] = {PYTHON, BARBERIA_TESTS_DIR "/tools/mail_to_json.py", path, NULL};
    char *out = NULL, *err = NULL;
    int st = run_program(argv, NULL, 60000, &out, &err);
    if (st != 0) fail_msg("mail_to_json.py failed (%d): %s", st, err ? err : "");
    json_t *j = json_loads(out, 0, NULL);
    if (!j) fail_msg("mail_to_json.py printed no JSON: %s", out);
    free(out);
    free(err);
    return j;
}

const char *ics_field(const json_t *mail, const char *name, const char *key)
{
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(mail, "ics"), i, l)
    {
        if (!strcmp(jstr(l, "name"), name)) return jstr(l, key);
    }
    return NULL;
}

const char *ics_value(const json_t *mail, const char *name)
{
    return ics_field(mail, name, "value");
}
