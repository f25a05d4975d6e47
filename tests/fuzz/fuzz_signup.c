/*
 * fuzz_signup.c - POST /api/auth/signup through the real server.
 *
 * The payload is the JSON body (see fz.h for cuts and placeholders).
 * Properties: the answer is 201, 400, 409, 413, 429 or 503 - never a 500;
 * a 201 carries a user (id, e-mail) and a 43-character token that opens a
 * session of that same user (GET /api/auth/me answers 200 with the id), and
 * the e-mail is the one sent, trimmed and lowercased.
 */
#include "fz.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_session(const char *token, const char *id)
{
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    const char *hdr[] = {auth, NULL};
    struct fz_req q = {"GET", "/api/auth/me", hdr, NULL, 0, NULL, 0};
    struct fz_resp r;
    if (!fz_http(&q, true, &r)) fz_fail("GET /api/auth/me: no answer");
    const char *got = json_string_value(json_object_get(json_object_get(r.json, "user"), "id"));
    if (r.status != 200 || !got || strcmp(got, id))
        fz_fail("the new session does not open: %d %s", r.status, r.body);
    fz_resp_free(&r);
}

static void check_email(const char *sent, const char *got)
{
    size_t n = strlen(sent);
    while (n && isspace((unsigned char)sent[n - 1]))
        n--;
    while (n && isspace((unsigned char)*sent))
        sent++, n--;
    if (strlen(got) != n) fz_fail("e-mail '%s' stored as '%s'", sent, got);
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)sent[i]) != got[i])
            fz_fail("e-mail '%s' stored as '%s'", sent, got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_start();
    struct fz_input in;
    fz_input_parse(data, size, &in);
    const char *hdr[] = {"Content-Type: application/json", NULL};
    struct fz_req q = {"POST", "/api/auth/signup", hdr, in.payload, in.len, in.cuts, in.ncuts};
    struct fz_resp r;
    if (fz_http(&q, true, &r)) {
        switch (r.status) {
        case 201: {
            json_t *user = json_object_get(r.json, "user");
            const char *id = json_string_value(json_object_get(user, "id"));
            const char *email = json_string_value(json_object_get(user, "email"));
            const char *token = json_string_value(json_object_get(r.json, "token"));
            if (!id || !email || !token || strlen(token) != 43)
                fz_fail("201 without user and token: %s", r.body);
            json_t *body = json_loadb(in.payload, in.len, 0, NULL);
            const char *sent = json_string_value(json_object_get(body, "email"));
            if (!sent) fz_fail("201 for a body without an e-mail: %s", in.payload);
            check_email(sent, email);
            json_decref(body);
            check_session(token, id);
            break;
        }
        case 400:
        case 409:
        case 413:
        case 429:
        case 503:
            break;
        default:
            fz_fail("signup answered %d: %s", r.status, r.body);
        }
        fz_resp_free(&r);
    }
    fz_input_free(&in);
    return 0;
}
