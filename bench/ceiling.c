/*
 * ceiling.c - the bare libmicrohttpd ceiling for bench/compare: a server
 * that answers every request with one fixed JSON body, in the threading
 * mode Barberia serves in (epoll, one I/O thread per core). Nothing a real
 * request needs (routing, a session, a query, JSON writing) is done, so no
 * service on this library can be faster on this machine.
 *
 *   bench_ceiling PORT [BODY]     (stops on SIGINT/SIGTERM)
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *fixed;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *data_size, void **state)
{
    (void)cls, (void)url, (void)method, (void)version, (void)data;
    if (!*state) { /* answer on the second call, as Barberia does: keep-alive stays */
        *state = c;
        return MHD_YES;
    }
    *data_size = 0;
    return MHD_queue_response(c, MHD_HTTP_OK, fixed);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ceiling PORT [BODY]\n");
        return 2;
    }
    const char *body = argc > 2 ? argv[2] : "{\"servicios\":[]}";
    fixed = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(fixed, "Content-Type", "application/json; charset=utf-8");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint16_t port = (uint16_t)strtol(argv[1], NULL, 10);
    struct sockaddr_in lo = {.sin_family = AF_INET, .sin_port = htons(port)};
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, port, NULL, NULL, answer, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&lo, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(cores > 0 ? cores : 1), MHD_OPTION_CONNECTION_LIMIT, 10000u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "bench_ceiling: cannot listen on port %s\n", argv[1]);
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(fixed);
    return 0;
}
