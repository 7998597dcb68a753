// Test programs whose right answer is known, for the JVM integration tests.
// Usage: java Scenarios <scenario> <seconds>
//   busyidle  two busy threads in distinct methods + 50 threads sleeping, waiting or parked
//   spin      a thread spinning on a volatile flag beside a busy thread
//   bursty    10 threads that wake every 5 ms for ~100 us of work, beside a busy thread
//   wakers    400 threads that wake every 50 ms for ~5 us of work (a few % of the CPU), beside
//             two busy threads
//   exit      busy, then System.exit(3) from a worker thread
//   forever   busy until killed; prints "started" once its threads run
//   lines     one thread in a method with a hot and a cool loop on separate lines
//   trig      one thread whose time goes into the Math.sin / Math.log intrinsic stubs
//   mega      one thread whose call site goes megamorphic 300 ms in, through a vtable stub made then
//   inline    one thread in a hot loop whose small callee the JIT inlines
//   inlinedeep one thread, "inline-deep", in a hot loop (deepCaller) whose small callee
//             (deepMiddle), inlined, calls a method the test keeps from being inlined
//             (-XX:CompileCommand=dontinline,Scenarios::deepLeaf): the time is in deepLeaf's own
//             code, under an inlined frame
//   allocsmall one thread allocating small arrays (with -Xint: a VM call each)
//   alloctruth two threads allocating known volumes (third argument: MB per part), 3:1 in
//             bytes: "alloc-three" small objects (allocTruthSmall, AllocTruthItem) and long[100]
//             arrays (allocTruthArrays), "alloc-one" byte[2 MB] arrays, too big for a TLAB
//             (allocTruthBig); prints "alloctruth <method> <bytes> <objects>" per method (its
//             bytes measured by ThreadMXBean.getThreadAllocatedBytes around each call)
//   locktruth for the seconds given, a "lock-holder-mon" thread holding a LockTruthMonitor's
//             monitor (holds of the third argument's us) and a "lock-holder-rl" a ReentrantLock
//             (the fourth's), each busy inside and ~0.3 ms out; the fifth argument's threads of
//             each kind enter them ("lock-mon-N" in lockTruthMonitor, "lock-rl-N" in
//             lockTruthReentrant), measuring their own waits (System.nanoTime around the
//             acquisition); prints "locktruth <method> <ns> <acquisitions>" per method
//   eventstogether busy-alpha and busy-beta computing for the seconds given, beside alloctruth
//             (third argument: its MB per part) and locktruth (fourth to sixth: its holds and
//             waiters) at once; prints what each of them prints
//   unload    one thread that loads Payload0..7 from the directory given as the third argument
//             through fresh class loaders, runs each hot for 30 ms and drops it (System.gc()
//             every 8 loads unloads them); prints "loaded N" and "unloaded N"
//   jni       one thread in a JNI C call chain (nw_outer -> nw_middle -> nw_leaf); the library's
//             path is the third argument
//   dlopen    one thread that dlopens, calls and dlcloses the library named by the fourth
//             argument in a loop (through the JNI library, third argument), beside a busy thread
//   gc        two threads allocating short- and medium-lived objects: the GC's threads work
//   jit       one thread loading Payload0..7 (directory: third argument) through fresh class
//             loaders and running each briefly: the JIT compiler threads work
//   mixed     Java compute, JNI compute and allocation side by side (JNI library: third argument)
//   sigblock  two busy Java threads beside two threads of the JNI library (third argument) that
//             block every signal: "sigblock" spins blocked the whole time, "sigunblock" the first
//             half and unblocked the second; and a Java thread, "jni-blocker", that computes in
//             Java for a fifth of the time, then blocks them in a native method and spins there
//             to the end; each prints "native <name> start_cpu=<ns> blocked_cpu=<ns>
//             total_cpu=<ns> queued=<n> timer=<n> sigq_start=<n> sigq=<n>" (its CPU as it
//             blocked them, unblocked them and at the end; the real-time signals queued to it
//             while blocked — sent, of timers —; the user's SigQ as it blocked and unblocked)
//   rename    a thread of the JNI library (third argument), made by the Java thread "join-rename":
//             it spins half the time under the name it inherited, then names itself
//             "renamed-late" and spins on; prints "native renamed-late start_cpu=<ns>
//             renamed_cpu=<ns> total_cpu=<ns>"
//   fullheap  aftergo's threads, once the heap was full (until the file given as the third
//             argument exists, then for the fourth argument's milliseconds) and let go
//   churn     two threads starting short-lived threads (~20 us of work each) one after another,
//             thousands a second; prints "threads N"
//   lifetimes two threads starting threads that compute for 2-30 ms each, one after another;
//             prints "threads N" and "lifetimes asked NS got NS" (their computing time, their CPU)
//   deopt     one thread calling through a MutableCallSite whose target it switches every
//             2,000 calls: each switch invalidates the compiled code that inlined the old one
//             (a deoptimization storm); prints "switches N"
//   soak      for long runs: a thread starting a short-lived thread every millisecond, one
//             loading, running and dropping Payload classes (directory: third argument), one
//             allocating, one computing; a fourth argument "threads" or "classes" keeps only
//             that churn (default "all")
//   wall      five threads, each spending its time one known way: computing while holding a
//             monitor (holder), blocked on entering that monitor (blocked), sleeping in
//             Thread.sleep (sleeper), parked in LockSupport.parkNanos (parker), waiting in
//             Object.wait (waiter)
//   names     threads with names JVMTI gives in modified UTF-8 or that break formats: "w" + U+1F680,
//             U+00E9 x 70 (140 bytes), and one with ; \n < > & " ' </script>; they run a method
//             named U+1D49C (a supplementary character: javac reads the escape) and a method of
//             a class named U+1D49C (defined from renamed bytes: its class file could not be
//             named on a file system without a UTF-8 locale); <seconds> count from when each
//             has had 100 ms of CPU ("names ready"; "names slow" after 60 s without)
//   phases    one thread, "phases", computing in phaseA for the first half of <seconds>, then in
//             phaseB for the second; prints "phase a <ms>", "phase b <ms>", "phase end <ms>"
//             (System.currentTimeMillis as each began, and at the end)
// At the end it prints one line per worker: "cpu <thread name> <ns>" (ThreadMXBean), the idle
// threads' CPU in all ("idle cpu <ns>", busyidle), and
// "result <n>" so runs with and without the agent can be compared.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

public class Scenarios {
    static volatile boolean stop;
    static volatile boolean flag;
    static final Object lock = new Object();
    static final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    static final List<Thread> workers = new ArrayList<>();
    static final long[] cpu = new long[512];
    static volatile long sink;

    static final Object held = new Object();
    static final Object waitOn = new Object();

    // ---- wall: one way of spending time per thread ----
    static void holdAndCompute() {
        synchronized (held) { sink += busyAlpha(); } // holds it to the end
    }

    static void blockOnMonitor() {
        while (!stop) {
            synchronized (held) { sink++; }
        }
    }

    static void sleepLoop() {
        while (!stop) {
            try { Thread.sleep(50); } catch (InterruptedException e) { return; }
        }
    }

    static void parkLoop() {
        while (!stop) LockSupport.parkNanos(50_000_000L);
    }

    static void waitLoop() {
        while (!stop) {
            synchronized (waitOn) {
                try { waitOn.wait(50); } catch (InterruptedException e) { return; }
            }
        }
    }

    // ---- busy methods: distinct, easy to find in a profile ----
    static long busyAlpha() {
        long h = 1;
        while (!stop) {
            for (int i = 0; i < 100_000; i++) h = h * 31 + i;
        }
        return h;
    }

    static long busyBeta() {
        double x = 1;
        while (!stop) {
            for (int i = 1; i < 100_000; i++) x = x * 1.0000001 + 1.0 / i;
        }
        return (long) x;
    }

    // Two loops of very different cost on lines of their own: with `lines`, the first one
    // (the line marked HOT) must get most of this method's samples.
    static long twoLoops() {
        long a = 1, b = 1;
        while (!stop) {
            for (int i = 0; i < 400_000; i++) { a = a * 6364136223846793005L + i; a ^= a >>> 17; } // HOT
            for (int i = 0; i < 20_000; i++) { b = b * 31 + i; }
        }
        return a + b;
    }

    // A thread whose time goes into intrinsic stubs (Math.sin, Math.log): AsyncGetCallTrace
    // cannot walk from inside them; the compiled-code map must recover these samples.
    static double trig() {
        double acc = 0, x = 0.5;
        while (!stop) {
            for (int i = 0; i < 10_000; i++) { acc += Math.sin(x) + Math.log(x + 1.0); x += 1e-7; }
        }
        return acc;
    }

    // A call made megamorphic after the run began: its receivers are four classes, so the
    // compiled caller goes through a vtable stub, which HotSpot makes at the call site's first
    // miss for the method's vtable index — high enough (the 40th of the base's methods) that no
    // call of the JDK made one before. Its time is the stub's dispatch and the tiny targets.
    static abstract class Mega {
        int m00(int x) { return x; } int m01(int x) { return x; } int m02(int x) { return x; }
        int m03(int x) { return x; } int m04(int x) { return x; } int m05(int x) { return x; }
        int m06(int x) { return x; } int m07(int x) { return x; } int m08(int x) { return x; }
        int m09(int x) { return x; } int m10(int x) { return x; } int m11(int x) { return x; }
        int m12(int x) { return x; } int m13(int x) { return x; } int m14(int x) { return x; }
        int m15(int x) { return x; } int m16(int x) { return x; } int m17(int x) { return x; }
        int m18(int x) { return x; } int m19(int x) { return x; } int m20(int x) { return x; }
        int m21(int x) { return x; } int m22(int x) { return x; } int m23(int x) { return x; }
        int m24(int x) { return x; } int m25(int x) { return x; } int m26(int x) { return x; }
        int m27(int x) { return x; } int m28(int x) { return x; } int m29(int x) { return x; }
        int m30(int x) { return x; } int m31(int x) { return x; } int m32(int x) { return x; }
        int m33(int x) { return x; } int m34(int x) { return x; } int m35(int x) { return x; }
        int m36(int x) { return x; } int m37(int x) { return x; } int m38(int x) { return x; }
        abstract int last(int x);
    }
    static final class MegaA extends Mega { int last(int x) { return x + 1; } }
    static final class MegaB extends Mega { int last(int x) { return x ^ 3; } }
    static final class MegaC extends Mega { int last(int x) { return x - 5; } }
    static final class MegaD extends Mega { int last(int x) { return x * 3; } }
    static long megaCalls(Mega[] ms, int n) {
        long acc = 0;
        for (int i = 0; i < n; i++) acc += ms[i & 3].last(i);
        return acc;
    }
    static long mega() throws InterruptedException {
        Thread.sleep(300); // the run's replay of the stubs is over
        Mega[] ms = {new MegaA(), new MegaB(), new MegaC(), new MegaD()};
        long acc = 0;
        while (!stop) acc += megaCalls(ms, 100_000);
        return acc;
    }

    // A small method the JIT inlines into its hot caller; its loop bound is not a constant, so
    // the loop is kept (not unrolled away) and the time is spent in the inlined code.
    static int stepRounds = 256;
    static long mixStep(long x) {
        for (int i = 0; i < stepRounds; i++) x = x * 6364136223846793005L + i;
        return x;
    }

    // Allocations too large for a thread-local buffer: each one leaves compiled Java code for
    // the VM (a C2 runtime stub, then the heap allocation and the zeroing in libjvm), where
    // AsyncGetCallTrace alone answers "unknown not Java".
    static long allocLoop() {
        long h = 0;
        while (!stop) {
            for (int i = 0; i < 100; i++) { long[] a = new long[(1 << 17) + i]; h += a.length + a[i]; }
        }
        return h;
    }

    // Small arrays, each one a call into the VM when interpreted (the template interpreter's
    // newarray always calls InterpreterRuntime::newarray): run with -Xint, the thread spends its
    // time entering and leaving VM calls (_thread_in_vm, then _thread_in_vm_trans on the way back).
    static long allocSmallLoop() {
        long h = 0;
        while (!stop) {
            for (int i = 0; i < 1000; i++) { long[] a = new long[1000 + (i & 7)]; h += a.length + a[i & 7]; }
        }
        return h;
    }

    // ---- alloctruth: known allocation volumes, one class per method ----
    static final class AllocTruthItem {
        long a, b;
        AllocTruthItem(long x) { a = x; b = ~x; }
    }
    static final Object[] allocKeep = new Object[4096]; // escapes: no allocation is optimized away

    static int allocTruthSmall(int k) {
        for (int i = 0; i < 2000; i++) allocKeep[(k + i) & 4095] = new AllocTruthItem(i);
        return 2000;
    }

    static int allocTruthArrays(int k) {
        for (int i = 0; i < 100; i++) allocKeep[(k + i) & 4095] = new long[100];
        return 100;
    }

    static int allocTruthBig(int k) {
        allocKeep[k & 4095] = new byte[2 << 20];
        return 1;
    }

    interface AllocStep { int run(int k); }

    // Calls each step in turn until the thread has allocated `limit` bytes; each step's bytes
    // (the thread's own counter around the call) and objects go into bytes[i] and objects[i].
    static void allocTruthThread(AllocStep[] steps, long limit, long[] bytes, long[] objects) {
        com.sun.management.ThreadMXBean m = (com.sun.management.ThreadMXBean) mx;
        long id = Thread.currentThread().getId(), start = m.getThreadAllocatedBytes(id), k = 0;
        while (m.getThreadAllocatedBytes(id) - start < limit) {
            for (int i = 0; i < steps.length; i++) {
                long before = m.getThreadAllocatedBytes(id);
                objects[i] += steps[i].run((int) k++);
                bytes[i] += m.getThreadAllocatedBytes(id) - before;
            }
        }
    }

    static void allocTruth(long mbPerPart) throws InterruptedException {
        long part = mbPerPart << 20;
        long[] threeBytes = new long[2], threeObjects = new long[2];
        long[] oneBytes = new long[1], oneObjects = new long[1];
        Thread three = new Thread(() -> allocTruthThread(new AllocStep[] {Scenarios::allocTruthSmall, Scenarios::allocTruthArrays},
                3 * part, threeBytes, threeObjects), "alloc-three");
        Thread one = new Thread(() -> allocTruthThread(new AllocStep[] {Scenarios::allocTruthBig}, part, oneBytes, oneObjects),
                "alloc-one");
        three.start();
        one.start();
        three.join();
        one.join();
        System.out.println("alloctruth allocTruthSmall " + threeBytes[0] + " " + threeObjects[0]);
        System.out.println("alloctruth allocTruthArrays " + threeBytes[1] + " " + threeObjects[1]);
        System.out.println("alloctruth allocTruthBig " + oneBytes[0] + " " + oneObjects[0]);
    }

    // ---- locktruth: known lock waits, a synchronized monitor and a ReentrantLock ----
    static final class LockTruthMonitor {}
    static final LockTruthMonitor lockTruthMon = new LockTruthMonitor();
    static final java.util.concurrent.locks.ReentrantLock lockTruthLock = new java.util.concurrent.locks.ReentrantLock();
    static volatile long lockTruthSink;

    // Holds the monitor for holdNanos at a time (busy: no park, no wait inside), then lets go
    // for ~0.3 ms, until the deadline.
    static void lockTruthHoldMonitor(long holdNanos, long deadline) {
        while (System.nanoTime() < deadline) {
            synchronized (lockTruthMon) {
                long end = System.nanoTime() + holdNanos;
                while (System.nanoTime() < end) lockTruthSink++;
            }
            long end = System.nanoTime() + 300_000;
            while (System.nanoTime() < end) lockTruthSink--;
        }
    }

    static void lockTruthHoldReentrant(long holdNanos, long deadline) {
        while (System.nanoTime() < deadline) {
            lockTruthLock.lock();
            try {
                long end = System.nanoTime() + holdNanos;
                while (System.nanoTime() < end) lockTruthSink++;
            } finally {
                lockTruthLock.unlock();
            }
            long end = System.nanoTime() + 300_000;
            while (System.nanoTime() < end) lockTruthSink--;
        }
    }

    // Enters the monitor again and again until the deadline; out[0] += the ns from before the
    // synchronized to inside it (the wait), out[1] += 1 per entry.
    static void lockTruthMonitor(long deadline, long[] out) throws InterruptedException {
        while (System.nanoTime() < deadline) {
            long t0 = System.nanoTime();
            synchronized (lockTruthMon) {
                out[0] += System.nanoTime() - t0;
                out[1]++;
            }
            Thread.sleep(0, 200_000);
        }
    }

    // The same for the ReentrantLock, and out[2] += the part of each wait the thread slept: the
    // wait less its CPU time and its time runnable but not running (the kernel's schedstat,
    // read around it). A park is timed from its call to its return, so what it records of a
    // wait lies between the two: a waiter that lost the lock to a barging holder ran (or, on a
    // busy host, waited for a CPU) between its parks. Without schedstat out[2] stays -1.
    static void lockTruthReentrant(long deadline, long[] out) throws InterruptedException {
        java.io.RandomAccessFile sched = null;
        try {
            sched = new java.io.RandomAccessFile("/proc/thread-self/schedstat", "r");
        } catch (java.io.IOException e) {
            out[2] = -1;
        }
        long[] before = new long[2], after = new long[2];
        byte[] buf = new byte[128];
        while (System.nanoTime() < deadline) {
            boolean timed = schedstat(sched, buf, before);
            long t0 = System.nanoTime();
            lockTruthLock.lock();
            try {
                long waited = System.nanoTime() - t0;
                out[0] += waited;
                out[1]++;
                if (timed && out[2] >= 0 && schedstat(sched, buf, after))
                    out[2] += Math.max(0, waited - (after[0] - before[0]) - (after[1] - before[1]));
                else
                    out[2] = -1;
            } finally {
                lockTruthLock.unlock();
            }
            Thread.sleep(0, 200_000);
        }
        if (sched != null) try { sched.close(); } catch (java.io.IOException e) { }
    }

    // The calling thread's ns on a CPU and ns runnable waiting for one (the first two fields of
    // /proc/thread-self/schedstat) into v; false when it cannot be read.
    static boolean schedstat(java.io.RandomAccessFile f, byte[] buf, long[] v) {
        if (f == null) return false;
        try {
            f.seek(0);
            int n = f.read(buf), field = 0;
            v[0] = v[1] = 0;
            for (int i = 0; i < n && field < 2; i++) {
                if (buf[i] == ' ') field++;
                else if (buf[i] >= '0' && buf[i] <= '9') v[field] = v[field] * 10 + (buf[i] - '0');
                else return false;
            }
            return field == 2;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    interface LockTruthStep { void run(long deadline, long[] out) throws InterruptedException; }

    // For `millis`: a holder of the monitor (holds of monitorHoldUs) and one of the ReentrantLock
    // (reentrantHoldUs), and `waiters` threads of each kind ("lock-mon-N" in lockTruthMonitor,
    // "lock-rl-N" in lockTruthReentrant) measuring their own waits; prints "locktruth <method>
    // <ns> <acquisitions>" per method (its threads summed).
    static void lockTruth(long millis, long monitorHoldUs, long reentrantHoldUs, int waiters) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        java.util.List<Thread> all = new java.util.ArrayList<>();
        all.add(new Thread(() -> lockTruthHoldMonitor(monitorHoldUs * 1000, deadline), "lock-holder-mon"));
        all.add(new Thread(() -> lockTruthHoldReentrant(reentrantHoldUs * 1000, deadline), "lock-holder-rl"));
        long[][] mon = new long[waiters][3], rl = new long[waiters][3];
        for (int i = 0; i < waiters; i++) {
            long[] m = mon[i], r = rl[i];
            all.add(new Thread(() -> { try { lockTruthMonitor(deadline, m); } catch (InterruptedException e) { } }, "lock-mon-" + i));
            all.add(new Thread(() -> { try { lockTruthReentrant(deadline, r); } catch (InterruptedException e) { } }, "lock-rl-" + i));
        }
        for (Thread t : all) t.start();
        for (Thread t : all) t.join();
        long[] m = new long[2], r = new long[3];
        for (int i = 0; i < waiters; i++) {
            m[0] += mon[i][0]; m[1] += mon[i][1];
            r[0] += rl[i][0]; r[1] += rl[i][1];
            r[2] = r[2] < 0 || rl[i][2] < 0 ? -1 : r[2] + rl[i][2];
        }
        System.out.println("locktruth lockTruthMonitor " + m[0] + " " + m[1]);
        System.out.println("locktruth lockTruthReentrant " + r[0] + " " + r[1] + " " + r[2]);
    }

    // ---- eventstogether: CPU, allocations and lock waits side by side ----
    // busy-alpha and busy-beta computing (workers: "cpu <name> <ns>" at the end), alloctruth's
    // two threads and locktruth's for `millis` (their own lines), all at once; the program ends
    // when the last of them has (the JVM waits for its threads).
    static void eventsTogether(long millis, long mbPerPart, long monitorHoldUs, long reentrantHoldUs, int waiters) {
        worker("busy-alpha", () -> sink += busyAlpha());
        worker("busy-beta", () -> sink += busyBeta());
        new Thread(() -> {
            try { lockTruth(millis, monitorHoldUs, reentrantHoldUs, waiters); } catch (InterruptedException e) { }
        }, "lock-main").start();
        new Thread(() -> {
            try { allocTruth(mbPerPart); } catch (InterruptedException e) { }
        }, "alloc-main").start();
    }

    static long deepCaller() {
        long h = 1;
        while (!stop) {
            for (int i = 0; i < 1_000; i++) h = deepMiddle(h ^ i);
        }
        return h;
    }

    static long deepMiddle(long x) { return deepLeaf(x + 1) ^ x; }

    static long deepLeaf(long x) { return mixStep(x); }

    static long inlineCaller() {
        long h = 1;
        while (!stop) {
            for (int i = 0; i < 10_000; i++) h = mixStep(h ^ i);
        }
        return h;
    }

    // Loads Payload0..7 from dir through fresh class loaders, one after the other, and runs each
    // for `nanos`; with gcEvery > 0, System.gc() after every gcEvery loads unloads the old ones.
    static long loadAndRun(String dir, long nanos, int gcEvery) {
        long h = 0;
        int n = 0;
        try {
            java.net.URL[] path = {new java.io.File(dir).toURI().toURL()};
            while (!stop) {
                try (java.net.URLClassLoader loader = new java.net.URLClassLoader(path, ClassLoader.getPlatformClassLoader())) {
                    Object p = loader.loadClass("Payload" + (n % 8)).getDeclaredConstructor().newInstance();
                    h += ((java.util.function.LongUnaryOperator) p).applyAsLong(nanos);
                }
                if (++n % Math.max(gcEvery, 1) == 0 && gcEvery > 0) System.gc();
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
        if (gcEvery > 0) {
            System.gc();
            System.out.println("loaded " + n);
            System.out.println("unloaded " + ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
        }
        return h;
    }

    static native long nativeSpin(long millis);
    static native void holdSigprof();
    static native long dlopenStorm(String path, long millis);

    static long nativeLoop() {
        long h = 0;
        while (!stop) h += nativeSpin(20);
        return h;
    }

    static native int sigBlockSpin(String name, long blockMillis, long totalMillis, long[] out);

    static void sigBlocker(String name, long blockMillis, long totalMillis) {
        long[] out = new long[7];
        int rc = sigBlockSpin(name, blockMillis, totalMillis, out);
        if (rc != 0) throw new RuntimeException("sigBlockSpin " + name + ": error " + rc);
        if (name == null) name = Thread.currentThread().getName();
        System.out.println("native " + name + " start_cpu=" + out[0] + " blocked_cpu=" + out[1]
                + " total_cpu=" + out[2] + " queued=" + out[3] + " timer=" + out[4]
                + " sigq_start=" + out[5] + " sigq=" + out[6]);
    }

    static native int renameSpin(String name, long beforeMillis, long totalMillis, long[] out);

    static void renamer(String name, long beforeMillis, long totalMillis) {
        long[] out = new long[3];
        int rc = renameSpin(name, beforeMillis, totalMillis, out);
        if (rc != 0) throw new RuntimeException("renameSpin " + name + ": error " + rc);
        System.out.println("native " + name + " start_cpu=" + out[0] + " renamed_cpu=" + out[1]
                + " total_cpu=" + out[2]);
    }

    static long dlopenLoop(String lib) {
        long rounds = 0;
        while (!stop) rounds += dlopenStorm(lib, 50);
        System.out.println("dlopen rounds " + rounds);
        return rounds;
    }

    // Objects that live a little (a ring of 4096 arrays) and many that die at once: young and
    // mixed collections for the GC threads to do.
    static long churn() {
        Object[] ring = new Object[4096];
        long n = 0;
        while (!stop) {
            for (int i = 0; i < 1000; i++) {
                byte[] b = new byte[64 + (i & 255)];
                b[0] = (byte) i;
                if ((i & 7) == 0) ring[(int) (n++ & 4095)] = b;
            }
        }
        return n;
    }

    static void spinOnFlag() {
        while (!flag) { } // C2: a loop whose registers do not change
    }

    static long burstWork(long seed) {
        // ~100 us of work
        long h = seed;
        long end = System.nanoTime() + 100_000;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 200; i++) h = h * 6364136223846793005L + 1442695040888963407L;
        }
        return h;
    }

    static void bursty() {
        long h = 0;
        while (!stop) {
            h += burstWork(h);
            LockSupport.parkNanos(5_000_000);
        }
        sink += h;
    }

    static long wakeWork(long seed) {
        // ~5 us of work
        long h = seed;
        for (int i = 0; i < 2_000; i++) h = h * 6364136223846793005L + 1442695040888963407L;
        return h;
    }

    static void wakeLoop() {
        long h = 0;
        while (!stop) {
            LockSupport.parkNanos(50_000_000);
            h += wakeWork(h);
        }
        sink += h;
    }

    // ---- torture: thread churn, deoptimization ----
    static final java.util.concurrent.atomic.AtomicLong started = new java.util.concurrent.atomic.AtomicLong();

    static long churnWork() {
        long h = 7;
        for (int i = 0; i < 20_000; i++) h = h * 31 + i;
        return h;
    }

    static void spawnThreads() {
        while (!stop) {
            Thread t = new Thread(() -> sink += churnWork());
            t.start();
            started.incrementAndGet();
            try { t.join(); } catch (InterruptedException e) { return; }
        }
    }

    /* Threads that compute for 2 to 30 ms and end, one after another: busy at the sampler's
     * looks, and often ending with a request open. */
    // what the lifetime threads asked for (the wall time they computed) and got (their CPU)
    static final java.util.concurrent.atomic.AtomicLong lifeAsked = new java.util.concurrent.atomic.AtomicLong();
    static final java.util.concurrent.atomic.AtomicLong lifeGot = new java.util.concurrent.atomic.AtomicLong();

    static void spawnBusyThreads(int seed) {
        java.util.Random r = new java.util.Random(seed);
        while (!stop) {
            long ns = 2_000_000L + r.nextInt(28_000_000);
            Thread t = new Thread(() -> {
                sink += computeFor(ns);
                lifeAsked.addAndGet(ns);
                lifeGot.addAndGet(mx.getCurrentThreadCpuTime());
            }, "lifetime");
            t.start();
            started.incrementAndGet();
            try { t.join(); } catch (InterruptedException e) { return; }
        }
    }

    static long computeFor(long ns) {
        long end = System.nanoTime() + ns, h = 1;
        while (System.nanoTime() < end)
            for (int i = 0; i < 1000; i++) h = h * 31 + i;
        return h;
    }

    static long deoptTargetA(long x) { return x * 3 + 1; }
    static long deoptTargetB(long x) { return x * 5 + 2; }
    static long switches;

    static long deoptStorm() {
        try {
            java.lang.invoke.MethodHandles.Lookup l = java.lang.invoke.MethodHandles.lookup();
            java.lang.invoke.MethodType t = java.lang.invoke.MethodType.methodType(long.class, long.class);
            java.lang.invoke.MethodHandle a = l.findStatic(Scenarios.class, "deoptTargetA", t);
            java.lang.invoke.MethodHandle b = l.findStatic(Scenarios.class, "deoptTargetB", t);
            java.lang.invoke.MutableCallSite site = new java.lang.invoke.MutableCallSite(a);
            java.lang.invoke.MethodHandle call = site.dynamicInvoker();
            long h = 0;
            while (!stop) {
                for (int i = 0; i < 2_000; i++) h += (long) call.invokeExact(h + i);
                site.setTarget(++switches % 2 == 0 ? a : b); // the code that inlined the target is invalidated
            }
            return h;
        } catch (Throwable e) {
            throw new RuntimeException(e);
        }
    }

    // ---- names: non-ASCII and format-breaking names (each name is built from escapes so that
    // the source stays ASCII and javac needs no -encoding) ----
    static long \uD835\uDC9C() { // the method U+1D49C
        long h = 1;
        while (!stop) {
            for (int i = 0; i < 100_000; i++) h = h * 31 + i;
        }
        return h;
    }

    // The class U+1D49C: QqQqQq's bytes with its 6-byte name replaced by its modified UTF-8 (the
    // constant pool's length fields stay right), defined by a loader of its own.
    static long runClassA() {
        try (java.io.InputStream in = Scenarios.class.getResourceAsStream("/QqQqQq.class")) {
            byte[] b = in.readAllBytes(), from = "QqQqQq".getBytes("US-ASCII");
            byte[] to = {(byte) 0xED, (byte) 0xA0, (byte) 0xB5, (byte) 0xED, (byte) 0xB2, (byte) 0x9C};
            int renamed = 0;
            for (int i = 0; i + from.length <= b.length; i++)
                if (java.util.Arrays.equals(b, i, i + from.length, from, 0, from.length)) {
                    System.arraycopy(to, 0, b, i, to.length);
                    renamed++;
                }
            if (renamed == 0) throw new IllegalStateException("QqQqQq not found in its class file");
            Class<?> c = new ClassLoader(Scenarios.class.getClassLoader()) {
                Class<?> define() { return defineClass(null, b, 0, b.length); }
            }.define();
            if (!c.getName().equals("\uD835\uDC9C")) throw new IllegalStateException("defined " + c.getName());
            java.lang.reflect.Method busy = c.getMethod("busy", java.util.function.BooleanSupplier.class);
            busy.setAccessible(true); // another loader's class: another runtime package
            return (long) busy.invoke(null, (java.util.function.BooleanSupplier) () -> stop);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    // Returns once every worker has had 100 ms of CPU (or after 60 s): on a busy machine the
    // profile still holds each of them; prints "names ready" (or "names slow").
    static void namesRunning() throws InterruptedException {
        long giveUp = System.nanoTime() + 60_000_000_000L;
        boolean ready = true;
        for (Thread t : workers) {
            while (mx.getThreadCpuTime(t.getId()) < 100_000_000L && System.nanoTime() < giveUp) Thread.sleep(10);
            ready &= mx.getThreadCpuTime(t.getId()) >= 100_000_000L;
        }
        System.out.println(ready ? "names ready" : "names slow");
    }

    // ---- phases: one method, then another (the page's time axis) ----
    static long phaseA(long until) {
        long h = 1;
        while (System.currentTimeMillis() < until && !stop) {
            for (int i = 0; i < 20_000; i++) h = h * 31 + i;
        }
        return h;
    }

    static long phaseB(long until) {
        double x = 1;
        while (System.currentTimeMillis() < until && !stop) {
            for (int i = 1; i < 20_000; i++) x = x * 1.0000001 + 1.0 / i;
        }
        return (long) x;
    }

    static long phases(long millis) {
        long a = System.currentTimeMillis();
        System.out.println("phase a " + a);
        long h = phaseA(a + millis / 2);
        long b = System.currentTimeMillis();
        System.out.println("phase b " + b);
        h += phaseB(b + millis / 2);
        System.out.println("phase end " + System.currentTimeMillis());
        return h;
    }

    static Thread worker(String name, Runnable r) {
        final int idx = workers.size();
        Thread t = new Thread(() -> {
            r.run();
            cpu[idx] = mx.getCurrentThreadCpuTime();
        }, name);
        workers.add(t);
        return t;
    }

    static final List<Thread> idlers = new ArrayList<>();

    static void idleThreads(int n) {
        for (int i = 0; i < n; i++) {
            Thread t;
            switch (i % 3) {
                case 0: t = new Thread(() -> { try { Thread.sleep(1_000_000); } catch (InterruptedException e) { } }, "idle-sleep-" + i); break;
                case 1: t = new Thread(() -> { synchronized (lock) { try { lock.wait(); } catch (InterruptedException e) { } } }, "idle-wait-" + i); break;
                default: t = new Thread(() -> { while (!stop) LockSupport.park(); }, "idle-park-" + i); break;
            }
            t.setDaemon(true);
            idlers.add(t);
            t.start();
        }
    }

    /* aftergo: what a failed attach's leftovers would meet. Until the file `go` exists the program
     * starts no thread (the test counts them to set a thread limit); then, for the scenario's
     * seconds, threads start and end (ThreadStart/ThreadEnd), the heap fills and is collected
     * (safepoints: compiled code's polls fault into the SIGSEGV handler) and a null check in
     * compiled code fails now and then (an implicit one: a SIGSEGV too). */
    static volatile boolean going;
    static volatile Object maybeNull = new Object();

    static void awaitGo(String go) throws InterruptedException {
        while (!new java.io.File(go).exists()) Thread.sleep(50);
        going = true;
    }

    /* fullheap: aftergo's threads; first, once the file given as the third argument exists, the
     * heap is filled until not even the smallest array fits, and held full for `hold` ms (the
     * fourth argument) without allocating — "heap full" is written then, through a stream and
     * bytes made before — then let go: the threads start, as aftergo's after `go`. */
    static volatile Object hoard;

    static void fillHeap(String fill, long holdMs) throws Exception {
        java.io.File f = new java.io.File(fill);
        while (!f.exists()) Thread.sleep(50);
        java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);
        byte[] said = "heap full\n".getBytes(), freed = "heap freed\n".getBytes();
        Object chain = null;
        for (int k = 1 << 18; k >= 1; k >>= 1) {
            try {
                for (;;) {
                    Object[] n = new Object[k];
                    n[0] = chain;
                    chain = n;
                }
            } catch (OutOfMemoryError e) {
                // the next size down
            }
        }
        hoard = chain;
        out.write(said);
        Thread.sleep(holdMs);
        hoard = null;
        chain = null;
        System.gc();
        out.write(freed);
        going = true;
    }

    static void afterGo() {
        while (!going && !stop) LockSupport.parkNanos(50_000_000L);
        long failed = 0, npes = 0, k = 0;
        while (!stop) {
            Thread t = new Thread(() -> sink += 1, "short-lived");
            try {
                t.start();
                t.join();
            } catch (OutOfMemoryError e) {
                failed++; // a thread limit still in force
            } catch (InterruptedException e) {
                return;
            }
            for (int i = 0; i < 64; i++) sink += new byte[64 * 1024].length;
            maybeNull = (++k & 7) == 0 ? null : new Object();
            try {
                sink += maybeNull.hashCode();
            } catch (NullPointerException e) {
                npes++;
            }
        }
        System.out.println("aftergo threads not started " + failed + ", null checks failed " + npes);
    }

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        long millis = (long) (Double.parseDouble(args.length > 1 ? args[1] : "5") * 1000);
        switch (scenario) {
            case "busyidle":
                idleThreads(50);
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("busy-beta", () -> sink += busyBeta());
                break;
            case "spin":
                worker("spinner", Scenarios::spinOnFlag);
                worker("busy-alpha", () -> sink += busyAlpha());
                break;
            case "bursty":
                for (int i = 0; i < 10; i++) worker("bursty-" + i, Scenarios::bursty);
                worker("busy-alpha", () -> sink += busyAlpha());
                break;
            case "wakers":
                for (int i = 0; i < 400; i++) worker("waker-" + i, Scenarios::wakeLoop);
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("busy-beta", () -> sink += busyBeta());
                break;
            case "trig":
                worker("trig", () -> sink += (long) trig());
                break;
            case "mega":
                worker("mega", () -> { try { sink += mega(); } catch (InterruptedException e) { } });
                break;
            case "inline":
                worker("inline", () -> sink += inlineCaller());
                break;
            case "inlinedeep":
                worker("inline-deep", () -> sink += deepCaller());
                break;
            case "alloc":
                worker("alloc", () -> sink += allocLoop());
                break;
            case "alloctruth":
                allocTruth(Long.parseLong(args[2]));
                break;
            case "locktruth": // <seconds> <monitor hold us> <reentrant hold us> <waiters of each>
                lockTruth(millis, Long.parseLong(args[2]), Long.parseLong(args[3]), Integer.parseInt(args[4]));
                break;
            case "eventstogether": { // <seconds> <MB per part> <monitor hold us> <reentrant hold us> <waiters>
                eventsTogether(millis, Long.parseLong(args[2]), Long.parseLong(args[3]), Long.parseLong(args[4]),
                        Integer.parseInt(args[5]));
                break;
            }
            case "allocsmall":
                worker("allocsmall", () -> sink += allocSmallLoop());
                break;
            case "unload":
                worker("unload", () -> sink += loadAndRun(args[2], 30_000_000L, 8));
                break;
            case "lines":
                worker("lines", () -> sink += twoLoops());
                break;
            case "jni":
                System.load(args[2]);
                worker("jni", () -> sink += nativeLoop());
                break;
            case "dlopen":
                System.load(args[2]);
                worker("dlopen", () -> sink += dlopenLoop(args[3]));
                worker("busy-alpha", () -> sink += busyAlpha());
                break;
            case "gc":
                worker("churn-0", () -> sink += churn());
                worker("churn-1", () -> sink += churn());
                break;
            case "jit":
                worker("jit", () -> sink += loadAndRun(args[2], 3_000_000L, 0)); // fresh code, compiled again and again
                break;
            case "mixed":
                System.load(args[2]);
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("jni", () -> sink += nativeLoop());
                worker("churn-0", () -> sink += churn());
                break;
            case "sigblock": {
                System.load(args[2]);
                final long total = millis;
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("busy-beta", () -> sink += busyBeta());
                worker("join-sigblock", () -> sigBlocker("sigblock", total, total));
                worker("join-sigunblock", () -> sigBlocker("sigunblock", total / 2, total));
                worker("jni-blocker", () -> { // busy in Java first: its samples may come from its CPU-time timer
                    long end = System.nanoTime() + total / 5 * 1_000_000L, h = 1;
                    while (System.nanoTime() < end) for (int i = 0; i < 10_000; i++) h = h * 31 + i;
                    sink += h;
                    sigBlocker(null, total - total / 5, total - total / 5);
                });
                break;
            }
            case "rename": {
                System.load(args[2]);
                final long total = millis;
                worker("join-rename", () -> renamer("renamed-late", total / 2, total));
                break;
            }
            case "aftergo":
            case "fullheap":
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("after-go", Scenarios::afterGo);
                break;
            case "sigprof": // another library holds SIGPROF; threads start and end all the time
                System.load(args[2]);
                holdSigprof();
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("churn-threads", () -> {
                    while (!stop) {
                        Thread t = new Thread(() -> sink += 1);
                        t.start();
                        try { t.join(); Thread.sleep(5); } catch (InterruptedException e) { return; }
                    }
                });
                millis = Long.MAX_VALUE / 2;
                break;
            case "churn":
                worker("spawner-0", Scenarios::spawnThreads);
                worker("spawner-1", Scenarios::spawnThreads);
                break;
            case "deopt":
                worker("deopt", () -> sink += deoptStorm());
                break;
            case "lifetimes":
                worker("spawner-0", () -> spawnBusyThreads(0));
                worker("spawner-1", () -> spawnBusyThreads(1));
                break;
            case "soak": {
                String keep = args.length > 3 ? args[3] : "all";
                if (!keep.equals("all") && !keep.equals("threads") && !keep.equals("classes")) {
                    System.err.println("soak: churn must be all, threads or classes, not " + keep);
                    System.exit(2);
                }
                if (!keep.equals("classes")) worker("spawner", () -> {
                    while (!stop) {
                        Thread t = new Thread(() -> sink += churnWork());
                        t.start();
                        started.incrementAndGet();
                        try { t.join(); Thread.sleep(1); } catch (InterruptedException e) { return; }
                    }
                });
                if (!keep.equals("threads")) worker("unload", () -> sink += loadAndRun(args[2], 30_000_000L, 8));
                worker("churn-0", () -> sink += churn());
                worker("busy-alpha", () -> sink += busyAlpha());
                break;
            }
            case "wall":
                worker("holder", Scenarios::holdAndCompute);
                worker("blocked", Scenarios::blockOnMonitor);
                worker("sleeper", Scenarios::sleepLoop);
                worker("parker", Scenarios::parkLoop);
                worker("waiter", Scenarios::waitLoop);
                break;
            case "names":
                worker("w\uD83D\uDE80", () -> sink += \uD835\uDC9C());
                worker("\u00e9".repeat(70), () -> sink += runClassA());
                worker("a;b\nc<d>&\"e'</script> 12", () -> sink += busyAlpha());
                break;
            case "phases": {
                final long half = millis;
                worker("phases", () -> sink += phases(half));
                break;
            }
            case "vmflag": { // <seconds> <flag>: its value after that long, as the JVM's management interface reads it
                try { Thread.sleep(millis); } catch (InterruptedException e) { throw new RuntimeException(e); }
                System.out.println("vmflag " + args[2] + " " + java.lang.management.ManagementFactory
                        .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                        .getVMOption(args[2]).getValue());
                break;
            }
            case "exit":
            case "forever":
                worker("busy-alpha", () -> sink += busyAlpha());
                worker("busy-beta", () -> sink += busyBeta());
                break;
            default:
                System.err.println("unknown scenario " + scenario);
                System.exit(2);
        }
        for (Thread t : workers) t.start();
        if (scenario.equals("names")) namesRunning();
        if (scenario.equals("alloc")) { // "started", for a test that signals it (case_marks)
            System.out.println("started");
            System.out.flush();
        }
        if (scenario.equals("forever")) { // "started": its threads run (a busy machine can take seconds)
            System.out.println("started");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
        if (scenario.equals("aftergo")) awaitGo(args[2]);
        if (scenario.equals("fullheap")) fillHeap(args[2], Long.parseLong(args[3]));
        if (scenario.equals("aftergo") || scenario.equals("fullheap")) {
            // until the test says so (the file named by the third argument + ".end") or `millis`
            // at most: a busy machine can take longer than any fixed lifetime to attach
            java.io.File end = new java.io.File(args[2] + ".end");
            for (long t = 0; t < millis && !end.exists(); t += 50) Thread.sleep(50);
        } else {
            Thread.sleep(millis);
        }
        if (scenario.equals("exit")) {
            System.out.println("exiting");
            System.out.flush();
            System.exit(3);
        }
        stop = true;
        flag = true;
        LockSupport.unpark(null);
        for (Thread t : workers) t.join();
        for (int i = 0; i < workers.size(); i++) System.out.println("cpu " + workers.get(i).getName() + " " + cpu[i]);
        if (scenario.equals("churn") || scenario.equals("soak") || scenario.equals("lifetimes"))
            System.out.println("threads " + started.get());
        if (scenario.equals("lifetimes")) System.out.println("lifetimes asked " + lifeAsked.get() + " got " + lifeGot.get());
        if (scenario.equals("deopt")) System.out.println("switches " + switches);
        if (!idlers.isEmpty()) { // the idle threads' CPU: their start, and whatever woke them
            long idle = 0;
            for (Thread t : idlers) idle += Math.max(0, mx.getThreadCpuTime(t.getId()));
            System.out.println("idle cpu " + idle);
        }
        System.out.println("result done");
    }
}

// Renamed to U+1D49C as it is loaded (Scenarios.runClassA), in a runtime package of its own.
class QqQqQq {
    public static long busy(java.util.function.BooleanSupplier stop) {
        long h = 7;
        while (!stop.getAsBoolean()) {
            for (int i = 0; i < 100_000; i++) h = h * 37 + i;
        }
        return h;
    }
}
