/*
 * example.c - a program of someone else's, built against an installed
 * libdcprobe through pkg-config:
 *
 *   cc example.c $(pkg-config --cflags --libs dcprobe) -o example
 *   ./example PATH...   prints "STATE PATH" for each path
 *
 * The install test builds and runs it; it is also the shortest tour of
 * the library: feature check, probe, state name, safe quoting.
 */
#define _POSIX_C_SOURCE 200809L /* AT_FDCWD */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dcprobe.h>

int main(int argc, char **argv)
{
	struct dcp_buf out = DCP_BUF_INIT;
	struct dcp_tally tally = { 0 };
	int ret = dcp_probe_support();

	if (ret < 0) {
		fprintf(stderr, "example: %s\n", dcp_unsupported_reason(ret));
		return DCP_EXIT_UNSUPPORTED;
	}
	for (int i = 1; i < argc; i++) {
		ret = dcp_probe_at(AT_FDCWD, argv[i], 0);
		dcp_tally_add(&tally, ret);
		dcp_buf_puts(&out, dcp_state_name(dcp_state_of_errno(ret)));
		dcp_buf_putc(&out, ' ');
		dcp_buf_quote(&out, argv[i], strlen(argv[i]));
		dcp_buf_putc(&out, '\n');
	}
	printf("libdcprobe %s\n", dcp_version());
	fflush(stdout);
	ret = dcp_buf_write(&out, STDOUT_FILENO);
	dcp_buf_free(&out);
	return ret < 0 ? DCP_EXIT_ERROR : dcp_tally_status(&tally, 0);
}
