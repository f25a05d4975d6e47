/*
 * main.c - the `barberia` binary: global set-up, then one subcommand.
 */
#include "cli/cli.h"
#include "config.h"
#include "util/log.h"

#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

void cli_usage(void *file)
{
    FILE *f = file;
    fputs("barberia " BARBERIA_VERSION " - a barbershop appointment service\n"
          "\n"
          "Usage: barberia COMMAND [ARGS]\n"
          "\n"
          "Commands:\n"
          "  serve [--demo]                 run the HTTP service (see barberia serve --help)\n"
          "  migrate                        create or upgrade the schema\n"
          "  user add --email E --password P [--nombre N] [--telefono T] [--rol R]\n"
          "  user list\n"
          "  barbero add --nombre N [--foto-url U]\n"
          "  barbero list\n"
          "  servicio add --nombre N --duracion-min M --precio P\n"
          "  servicio list\n"
          "  outbox list [--status pending|retrying|sent|dropped|skipped]\n"
          "  fotos retype                   store old photos' types as uploads get them now\n"
          "  export --to DIR                write the data and photos to a new folder\n"
          "  import --from DIR              load an export into an empty data store\n"
          "  backup --to DIR                an online backup of the embedded database + photos\n"
          "  restore --from DIR             a backup back into an empty data folder\n"
          "  --help, COMMAND --help         this text, or a command's\n"
          "  --version                      the version\n"
          "\n"
          "Every command takes --data DIR (BARBERIA_DATA, default ./data); add and list\n"
          "commands may run while `serve` runs on the same data. Exit status: 0 done,\n"
          "1 refused, 2 bad arguments.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_error("missing command (see barberia --help)");
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        if (argc > 2) {
            cli_error("--version: unexpected argument '%s'", argv[2]);
            return EXIT_USAGE;
        }
        puts("barberia " BARBERIA_VERSION);
        return 0;
    }
    /* Before any thread exists: libsodium's RNG, libcurl's globals, and a
     * fixed jansson hash seed (seeding lazily from threads would race). */
    if (sodium_init() < 0) {
        cli_error("libsodium failed to initialise");
        return EXIT_REFUSED;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        cli_error("libcurl failed to initialise");
        return EXIT_REFUSED;
    }
    json_object_seed(0);
    /* the data commands answer with their own one line; serve logs */
    log_set_quiet(strcmp(cmd, "serve") != 0);

    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"serve", cli_serve},     {"migrate", cli_migrate},   {"user", cli_user},
        {"barbero", cli_barbero}, {"servicio", cli_servicio}, {"outbox", cli_outbox},
        {"export", cli_export},   {"import", cli_import},     {"backup", cli_backup},
        {"restore", cli_restore}, {"fotos", cli_fotos},
    };
    int rc = -1;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name)) rc = cmds[i].fn(argc - 2, argv + 2);
    if (rc < 0) {
        cli_error("unknown command '%s' (see barberia --help)", cmd);
        rc = EXIT_USAGE;
    }
    curl_global_cleanup();
    return rc;
}
