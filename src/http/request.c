/*
 * request.c - what a handler reads of its request (see http.h): method,
 * path, query arguments, headers, cookies, the client's address, the body,
 * the upload, and the caller the authorize hook attached. Strings are
 * borrowed for the request's lifetime.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

void *http_req_app(struct http_req *r)
{
    return r->srv->o.app;
}

unsigned http_req_route_flags(struct http_req *r)
{
    return r->route ? r->route->flags : 0;
}

const char *http_req_method(struct http_req *r)
{
    return r->method;
}

const char *http_req_path(struct http_req *r)
{
    return r->path;
}

/* libmicrohttpd matches names ignoring case; a query parameter's name is
 * matched exactly (`?ID=` is not `?id=`), the first one counting. */
struct exact_name {
    const char *name;
    const char *value;
};

static enum MHD_Result exact_value(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    struct exact_name *e = cls;
    if (!key || strcmp(key, e->name) != 0) return MHD_YES;
    e->value = value;
    return MHD_NO;
}

const char *http_req_query(struct http_req *r, const char *name)
{
    struct exact_name e = {name, NULL};
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, exact_value, &e);
    return e.value;
}

const char *http_req_header(struct http_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

struct header_each {
    const char *name;
    void (*fn)(void *ud, const char *value);
    void *ud;
};

static enum MHD_Result header_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    struct header_each *e = cls;
    if (key && value && !strcasecmp(key, e->name)) e->fn(e->ud, value);
    return MHD_YES;
}

void http_req_header_each(struct http_req *r, const char *name,
                          void (*fn)(void *ud, const char *value), void *ud)
{
    struct header_each e = {name, fn, ud};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, header_field, &e);
}

const char *http_req_remote(struct http_req *r)
{
    if (r->remote[0]) return r->remote;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, r->remote,
                  sizeof r->remote);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, r->remote,
                  sizeof r->remote);
    return r->remote;
}

void http_client_key(const struct sockaddr *sa, char *out, size_t n)
{
    out[0] = '\0';
    if (sa && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)n);
        return;
    }
    if (!sa || sa->sa_family != AF_INET6) return;
    struct in6_addr a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
        inet_ntop(AF_INET, &a.s6_addr[12], out, (socklen_t)n);
        return;
    }
    memset(&a.s6_addr[8], 0, 8);
    char text[INET6_ADDRSTRLEN];
    if (inet_ntop(AF_INET6, &a, text, sizeof text)) snprintf(out, n, "%s/64", text);
}

/* The peer's address as IPv6 (IPv4 as v4-mapped); false for another family. */
static bool peer_as6(const struct sockaddr *sa, struct in6_addr *out)
{
    if (sa && sa->sa_family == AF_INET6) {
        *out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
        return true;
    }
    if (!sa || sa->sa_family != AF_INET) return false;
    http_addr_v4_mapped(&((const struct sockaddr_in *)sa)->sin_addr, out);
    return true;
}

static enum MHD_Result last_forwarded(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    (void)kind;
    if (!strcasecmp(key, "X-Forwarded-For")) *(const char **)cls = value;
    return MHD_YES;
}

/* Behind a trusted proxy: the client X-Forwarded-For names, its last
 * address that is none of the trusted proxies, read from the right (what a
 * client wrote itself stands to the left of what they added). False when
 * there is none, or an entry there is no address: the peer counts then. */
static bool forwarded_client(struct http_req *r, struct sockaddr_in6 *out)
{
    const char *xff = NULL;
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, last_forwarded, &xff);
    if (!xff) return false;
    for (size_t end = strlen(xff); end > 0;) {
        size_t start = end;
        while (start > 0 && xff[start - 1] != ',')
            start--;
        size_t a = start, b = end;
        while (a < b && (xff[a] == ' ' || xff[a] == '\t'))
            a++;
        while (b > a && (xff[b - 1] == ' ' || xff[b - 1] == '\t'))
            b--;
        memset(out, 0, sizeof *out);
        out->sin6_family = AF_INET6;
        if (!http_addr_parse(xff + a, b - a, &out->sin6_addr)) return false;
        if (!http_proxy_trusted(r->srv, &out->sin6_addr)) return true;
        end = start > 0 ? start - 1 : 0;
    }
    return false;
}

const char *http_req_client(struct http_req *r)
{
    if (r->client[0]) return r->client;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    struct in6_addr peer;
    struct sockaddr_in6 fwd;
    if (r->srv->nproxies && peer_as6(sa, &peer) && http_proxy_trusted(r->srv, &peer) &&
        forwarded_client(r, &fwd))
        sa = (const struct sockaddr *)&fwd;
    http_client_key(sa, r->client, sizeof r->client);
    return r->client;
}

json_t *http_req_json(struct http_req *r)
{
    return r->json;
}

const char *http_req_body_raw(struct http_req *r, size_t *len)
{
    *len = r->body.len;
    return r->body.p ? r->body.p : "";
}

const struct http_upload *http_req_upload(struct http_req *r)
{
    return &r->up;
}

const char *http_req_field(struct http_req *r, const char *name)
{
    for (int i = 0; i < r->nfields; i++)
        if (!strcmp(r->fields[i].name, name)) return buf_cstr(&r->fields[i].value);
    return NULL;
}

bool http_req_field_whole(struct http_req *r, const char *name)
{
    for (int i = 0; i < r->nfields; i++)
        if (!strcmp(r->fields[i].name, name)) return !r->fields[i].overlong;
    return true;
}

void http_req_set_detail(struct http_req *r, const char *detail)
{
    free(r->detail);
    r->detail = xstrdup(detail ? detail : "");
}

void http_req_set_user(struct http_req *r, void *user, void (*free_fn)(void *))
{
    if (r->user && r->user_free) r->user_free(r->user);
    r->user = user;
    r->user_free = free_fn;
}

void *http_req_user(struct http_req *r)
{
    return r->user;
}
