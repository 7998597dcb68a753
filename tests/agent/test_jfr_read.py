#!/usr/bin/env python3
"""test_jfr_read.py JFR_FIXTURE JFR_TOOL — the JFR writer's recording, read back by the JDK's
own `jfr` tool (JFR_TOOL: the `jfr` of JDK 17, 21 or 25): `jfr summary` counts every event
type, `jfr print --json` gives each event's time, thread, state and stack (class, method,
descriptor, line, bytecode index, frame type) as jfr_fixture.c wrote them — a thread name with a
quote and a newline and a method name outside the BMP included — and `jfr print` prints them
without error; a recording of 20000 distinct stacks, whose pools span several checkpoint
events, is read whole. What jfr_fixture.c writes is repeated here: keep the two in step."""
import atexit
import calendar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FIXTURE, JFR = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


START_NS = 1795780800 * 10**9  # 2026-11-27T12:00:00Z; ticks are µs from the start

THREADS = {
    "main": {"osName": "main", "osThreadId": 4242, "javaName": "main", "javaThreadId": 1},
    "odd": {"osName": 'worker "odd"\nname', "osThreadId": 4243,
            "javaName": 'worker "odd"\nname', "javaThreadId": 17},
    "gc": {"osName": "GC Thread#0", "osThreadId": 4250, "javaName": None, "javaThreadId": 0},
    "reborn": {"osName": "reborn", "osThreadId": 4242, "javaName": "reborn", "javaThreadId": 99},
}
MAIN = ("com/example/Main", "main", "([Ljava/lang/String;)V")
STACKS = {  # (class, method, descriptor, line, bci, type), innermost first; truncated
    "java": ([("com/example/Hot", "inner", "(I)I", 12, 3, "Inlined"),
              ("com/example/Hot", "run\U0001F600", "()V", 40, 17, "JIT compiled"),
              MAIN + (7, 0, "Interpreted")], False),
    "native": ([("", "memcpy", "()", -1, -1, "Native"),
                ("java/lang/Object", "hashCode", "()I", -1, -1, "Native"),
                MAIN + (9, 4, "Interpreted")], False),
    "gc": ([("", "G1ParTask::work", "()", -1, -1, "Native")], True),
}
SAMPLES = [  # type, µs after the start, thread, stack, state, CPU time (µs)
    ("jdk.ExecutionSample", 1001, "main", "java", "STATE_RUNNABLE", None),
    ("jdk.ExecutionSample", 2002, "odd", "java", "STATE_RUNNABLE", None),
    ("jdk.NativeMethodSample", 3003, "main", "native", "STATE_RUNNABLE", None),
    ("sampler.CPUSample", 4004, "gc", "gc", "STATE_RUNNABLE", 2500),
    ("jdk.ExecutionSample", 5005, "main", "java", "STATE_SLEEPING", None),
    ("jdk.ExecutionSample", 5505, "reborn", "java", "STATE_RUNNABLE", None),  # main's OS tid again
]
ALLOCATIONS = [  # µs after the start, thread, stack, objectClass, its package, weight (bytes)
    (6106, "main", "java", "[B", None, 524288),
    (6206, "odd", "java", "java/lang/String", "java/lang", 1000),
]
LOCKS = [  # type, µs after the start, thread, stack, its class field, the class (None: null), duration (µs)
    ("jdk.JavaMonitorEnter", 6306, "main", "java", "monitorClass", "java/lang/Object", 1500),
    ("jdk.ThreadPark", 6406, "odd", "java", "parkedClass", None, 250),
]
KEY_VALUES = [("sampler.Setting", 0, "interval", "1ms"), ("sampler.Summary", 6006, "samples", "6")]


def ns_of(text):
    """An ISO time as jfr prints it (2026-11-27T12:00Z, ...T12:00:00.001001Z) in ns since the epoch."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?Z", text or "")
    if not m:
        return None
    y, mo, d, h, mi = (int(x) for x in m.groups()[:5])
    s = calendar.timegm((y, mo, d, h, mi, int(m.group(6) or 0)))
    return s * 10**9 + int((m.group(7) or "").ljust(9, "0"))


def duration_us(text):
    """A java.time.Duration as jfr prints it (PT0.0025S) in µs."""
    m = re.fullmatch(r"PT(\d+)(?:\.(\d+))?S", text or "")
    return None if not m else int(m.group(1)) * 10**6 + int((m.group(2) or "").ljust(6, "0")[:6])


def jfr(*args):
    r = subprocess.run([JFR] + list(args), capture_output=True, timeout=240)
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    check(r.returncode == 0 and "error" not in err.lower() and "exception" not in out.lower(),
          f"jfr {' '.join(args[:-1])}: exit {r.returncode}, stderr {err[:400]!r}, stdout {out[:400]!r}")
    return out


tmp = tempfile.mkdtemp(prefix="jfrread")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # nothing left in /tmp
rec = os.path.join(tmp, "rec.jfr")
r = subprocess.run([FIXTURE, rec], capture_output=True, timeout=60)
if r.returncode != 0:
    print("FAIL: jfr_fixture:", r.returncode, r.stderr.decode())
    sys.exit(1)

# jfr summary: the version and each event type's count
summary = jfr("summary", rec)
check(re.search(r"Version: 2\.0\b", summary), "summary: version 2.0")
check(re.search(r"Start: 2026-11-27 12:00:00", summary), "summary: the start time")
counts = dict((m.group(1), int(m.group(2)))
              for m in re.finditer(r"^\s*([\w.]+)\s+(\d+)\s+\d+\s*$", summary, re.M))
want_counts = {"jdk.ExecutionSample": 4, "jdk.NativeMethodSample": 1, "sampler.CPUSample": 1,
               "sampler.Setting": 1, "sampler.Summary": 1, "jdk.Metadata": 1,
               "jdk.ObjectAllocationSample": len(ALLOCATIONS), "jdk.JavaMonitorEnter": 1, "jdk.ThreadPark": 1}
for name, n in want_counts.items():
    check(counts.get(name) == n, f"summary: {name} {counts.get(name)} events, want {n}")

# jfr print --json: every event's values
doc = json.loads(jfr("print", "--json", rec))
events = doc["recording"]["events"]
want_events = len(SAMPLES) + len(KEY_VALUES) + len(ALLOCATIONS) + len(LOCKS)
check(len(events) == want_events, f"print --json: {len(events)} events, want {want_events}")
by_type = {}
for e in events:
    by_type.setdefault(e["type"], []).append(e["values"])


def check_stack(where, got, key):
    frames, truncated = STACKS[key]
    check(got is not None and got.get("truncated") == truncated, f"{where}: truncated {truncated}")
    got_frames = (got or {}).get("frames") or []
    check(len(got_frames) == len(frames), f"{where}: {len(got_frames)} frames, want {len(frames)}")
    for i, (want, fr) in enumerate(zip(frames, got_frames)):
        method = fr.get("method") or {}
        cls = method.get("type") or {}
        have = (cls.get("name"), method.get("name"), method.get("descriptor"), fr.get("lineNumber"),
                fr.get("bytecodeIndex"), fr.get("type"))
        check(have == want, f"{where}: frame {i} is {have}, want {want}")
        pkg = want[0].rpartition("/")[0]
        got_pkg = (cls.get("package") or {}).get("name")
        check(got_pkg == (pkg or None), f"{where}: frame {i}'s package {got_pkg!r}, want {pkg!r}")


seen = {}
for type_, us, thread, stack, state, cpu_us in SAMPLES:
    k = seen[type_] = seen.get(type_, -1) + 1
    of_type = by_type.get(type_, [])
    got = of_type[k] if k < len(of_type) else None
    where = f"{type_} #{k} at {us} µs"
    if got is None:
        check(False, f"{where}: missing")
        continue
    check(ns_of(got.get("startTime")) == START_NS + us * 1000,
          f"{where}: startTime {got.get('startTime')}")
    check(got.get("sampledThread") == THREADS[thread],
          f"{where}: thread {got.get('sampledThread')}, want {THREADS[thread]}")
    check(got.get("state") == state, f"{where}: state {got.get('state')}, want {state}")
    check_stack(where, got.get("stackTrace"), stack)
    if cpu_us is not None:
        check(duration_us(got.get("cpuTime")) == cpu_us, f"{where}: cpuTime {got.get('cpuTime')}")
for type_, us, name, value in KEY_VALUES:
    got = (by_type.get(type_) or [{}])[0]
    check(ns_of(got.get("startTime")) == START_NS + us * 1000, f"{type_}: startTime {got.get('startTime')}")
    check((got.get("name"), got.get("value")) == (name, value), f"{type_}: {got}")

for k, (us, thread, stack, cls, pkg, weight) in enumerate(ALLOCATIONS):
    got = (by_type.get("jdk.ObjectAllocationSample") or [None] * (k + 1))[k] or {}
    where = f"jdk.ObjectAllocationSample #{k}"
    check(ns_of(got.get("startTime")) == START_NS + us * 1000, f"{where}: startTime {got.get('startTime')}")
    check(got.get("eventThread") == THREADS[thread], f"{where}: thread {got.get('eventThread')}")
    check((got.get("objectClass") or {}).get("name") == cls, f"{where}: objectClass {got.get('objectClass')}")
    got_pkg = ((got.get("objectClass") or {}).get("package") or {}).get("name")
    check(got_pkg == pkg, f"{where}: the class's package {got_pkg!r}, want {pkg!r}")
    check(got.get("weight") == weight, f"{where}: weight {got.get('weight')}, want {weight}")
    check_stack(where, got.get("stackTrace"), stack)

for type_, us, thread, stack, field, cls, dur in LOCKS:
    got = (by_type.get(type_) or [{}])[0] or {}
    where = type_
    check(ns_of(got.get("startTime")) == START_NS + us * 1000, f"{where}: startTime {got.get('startTime')}")
    check(got.get("eventThread") == THREADS[thread], f"{where}: thread {got.get('eventThread')}")
    check((got.get(field) or {}).get("name") == cls, f"{where}: {field} {got.get(field)}, want {cls}")
    check(duration_us(got.get("duration")) == dur, f"{where}: duration {got.get('duration')}, want {dur} µs")
    check_stack(where, got.get("stackTrace"), stack)

# jfr print: the text form (its own formatting of methods and threads) works too
text = jfr("print", rec)
for line in ("com.example.Hot.run\U0001F600() line: 40", "com.example.Main.main(String[]) line: 9",
             '"main" (javaThreadId = 1)', '"GC Thread#0" (osThreadId = 4250)'):
    check(line in text, f"print: no line {line!r}")

# Many distinct stacks: the constant pools span several checkpoint events (each is cut after
# 1 MiB), linked back one from the other; every sample still finds its stack.
MANY = 20000
many = os.path.join(tmp, "many.jfr")
r = subprocess.run([FIXTURE, many, str(MANY)], capture_output=True, timeout=120)
check(r.returncode == 0, f"jfr_fixture {MANY}: {r.returncode} {r.stderr.decode()}")
summary = jfr("summary", many)
counts = dict((m.group(1).lower(), int(m.group(2)))
              for m in re.finditer(r"^\s*([\w.]+)\s+(\d+)\s+\d+\s*$", summary, re.M))
# the precondition: more checkpoints than the small recording's one per pool type (8)
check(counts.get("jdk.checkpoint", 0) > 8, f"many: {counts.get('jdk.checkpoint')} checkpoints, want > 8")
check(counts.get("jdk.executionsample") == 4 + MANY,
      f"many: {counts.get('jdk.executionsample')} samples, want {4 + MANY}")
text = jfr("print", "--events", "jdk.ExecutionSample", many)
names = re.findall(r"com\.example\.Many\.m(\d{7})_0{56}\(\) line: 1", text)
check(sorted(int(n) for n in names) == list(range(MANY)),
      f"many: {len(names)} samples name their own stack, want {MANY}")

if failures:
    print(f"{len(failures)} failure(s) with {JFR}; the recordings are kept in {tmp}")
    sys.exit(1)
shutil.rmtree(tmp)
print(f"ok: {JFR} read {len(events)} events as written, and {MANY} distinct stacks whole")
