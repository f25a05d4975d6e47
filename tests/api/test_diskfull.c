/*
 * test_diskfull.c - a full disk while a photo is stored: the answer is the
 * specification's 500 "Error al subir imagen: <detail>", nothing is left
 * behind (no record, no object, no metadata, no temporary file, no
 * intent), and once there is space again the same server stores photos
 * without being restarted.
 *
 * The disk is real: a small tmpfs mounted over <data>/storage by the test
 * (the tests run as root; see docs/testing.md), grown with a remount when
 * the test gives the space back.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#define FULL_SIZE  "size=512k"
#define ROOMY_SIZE "size=16m"

static struct srv S;
static struct user U;
static char *cita;
static char storage[400];
static bool mounted;

static char *bytes_of(size_t n, unsigned salt)
{
    char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (char)((i * 131 + salt * 7 + (i >> 9)) & 0xff);
    return b;
}

static void upload(const char *data, size_t len, struct resp *r)
{
    struct part parts[] = {
        {"file", data, len, "lleno.jpg", "image/jpeg"},
        {"cita_id", cita, 0, NULL, NULL},
        {"tipo", "antes", 0, NULL, NULL},
    };
    http_multipart(&S, "/api/fotos", U.token, parts, 3, r);
}

static size_t files_under(const char *sub)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", storage, sub);
    return count_files(dir);
}

/* Nothing but whole photos: as many objects and metadata files as records,
 * no temporary file, no spool file, no intent. */
static void expect_nothing_left_behind(void)
{
    long records = db_count(&S, "SELECT count(*) FROM fotos_cita");
    assert_int_equal(files_under("fotos-citas"), records);
    assert_int_equal(files_under(".meta/fotos-citas"), records);
    assert_int_equal(files_under(".tmp"), 0);
    char spool[400];
    snprintf(spool, sizeof spool, "%s/tmp", S.data);
    assert_int_equal(count_files(spool), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM obj_intents"), 0);
}

static uint64_t free_bytes(void)
{
    struct statvfs v;
    assert_int_equal(statvfs(storage, &v), 0);
    return (uint64_t)v.f_bavail * v.f_frsize;
}

static void delete_photo(const char *id)
{
    char path[128];
    snprintf(path, sizeof path, "/api/fotos?id=%s", id);
    struct resp r;
    http_req(&S, "DELETE", path, &(struct req_opts){.token = U.token}, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

static void full_disk_answers_500_leaves_nothing_and_recovers_when_space_is_back(void **state)
{
    (void)state;
    /* a photo that fits */
    size_t small_len = 20 * 1024;
    char *small = bytes_of(small_len, 1);
    struct resp r;
    upload(small, small_len, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);

    /* one that cannot fit: the specification's answer, nothing kept */
    uint64_t left = free_bytes();
    size_t big_len = (size_t)left + 64 * 1024;
    assert_true(big_len < 5 * 1024 * 1024);
    char *big = bytes_of(big_len, 2);
    upload(big, big_len, &r);
    assert_int_equal(r.status, 500);
    const char *msg = jstr(r.json, "error");
    assert_non_null(msg);
    if (strncmp(msg, "Error al subir imagen: ", 23) != 0 || !strstr(msg, "No space left on device"))
        fail_msg("unexpected answer: %s", r.body);
    assert_null(strstr(msg, S.dir)); /* no server path in the answer */
    resp_free(&r);
    expect_nothing_left_behind();
    assert_int_equal(db_count(&S, "SELECT count(*) FROM fotos_cita"), 1);

    /* sizes around the edge of the space left: every failure point of a
     * write (object, its metadata, the folders) answers the same way and
     * leaves only whole photos */
    left = free_bytes();
    int stored = 0, refused = 0;
    for (long d = -16 * 1024; d <= 16 * 1024 && left > 20 * 1024; d += 4096 + 512) {
        size_t n = (size_t)((long)left + d);
        char *b = bytes_of(n, (unsigned)d & 0xff);
        upload(b, n, &r);
        if (r.status == 201) {
            stored++;
            char path[1024];
            const char *url = jstr(json_object_get(r.json, "foto"), "url");
            assert_non_null(url);
            snprintf(path, sizeof path, "%s", strstr(url, "/storage/v1/"));
            const char *id = jstr(json_object_get(r.json, "foto"), "id");
            char idc[40];
            snprintf(idc, sizeof idc, "%s", id);
            struct resp g;
            http_get(&S, path, NULL, &g);
            assert_int_equal(g.status, 200);
            assert_int_equal(g.len, n);
            assert_memory_equal(g.body, b, n);
            resp_free(&g);
            delete_photo(idc); /* room for the next size */
        } else {
            refused++;
            assert_int_equal(r.status, 500);
            assert_non_null(strstr(r.body, "Error al subir imagen: "));
        }
        resp_free(&r);
        free(b);
        expect_nothing_left_behind();
    }
    fprintf(stderr, "test_diskfull: near the edge %d stored, %d refused\n", stored, refused);
    assert_true(refused > 0);

    /* space is back: the same server stores the big photo */
    assert_int_equal(mount("tmpfs", storage, "tmpfs", MS_REMOUNT, ROOMY_SIZE), 0);
    upload(big, big_len, &r);
    assert_int_equal(r.status, 201);
    char path[1024];
    snprintf(path, sizeof path, "%s",
             strstr(jstr(json_object_get(r.json, "foto"), "url"), "/storage/v1/"));
    resp_free(&r);
    struct resp g;
    http_get(&S, path, NULL, &g);
    assert_int_equal(g.status, 200);
    assert_int_equal(g.len, big_len);
    assert_memory_equal(g.body, big, big_len);
    resp_free(&g);
    expect_nothing_left_behind();
    free(small);
    free(big);
}

static int setup(void **state)
{
    (void)state;
    srv_init(&S);
    snprintf(storage, sizeof storage, "%s/storage", S.data);
    char *cmd[] = {"/bin/mkdir", "-p", storage, NULL};
    assert_int_equal(run_program((const char *const *)cmd, NULL, 5000, NULL, NULL), 0);
    if (mount("tmpfs", storage, "tmpfs", MS_NOSUID | MS_NODEV, FULL_SIZE) != 0) {
        fprintf(stderr, "test_diskfull: cannot mount a tmpfs (%s); run the tests as root\n",
                strerror(errno));
        return -1;
    }
    mounted = true;
    srv_start(&S, NULL, NULL);
    char *barbero = make_barbero(&S, "Barbero lleno");
    char *servicio = make_servicio(&S, "Corte", 30, 10.0);
    signup_user(&S, &U, NULL);
    cita = book(&S, &U, barbero, servicio, "2031-03-03T10:00:00Z", NULL);
    free(barbero);
    free(servicio);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    int rc = srv_stop(&S);
    if (mounted && umount2(storage, MNT_DETACH) != 0)
        fprintf(stderr, "test_diskfull: umount %s: %s\n", storage, strerror(errno));
    srv_cleanup(&S);
    free(cita);
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    test_folder_store(); /* a full disk under the data folder: the folder store's own case */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_disk_answers_500_leaves_nothing_and_recovers_when_space_is_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
