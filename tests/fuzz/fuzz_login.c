/*
 * fuzz_login.c - POST /api/auth/login through the real server.
 *
 * The payload is the JSON body (@EMAIL@ and @PASSWORD@ are a real client's
 * credentials). Properties: the answer is 200, 400, 401, 413, 429 or 503 -
 * never a 500; a 401 says "Credenciales inválidas"; a 200 carries a token
 * that opens a session of the fixture's client (the only user with a known
 * password), and only when the body held that password.
 */
#include "fz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct fz_fixture *fx = fz_start();
    struct fz_input in;
    fz_input_parse(data, size, &in);
    const char *hdr[] = {"Content-Type: application/json", NULL};
    struct fz_req q = {"POST", "/api/auth/login", hdr, in.payload, in.len, in.cuts, in.ncuts};
    struct fz_resp r;
    if (fz_http(&q, true, &r)) {
        switch (r.status) {
        case 200: {
            const char *id =
                json_string_value(json_object_get(json_object_get(r.json, "user"), "id"));
            const char *token = json_string_value(json_object_get(r.json, "token"));
            json_t *body = json_loadb(in.payload, in.len, 0, NULL);
            const char *pw = json_string_value(json_object_get(body, "password"));
            /* every fixture user shares the password; only the client's is known */
            if (!pw || strcmp(pw, fx->password))
                fz_fail("200 without the password: %s", in.payload);
            if (!id || !token || strlen(token) != 43) fz_fail("200 without a session: %s", r.body);
            json_decref(body);
            char auth[128];
            snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
            const char *h2[] = {auth, NULL};
            struct fz_req me = {"GET", "/api/auth/me", h2, NULL, 0, NULL, 0};
            struct fz_resp m;
            if (!fz_http(&me, true, &m) || m.status != 200)
                fz_fail("the login's session does not open");
            fz_resp_free(&m);
            break;
        }
        case 401:
            if (strcmp(fz_resp_error(&r), "Credenciales inválidas")) fz_fail("401 with %s", r.body);
            break;
        case 400:
        case 413:
        case 429:
        case 503:
            break;
        default:
            fz_fail("login answered %d: %s", r.status, r.body);
        }
        fz_resp_free(&r);
    }
    fz_input_free(&in);
    return 0;
}
