// SPECjvm2008-style CPU workloads for the overhead benchmark (bench/overhead.py).
//
//   java Workloads <workload> [--threads N] [--idle N] [--warmup S] [--seconds S]
//
// workloads: compress (LZ77 + Huffman-size estimate), crypto (AES-CTR + SHA-256),
// scimark (FFT, SOR, LU, Monte Carlo, sparse mat-mult), serial (ObjectOutputStream round trips),
// mix (all of them, one per thread in turn).
// --idle N starts N extra threads that stay sleeping, waiting or parked for the whole run.
// Prints "ops_per_s=<throughput> ops=<n> checksum=<hash of the results>" at the end; the checksum
// depends only on the work done per operation, so runs with and without a profiler compare.
import java.io.*;
import java.security.MessageDigest;
import java.util.*;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

public class Workloads {
    static volatile boolean measuring, stop;
    static final AtomicLong ops = new AtomicLong();
    static final Object lock = new Object();
    static final int CHECKED = 200;

    interface Op { long run(int i) throws Exception; }

    // ---- compress: LZ77 with a hash chain, then a Huffman code-length estimate ----
    static final byte[] TEXT = makeText(1 << 16);

    static byte[] makeText(int n) {
        Random r = new Random(42);
        String[] words = {"profiler", "sample", "thread", "stack", "frame", "method", "java", "cpu", "flame", "graph", "the", "of", "and"};
        StringBuilder sb = new StringBuilder();
        while (sb.length() < n) sb.append(words[r.nextInt(words.length)]).append(r.nextInt(10) == 0 ? ".\n" : " ");
        return sb.substring(0, n).getBytes();
    }

    static long compress(int seed) {
        byte[] in = TEXT;
        int[] head = new int[1 << 12];
        Arrays.fill(head, -1);
        int[] prev = new int[in.length];
        long[] freq = new long[512];
        int i = 0;
        while (i < in.length - 3) {
            int h = ((in[i] & 0xff) << 4 ^ (in[i + 1] & 0xff) << 2 ^ (in[i + 2] & 0xff) ^ seed) & 0xfff;
            int best = 0, cand = head[h], chain = 0;
            while (cand >= 0 && chain++ < 16) {
                int l = 0;
                while (i + l < in.length && l < 258 && in[cand + l] == in[i + l]) l++;
                if (l > best) best = l;
                cand = prev[cand];
            }
            prev[i] = head[h];
            head[h] = i;
            if (best >= 3) { freq[256 + Math.min(best, 255)]++; i += best; } else { freq[in[i] & 0xff]++; i++; }
        }
        PriorityQueue<Long> pq = new PriorityQueue<>();
        for (long f : freq) if (f > 0) pq.add(f);
        long bits = 0;
        while (pq.size() > 1) { long a = pq.poll(), b = pq.poll(); bits += a + b; pq.add(a + b); }
        return bits;
    }

    // ---- crypto ----
    static final ThreadLocal<Cipher> CIPHER = ThreadLocal.withInitial(() -> {
        try {
            Cipher c = Cipher.getInstance("AES/CTR/NoPadding");
            c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(new byte[16], "AES"), new IvParameterSpec(new byte[16]));
            return c;
        } catch (Exception e) { throw new RuntimeException(e); }
    });
    static final ThreadLocal<MessageDigest> SHA = ThreadLocal.withInitial(() -> {
        try { return MessageDigest.getInstance("SHA-256"); } catch (Exception e) { throw new RuntimeException(e); }
    });

    static long crypto(int seed) throws Exception {
        byte[] data = Arrays.copyOf(TEXT, 16384);
        data[0] = (byte) seed;
        byte[] enc = CIPHER.get().update(data);
        byte[] d = SHA.get().digest(enc);
        return ((d[0] & 0xffL) << 8) | (d[1] & 0xff);
    }

    // ---- scimark ----
    static long fft(int seed) {
        int n = 1024;
        double[] re = new double[n], im = new double[n];
        for (int i = 0; i < n; i++) re[i] = Math.sin(i + seed);
        for (int i = 1, j = 0; i < n; i++) {
            int bit = n >> 1;
            for (; (j & bit) != 0; bit >>= 1) j ^= bit;
            j ^= bit;
            if (i < j) { double t = re[i]; re[i] = re[j]; re[j] = t; t = im[i]; im[i] = im[j]; im[j] = t; }
        }
        for (int len = 2; len <= n; len <<= 1) {
            double ang = -2 * Math.PI / len, wr = Math.cos(ang), wi = Math.sin(ang);
            for (int i = 0; i < n; i += len) {
                double cr = 1, ci = 0;
                for (int k = 0; k < len / 2; k++) {
                    int a = i + k, b = a + len / 2;
                    double xr = re[b] * cr - im[b] * ci, xi = re[b] * ci + im[b] * cr;
                    re[b] = re[a] - xr; im[b] = im[a] - xi; re[a] += xr; im[a] += xi;
                    double t = cr * wr - ci * wi; ci = cr * wi + ci * wr; cr = t;
                }
            }
        }
        return (long) (Math.abs(re[1]) * 1000);
    }

    static long sor(int seed) {
        int n = 64;
        double[][] g = new double[n][n];
        g[seed % n][seed % n] = 1;
        for (int it = 0; it < 10; it++)
            for (int i = 1; i < n - 1; i++)
                for (int j = 1; j < n - 1; j++)
                    g[i][j] = 0.3125 * (g[i - 1][j] + g[i + 1][j] + g[i][j - 1] + g[i][j + 1]) - 0.25 * g[i][j];
        return (long) (g[n / 2][n / 2] * 1e12);
    }

    static long lu(int seed) {
        int n = 48;
        double[][] a = new double[n][n];
        Random r = new Random(seed);
        for (double[] row : a) for (int j = 0; j < n; j++) row[j] = r.nextDouble();
        for (int k = 0; k < n; k++) {
            int p = k;
            for (int i = k + 1; i < n; i++) if (Math.abs(a[i][k]) > Math.abs(a[p][k])) p = i;
            double[] t = a[k]; a[k] = a[p]; a[p] = t;
            for (int i = k + 1; i < n; i++) {
                double f = a[i][k] / a[k][k];
                for (int j = k; j < n; j++) a[i][j] -= f * a[k][j];
            }
        }
        return (long) (a[n - 1][n - 1] * 1e6);
    }

    static long monteCarlo(int seed) {
        Random r = new Random(seed);
        int under = 0;
        for (int i = 0; i < 20000; i++) { double x = r.nextDouble(), y = r.nextDouble(); if (x * x + y * y <= 1) under++; }
        return under;
    }

    static long sparse(int seed) {
        int n = 2000, nz = 10000;
        Random r = new Random(seed);
        int[] row = new int[nz], col = new int[nz];
        double[] val = new double[nz], x = new double[n], y = new double[n];
        for (int i = 0; i < nz; i++) { row[i] = r.nextInt(n); col[i] = r.nextInt(n); val[i] = r.nextDouble(); }
        Arrays.fill(x, 1);
        for (int it = 0; it < 10; it++) for (int i = 0; i < nz; i++) y[row[i]] += val[i] * x[col[i]];
        return (long) y[0];
    }

    static long scimark(int i) {
        switch (i % 5) {
            case 0: return fft(i);
            case 1: return sor(i);
            case 2: return lu(i);
            case 3: return monteCarlo(i);
            default: return sparse(i);
        }
    }

    // ---- serial ----
    static class Rec implements Serializable {
        int id; String name; double[] values; List<Rec> children = new ArrayList<>();
        Rec(int id) { this.id = id; name = "rec-" + id; values = new double[8]; for (int k = 0; k < 8; k++) values[k] = id * k; }
    }

    static long serial(int seed) throws Exception {
        Rec root = new Rec(seed);
        for (int k = 0; k < 40; k++) { Rec c = new Rec(k); root.children.add(c); for (int m = 0; m < 3; m++) c.children.add(new Rec(k * 10 + m)); }
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (ObjectOutputStream oos = new ObjectOutputStream(bos)) { oos.writeObject(root); }
        try (ObjectInputStream ois = new ObjectInputStream(new ByteArrayInputStream(bos.toByteArray()))) {
            Rec back = (Rec) ois.readObject();
            return back.children.size() + back.children.get(7).children.get(2).id;
        }
    }

    static Op op(String w, int t) {
        switch (w) {
            case "compress": return Workloads::compress;
            case "crypto": return Workloads::crypto;
            case "scimark": return Workloads::scimark;
            case "serial": return Workloads::serial;
            case "mix": {
                Op[] all = {Workloads::compress, Workloads::crypto, Workloads::scimark, Workloads::serial};
                return all[t % all.length];
            }
            default: throw new IllegalArgumentException("unknown workload " + w + " (compress, crypto, scimark, serial, mix)");
        }
    }

    static void idle(int n) {
        for (int i = 0; i < n; i++) {
            Thread t;
            switch (i % 3) {
                case 0: t = new Thread(() -> { try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { } }, "idle-sleep-" + i); break;
                case 1: t = new Thread(() -> { synchronized (lock) { try { lock.wait(); } catch (InterruptedException e) { } } }, "idle-wait-" + i); break;
                default: t = new Thread(() -> { while (!stop) LockSupport.park(); }, "idle-park-" + i); break;
            }
            t.setDaemon(true);
            t.start();
        }
    }

    public static void main(String[] args) throws Exception {
        String w = args[0];
        int threads = 2, idle = 0;
        double warmup = 2, seconds = 6;
        for (int i = 1; i < args.length; i += 2) {
            switch (args[i]) {
                case "--threads": threads = Integer.parseInt(args[i + 1]); break;
                case "--idle": idle = Integer.parseInt(args[i + 1]); break;
                case "--warmup": warmup = Double.parseDouble(args[i + 1]); break;
                case "--seconds": seconds = Double.parseDouble(args[i + 1]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        idle(idle);
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            final Op op = op(w, t);
            ts[t] = new Thread(() -> {
                long sum = 0;
                try {
                    // At least CHECKED operations, so every worker contributes to the checksum.
                    for (int i = 0; !stop || i < CHECKED; i++) {
                        sum = sum * 31 + op.run(i);
                        if (i == CHECKED - 1) sums[id] = sum;
                        if (measuring) ops.incrementAndGet();
                    }
                } catch (Exception e) { throw new RuntimeException(e); }
            }, "worker-" + t);
            ts[t].start();
        }
        Thread.sleep((long) (warmup * 1000));
        long t0 = System.nanoTime();
        measuring = true;
        Thread.sleep((long) (seconds * 1000));
        measuring = false;
        long t1 = System.nanoTime();
        stop = true;
        for (Thread t : ts) t.join();
        // The checksum: what the workers themselves computed in their first CHECKED operations
        // (while being profiled), so it does not depend on how many operations the run managed.
        long check = 0;
        for (long s : sums) check = check * 31 + s;
        System.out.printf(Locale.ROOT, "ops_per_s=%.2f ops=%d checksum=%d%n", ops.get() / ((t1 - t0) / 1e9), ops.get(), check);
    }
}
