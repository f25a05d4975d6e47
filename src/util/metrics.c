/*
 * metrics.c - counters and the Prometheus text exposition (see metrics.h).
 */
#include "metrics.h"
#include "common.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define MAX_ROUTES  128
#define ROUTE_SLOTS (MAX_ROUTES + 1) /* the last: requests no route matched */
#define STATUS_MAX  600

/* upper bounds of the latency buckets, in microseconds (+Inf is implied) */
static const int64_t bucket_us[] = {500,    1000,   2500,   5000,    10000,   25000,   50000,
                                    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};
#define NBUCKETS (sizeof bucket_us / sizeof bucket_us[0])

struct route_stats {
    atomic_uint_fast64_t status[STATUS_MAX];
    atomic_uint_fast64_t bucket[NBUCKETS + 1]; /* not cumulative; the last is +Inf */
    atomic_uint_fast64_t sum_us, count;
};

static atomic_int_fast64_t values[M_ALL];
static struct route_stats routes[ROUTE_SLOTS];
static const char *const *route_names;
static int nroutes;
static int64_t started_s;

void metric_add(enum metric m, int64_t n)
{
    atomic_fetch_add_explicit(&values[m], n, memory_order_relaxed);
}

void metric_set(enum metric m, int64_t v)
{
    atomic_store_explicit(&values[m], v, memory_order_relaxed);
}

int64_t metric_get(enum metric m)
{
    return atomic_load_explicit(&values[m], memory_order_relaxed);
}

void metrics_http_routes(const char *const *names, int n)
{
    route_names = names;
    nroutes = n < MAX_ROUTES ? n : MAX_ROUTES;
    started_s = (int64_t)time(NULL);
}

void metrics_http_begin(void)
{
    metric_inc(M_INFLIGHT);
}

void metrics_http_done(int route, unsigned status, int64_t us)
{
    metric_add(M_INFLIGHT, -1);
    struct route_stats *r = &routes[route >= 0 && route < nroutes ? route : MAX_ROUTES];
    if (status > 0 && status < STATUS_MAX)
        atomic_fetch_add_explicit(&r->status[status], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < NBUCKETS && us > bucket_us[b])
        b++;
    atomic_fetch_add_explicit(&r->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->sum_us, (uint_fast64_t)(us > 0 ? us : 0), memory_order_relaxed);
    atomic_fetch_add_explicit(&r->count, 1, memory_order_relaxed);
}

/* --- exposition ------------------------------------------------------------------ */

static uint64_t load(atomic_uint_fast64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

static br_err family(struct buf *out, const char *name, const char *type, const char *help)
{
    return buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static br_err scalar(struct buf *out, const char *name, const char *type, const char *help,
                     int64_t v)
{
    br_err rc = family(out, name, type, help);
    if (!rc) rc = buf_printf(out, "%s %lld\n", name, (long long)v);
    return rc;
}

/* The labels of route slot i: method="GET",route="/api/citas". Route
 * paths are the code's own constants, with nothing to escape. */
static br_err route_labels(struct buf *out, int i)
{
    if (i == MAX_ROUTES) return buf_puts(out, "method=\"\",route=\"unmatched\"");
    const char *name = route_names[i];
    const char *sp = strchr(name, ' ');
    int mlen = sp ? (int)(sp - name) : 0;
    return buf_printf(out, "method=\"%.*s\",route=\"%s\"", mlen, name, sp ? sp + 1 : name);
}

static bool slot_used(int i)
{
    return i < nroutes || i == MAX_ROUTES;
}

static br_err requests(struct buf *out)
{
    br_err rc = family(out, "barberia_http_requests_total", "counter",
                       "HTTP requests answered, by route and status.");
    for (int i = 0; i < ROUTE_SLOTS && !rc; i++) {
        if (!slot_used(i)) continue;
        for (int st = 0; st < STATUS_MAX && !rc; st++) {
            uint64_t n = load(&routes[i].status[st]);
            if (!n) continue;
            rc = buf_puts(out, "barberia_http_requests_total{");
            if (!rc) rc = route_labels(out, i);
            if (!rc) rc = buf_printf(out, ",status=\"%d\"} %llu\n", st, (unsigned long long)n);
        }
    }
    if (!rc)
        rc = family(out, "barberia_http_request_duration_seconds", "histogram",
                    "Time from a request's first byte to the end of its answer.");
    for (int i = 0; i < ROUTE_SLOTS && !rc; i++) {
        if (!slot_used(i) || !load(&routes[i].count)) continue;
        uint64_t cum = 0;
        for (size_t b = 0; b <= NBUCKETS && !rc; b++) {
            cum += load(&routes[i].bucket[b]);
            rc = buf_puts(out, "barberia_http_request_duration_seconds_bucket{");
            if (!rc) rc = route_labels(out, i);
            if (!rc && b < NBUCKETS)
                rc = buf_printf(out, ",le=\"%g\"} %llu\n", (double)bucket_us[b] / 1e6,
                                (unsigned long long)cum);
            else if (!rc)
                rc = buf_printf(out, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
        }
        /* the count is the +Inf bucket read above, so that they agree */
        const char *tails[] = {"_sum", "_count"};
        for (int t = 0; t < 2 && !rc; t++) {
            rc = buf_printf(out, "barberia_http_request_duration_seconds%s{", tails[t]);
            if (!rc) rc = route_labels(out, i);
            if (!rc && t == 0)
                rc = buf_printf(out, "} %.6f\n", (double)load(&routes[i].sum_us) / 1e6);
            else if (!rc)
                rc = buf_printf(out, "} %llu\n", (unsigned long long)cum);
        }
    }
    return rc;
}

static const struct {
    enum metric m;
    const char *name, *type, *help;
} plain[] = {
    {M_INFLIGHT, "barberia_http_requests_in_flight", "gauge", "Requests being served now."},
    {M_DB_POOL_SIZE, "barberia_db_pool_connections", "gauge", "Connections in the database pool."},
    {M_DB_IN_USE, "barberia_db_pool_in_use", "gauge", "Pool connections leased now."},
    {M_DB_WRITES_WAITING, "barberia_db_writes_waiting", "gauge",
     "Write transactions queued for the SQLite writer (0 on PostgreSQL)."},
    {M_DB_ACQUIRES, "barberia_db_pool_acquires_total", "counter", "Pool connections leased."},
    {M_DB_WAITS, "barberia_db_pool_waits_total", "counter",
     "Leases that waited for a free connection."},
    {M_DB_TIMEOUTS, "barberia_db_pool_timeouts_total", "counter",
     "Leases refused after BARBERIA_DB_WAIT_MS (answered 503)."},
    {M_DB_RECONNECTS, "barberia_db_reconnects_total", "counter",
     "Database connections re-opened after a loss."},
    {M_CAL_FAILURES, "barberia_calendar_failures_total", "counter",
     "Bookings whose Google Calendar event could not be made."},
    {M_MAIL_SENT, "barberia_mail_sent_total", "counter", "Confirmation e-mails delivered."},
    {M_MAIL_FAILURES, "barberia_mail_failures_total", "counter",
     "E-mail delivery attempts that failed (and are retried)."},
    {M_MAIL_DROPPED, "barberia_mail_dropped_total", "counter", "Confirmation e-mails given up."},
    {M_PHOTOS_STORED, "barberia_photos_stored_total", "counter", "Photos stored."},
    {M_PHOTOS_REMOVED, "barberia_photos_removed_total", "counter",
     "Photo objects removed (deletes, failed uploads and sweeps)."},
    {M_SWEEPS, "barberia_sweeper_runs_total", "counter", "Passes of the crash sweeper."},
    {M_SWEEP_FAILURES, "barberia_sweeper_failures_total", "counter",
     "Removals a sweeper pass could not make (retried on the next)."},
};

/* A counter of the memos (memo/memo.h and the store), one sample per memo: session, catalog,
 * citas, names, disponibilidad, in m's order. */
static br_err memo_family(struct buf *out, const char *name, const char *help,
                          const enum metric m[5])
{
    static const char *const memos[] = {"session", "catalog", "citas", "names", "disponibilidad"};
    br_err rc = family(out, name, "counter", help);
    for (size_t i = 0; i < ARRAY_LEN(memos) && !rc; i++)
        rc = buf_printf(out, "%s{memo=\"%s\"} %lld\n", name, memos[i], (long long)metric_get(m[i]));
    return rc;
}

br_err metrics_render(struct buf *out, const struct metrics_scrape *extra)
{
    br_err rc = requests(out);
    for (size_t i = 0; i < ARRAY_LEN(plain) && !rc; i++)
        rc = scalar(out, plain[i].name, plain[i].type, plain[i].help, metric_get(plain[i].m));
    if (!rc)
        rc = family(out, "barberia_db_pool_wait_seconds_total", "counter",
                    "Time spent waiting for a free database connection.");
    if (!rc)
        rc = buf_printf(out, "barberia_db_pool_wait_seconds_total %.6f\n",
                        (double)metric_get(M_DB_WAIT_US) / 1e6);
    if (!rc)
        rc = memo_family(
            out, "barberia_memo_hits_total",
            "Answers served as remembered (names: on both databases; the others: SQLite), by what "
            "they are.",
            (const enum metric[]){M_MEMO_SESSION_HITS, M_MEMO_CATALOG_HITS, M_MEMO_CITAS_HITS,
                                  M_MEMO_NAMES_HITS, M_MEMO_SLOTS_HITS});
    if (!rc)
        rc = memo_family(out, "barberia_memo_misses_total",
                         "Answers that could have been remembered and were read afresh.",
                         (const enum metric[]){M_MEMO_SESSION_MISSES, M_MEMO_CATALOG_MISSES,
                                               M_MEMO_CITAS_MISSES, M_MEMO_NAMES_MISSES,
                                               M_MEMO_SLOTS_MISSES});
    if (!rc && extra && extra->have_outbox) {
        rc = family(out, "barberia_outbox_messages", "gauge",
                    "Confirmation e-mails in the outbox that are not sent, by status.");
        if (!rc)
            rc = buf_printf(out,
                            "barberia_outbox_messages{status=\"pending\"} %lld\n"
                            "barberia_outbox_messages{status=\"dropped\"} %lld\n",
                            (long long)extra->outbox_pending, (long long)extra->outbox_dropped);
    }
    if (!rc)
        rc = scalar(out, "barberia_start_time_seconds", "gauge",
                    "When this process started, in seconds since the epoch.", started_s);
    return rc;
}
