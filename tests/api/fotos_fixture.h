/*
 * fotos_fixture.h - what the tests of /api/fotos share (test_fotos_subida.c,
 * test_fotos_objetos.c), built into each: a server with a barber and a service
 * (F) and three ordinary clients (A, B, C), started for each program by
 * fotos_group_setup; helpers that book, upload, list, delete and check keys.
 */
#ifndef BR_TEST_FOTOS_FIXTURE_H
#define BR_TEST_FOTOS_FIXTURE_H

#include "harness.h"

#define MIB          (1024 * 1024)
#define BOUNDARY     "----barberia-test-7d1f"
#define NO_SUCH_UUID "3f8e2a51-4b7c-4d2e-9a10-5c6b7d8e9f01"

extern struct fixture F;    /* the server, a barber and a service */
extern struct user A, B, C; /* three ordinary clients */

/* A new cita booked by u, each at its own hour so that none overlaps. */
char *new_cita(const struct user *u);
/* A small "image": bytes that hold every value, NULs included. */
const char *pixels(size_t *len);
/* Uploads data as file (filename, type: as given) with cita_id and tipo
 * (NULL: that part left out). */
void upload(const struct user *u, const char *cita, const char *tipo, const char *filename,
            const char *type, const char *data, size_t len, struct resp *r);
/* A photo upload that must succeed; returns the "foto" object (json_incref'ed). */
json_t *upload_ok(const struct user *u, const char *cita, const char *tipo, const char *filename,
                  const char *type, const char *data, size_t len);
json_t *list_fotos(const struct user *u, const char *cita);
void delete_foto(const struct user *u, const char *query, struct resp *r);
/* How many objects a user has under a cita (in whichever store F uses). */
size_t cita_objects(const char *user_id, const char *cita);
/* No upload left anything in the folder store's scratch folder (nothing to
 * look at when photos are in S3). */
void no_scratch_left(void);
/* The server-relative path of a public URL handed out by the service. */
const char *url_path(const char *url);
/* "YYYY-MM-DDTHH:MM:SS.sssZ" */
bool is_timestamp(const char *t);
/* Checks `<user_id>/<cita_id>/<tipo>-<epoch_ms>.<ext>`; OUT: *ms. */
void expect_storage_path(const char *path, const char *user_id, const char *cita, const char *tipo,
                         const char *ext, int64_t *ms);
/* A multipart body built by hand, for what libcurl will not send. */
char *form_body(const char *cita, const char *tipo, const char *file_headers, const char *data,
                size_t *len);
void post_form(const struct user *u, const char *body, size_t len, struct resp *r);
int fotos_group_setup(void **state);
int fotos_group_teardown(void **state);

#endif
