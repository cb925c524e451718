#!/bin/bash
# purity.sh [--state] OBJECTS SO LIBDIR - the public library neither exits, nor
# signals, nor reads the environment, nor prints (lib/dcprobe.h's promise),
# checked on what the linker sees:
#   OBJECTS  a file listing the objects of libdcprobe.so, one a line
#   SO       the shared library built from them
#   LIBDIR   the source directory lib/ (for the source checks)
# 1. no object that defines an exported function (T dcp_*) names a symbol
#    of FORBIDDEN (exits, signals, environment, the process's streams and
#    terminal, process settings, argp, starting or reaping a process);
# 2. write(2) and its kin only in objects of WRITE_OK (each with its
#    reason), and no STDIN/STDOUT/STDERR_FILENO in lib/*.c, lib/*.h: so no
#    public module writes to descriptors 1 or 2 (the one raw write writes
#    to a descriptor its caller passes);
# 3. the same FORBIDDEN list against what SO itself needs (nm -D -u);
# 4. (--state) no writable file-scope state (.bss, .data, .tbss, .tdata)
#    but that of STATE_OK, each with its reason: a second caller would see it;
# 5. the checks can fail: throwaway objects that exit and keep state fail
#    checks 1 and 4 with their messages.
# Also: no public source includes the commands' runtime (lib/cmdrt/), and
# none starts a process by a raw system call (SYS_fork, SYS_clone...):
# a child's SIGCHLD and its reaping are the embedding program's to see.
# Sanitizer builds add only __asan_/__tsan_/__ubsan_ names: none is listed.
set -u
state=0
[ "${1:-}" = --state ] && { state=1; shift; }
objects=$1 so=$2 libdir=$3
fail=0

FORBIDDEN='exit _exit _Exit quick_exit abort atexit at_quick_exit on_exit __cxa_atexit
signal sigaction sigprocmask pthread_sigmask sigset sigvec bsd_signal sysv_signal raise kill
tgkill pthread_kill alarm setitimer
getenv secure_getenv __secure_getenv __libc_secure_getenv setenv putenv unsetenv clearenv environ __environ
stdin stdout stderr printf vprintf fprintf vfprintf dprintf vdprintf __printf_chk __fprintf_chk
__vfprintf_chk __dprintf_chk __vdprintf_chk __vprintf_chk puts fputs fputc putc putchar fwrite
perror err errx warn warnx verr verrx vwarn vwarnx error error_at_line psignal psiginfo isatty
ttyname program_invocation_name program_invocation_short_name __progname __progname_full
setrlimit setrlimit64 prlimit prlimit64 umask chdir fchdir setlocale dup2 dup3 setvbuf fopencookie
fork vfork _Fork clone clone3 posix_spawn posix_spawnp system popen pclose execve execv execvp
execvpe execl execlp execle fexecve wait waitpid wait3 wait4 waitid daemon'

# Objects allowed a raw write, and why.
declare -A WRITE_OK=(
	[report.c.o]="dcp_buf_write() writes to the descriptor its caller passes"
)

# Writable file-scope state allowed, and why (object:symbol, a symbol may
# end in .N, the compiler's name for a function's static).
declare -A STATE_OK=(
	[mounts.c.o:lm]="libmount.so.1 loaded once per process (dlopen), the one process-wide effect"
	[mounts.c.o:lm_once]="the same"
	[mounts.c.o:lm_status]="the same"
	[pages.c.o:ps]="the page size, a constant of the system"
	[pages.c.o:msg]="thread-local text of dcp_pages_unsupported_reason()"
	[util.c.o:unknown]="thread-local text of dcp_errno_name()"
)

# forbidden_in FILE... - the FORBIDDEN names FILE's symbol table needs, one a line.
forbidden_in() {
	local f
	nm -u "$@" 2>/dev/null | awk '{print $NF}' | sed 's/@.*//' | sort -u | while read -r f; do
		case $f in argp_*) echo "$f"; continue ;; esac
		for w in $FORBIDDEN; do
			[ "$f" = "$w" ] && echo "$f"
		done
	done
}

# check_calls OBJ - check 1 on one object; prints what broke it.
check_calls() {
	local bad
	nm --defined-only "$1" | grep -q ' T dcp_' || return 0
	bad=$(forbidden_in "$1" | xargs)
	[ -z "$bad" ] && return 0
	echo "$(basename "$1"): exports a function and calls $bad (an exit, a signal, the environment, stdio, a process setting or a new process)"
	return 1
}

# check_state OBJ - check 4 on one object; prints what broke it.
check_state() {
	local o=$1 base sym ret=0
	base=$(basename "$o")
	# objdump -t: "ADDR FLAGS SECTION SIZE NAME"; file-scope and function statics.
	while read -r sym; do
		[ -n "${STATE_OK[$base:$sym]+x}" ] && continue
		echo "file-scope mutable state in $base: $sym (a second caller would see it)"
		ret=1
	done < <(objdump -t "$o" | awk '$0 ~ /[[:space:]]\.(bss|data|tbss|tdata|data\.rel|data\.rel\.local)[[:space:]]/ && $NF !~ /^\./ {
			n = $NF; sub(/\.[0-9]+$/, "", n); print n }' | sort -u)
	return $ret
}

mapfile -t objs < <(grep -v '^$' "$objects")
[ ${#objs[@]} -gt 0 ] || { echo "no objects listed in $objects"; exit 1; }

for o in "${objs[@]}"; do
	check_calls "$o" || fail=1
	base=$(basename "$o")
	w=$(nm -u "$o" | awk '{print $NF}' | sed 's/@.*//' | grep -xE 'write|writev|pwrite|pwrite64|pwritev|pwritev2' | xargs)
	if [ -n "$w" ] && [ -z "${WRITE_OK[$base]+x}" ]; then
		echo "$base: calls $w (only objects that write to a descriptor their caller passes may)"
		fail=1
	fi
	if [ $state = 1 ]; then
		check_state "$o" || fail=1
	fi
done

# The source: no public module names the process's standard descriptors
# (comments stripped), and none includes the runtime.
for f in "$libdir"/*.c "$libdir"/*.h; do
	if sed 's://.*$::' "$f" | perl -0pe 's:/\*.*?\*/::gs' | grep -nwE 'STD(IN|OUT|ERR)_FILENO' >/dev/null; then
		echo "$(basename "$f"): names a standard descriptor (STDIN/STDOUT/STDERR_FILENO)"
		fail=1
	fi
	if sed 's://.*$::' "$f" | perl -0pe 's:/\*.*?\*/::gs' |
		grep -nwE '(SYS|__NR)_(fork|vfork|clone|clone3|wait4|waitid)' >/dev/null; then
		echo "$(basename "$f"): starts or reaps a process by a raw system call"
		fail=1
	fi
	if grep -nE '#[[:space:]]*include[[:space:]]*"cmdrt/' "$f" >/dev/null; then
		echo "$(basename "$f"): includes the commands' runtime (lib/cmdrt/)"
		fail=1
	fi
done

# 3. What the shared object needs from elsewhere.
bad=$(nm -D --undefined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u | while read -r f; do
	case $f in argp_*) echo "$f"; continue ;; esac
	for w in $FORBIDDEN; do [ "$f" = "$w" ] && echo "$f"; done
done | xargs)
if [ -n "$bad" ]; then
	echo "$(basename "$so") needs $bad"
	fail=1
fi

# 5. The checks can fail.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <stdlib.h>\nvoid dcp_f(void);\nvoid dcp_f(void) { exit(1); }\n' >"$tmp/exits.c"
printf 'int dcp_g(void);\nstatic int n;\nint dcp_g(void) { return ++n; }\n' >"$tmp/state.c"
cc -c -O2 "$tmp/exits.c" -o "$tmp/exits.c.o" && cc -c -O2 "$tmp/state.c" -o "$tmp/state.c.o" ||
	{ echo "control objects do not build"; exit 1; }
out=$(check_calls "$tmp/exits.c.o")
if [ $? = 0 ] || [[ $out != *"calls exit"* ]]; then
	echo "control: an object that calls exit() passed check 1 ($out)"
	fail=1
fi
out=$(check_state "$tmp/state.c.o")
if [ $? = 0 ] || [[ $out != *"file-scope mutable state in state.c.o: n"* ]]; then
	echo "control: an object with a static counter passed check 4 ($out)"
	fail=1
fi

[ $fail = 0 ] && echo "libdcprobe: ${#objs[@]} objects, none exits, signals, reads the environment or prints"
exit $fail
