/* Shared by the tilefmm command-line tool: exit codes, error reporting and
 * the commands' entry points. */
#ifndef TFMM_CLI_H
#define TFMM_CLI_H

/* Exit codes: scripts tell a mistake in the command line from a failure. */
enum { CLI_OK = 0, CLI_RUNTIME_ERROR = 1, CLI_USAGE_ERROR = 2 };

/* Prints "tilefmm: <message>\n" to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Each line of msg (a tfmm_gpu_check message) as a warning of its own:
 * "tilefmm: warning: <line>" on stderr. */
void cli_warn_lines(const char *msg);

/* Under device auto (device_auto: the configuration's device is
 * TFMM_DEVICE_AUTO), says on stderr (once a run) which GPUs present this
 * build cannot use, why and how to fix it (tfmm_gpu_check), and that the
 * work then runs on the CPU when no GPU is left. Under device gpu the
 * solver's own error carries the same words; under cpu nothing is said. */
void cli_gpu_warn(int device_auto);

/* Wall-clock seconds from an arbitrary origin (a monotonic clock). */
double cli_seconds(void);

/* Commands: argv[0] is the command's name, as for main. */
int cmd_forces(int argc, char **argv);
int cmd_ic(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_validate(int argc, char **argv);

#endif
