/*
 * cli.h - the `barberia` subcommands. Each takes the arguments after its
 * name and returns the process exit status: 0 done, 1 refused (e.g. an
 * e-mail already registered, or the service cannot start), 2 bad
 * arguments. Errors are one line on stderr.
 */
#ifndef BR_CLI_H
#define BR_CLI_H

#include <stdbool.h>

#define EXIT_REFUSED 1
#define EXIT_USAGE   2

int cli_serve(int argc, char **argv);
int cli_migrate(int argc, char **argv);
int cli_user(int argc, char **argv);
int cli_barbero(int argc, char **argv);
int cli_servicio(int argc, char **argv);
int cli_outbox(int argc, char **argv);
int cli_fotos(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_backup(int argc, char **argv);
int cli_restore(int argc, char **argv);

/* Prints the whole usage text. */
void cli_usage(void *file);

/* Shared by the commands: parses the data settings and the command's own
 * flags (name -> value slot, NULL-terminated). Returns 0, or EXIT_USAGE
 * after printing the error. `help` is printed for --help (then *done is
 * set and 0 returned). */
struct cli_flag {
    const char *name; /* without the leading "--" */
    const char **value;
    bool *present; /* for flags without a value */
};
struct config;
int cli_parse(const char *cmd, int argc, char **argv, unsigned scopes, struct config *cfg,
              const struct cli_flag *flags, const char *help, bool *done);

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
