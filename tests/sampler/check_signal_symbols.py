#!/usr/bin/env python3
"""The signal path's objects call only async-signal-safe functions.

    check_signal_symbols.py OBJECT...

OBJECTs are the compiled *_sig.c files of sampler/ (wherever they live) and the platform's signal path
(platform/<arch>/regs.c, platform/linux_signal.c). Every symbol they leave undefined must be
defined by one of them or appear in ALLOWED below: functions POSIX lists as async-signal-safe
(or raw system calls), the compiler's own helpers, the data table the handler reads, and the
four entry points of libunwind's walk (ALLOWED_PATTERN).
A call to malloc, a lock, stdio or the JVM from the handler's files fails this test, naming
the symbol and the object.
"""
import re
import subprocess
import sys

ALLOWED = {
    # async-signal-safe (POSIX) or a raw system call
    "clock_gettime", "getpid", "syscall", "sigaction", "sigemptyset", "sigaddset", "sigprocmask",
    "__errno_location",
    # the fault guard (guard.h): a jump back from the fault handler into the sampling handler
    "__sigsetjmp", "siglongjmp",
    # the compiler's: block copies, stack protector, its own symbol for the GOT
    "memcpy", "memset", "memmove", "__stack_chk_fail", "_GLOBAL_OFFSET_TABLE_",
    # data the handler reads, defined outside the signal path (never moved, never freed)
    "registry_chunks",
}
# libunwind's walk through the "remote" interface: every memory read, register and unwind table
# goes through the project's own accessors (native_walk_sig.c); with caching off it calls no
# malloc (test_handler_nomalloc walks native frames too), but inside libunwind each step takes
# one object from libunwind's own pool: a mutex held with every signal blocked, and an mmap when
# the pool is empty (native_walk_sig.c's top comment says what that means for the handler)
ALLOWED_PATTERN = re.compile(r"^_U[a-z0-9_]+?_(init_remote|step|get_reg|dwarf_search_unwind_table)$")
# instrumentation of sanitizer and coverage builds
ALLOWED_PREFIXES = ("__asan_", "__ubsan_", "__sanitizer_", "__tsan_", "__gcov_")


def symbols(obj, *flags):
    out = subprocess.run(["nm", "--format=posix", *flags, obj], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def main():
    objs = sys.argv[1:]
    if not objs:
        print("usage: check_signal_symbols.py OBJECT...", file=sys.stderr)
        return 2
    defined = set()
    for o in objs:
        defined |= symbols(o, "--defined-only")
    bad = []
    for o in objs:
        for s in sorted(symbols(o, "--undefined-only")):
            if s in defined or s in ALLOWED or s.startswith(ALLOWED_PREFIXES) or ALLOWED_PATTERN.match(s):
                continue
            bad.append(f"{o}: calls {s}, which is not on the signal path's allow-list")
    for b in bad:
        print(b)
    print(f"signal path: {len(objs)} objects checked")
    print(f"{len(objs) - len({b.split(':')[0] for b in bad})} passed, {len({b.split(':')[0] for b in bad})} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
