// SPECjvm2008-style CPU workloads for the overhead benchmark (bench/overhead.py).
//
//   java Workloads <workload> [--threads N] [--idle N] [--warmup S] [--seconds S] [--trace MS]
//
// workloads: compress (LZ77 + Huffman-size estimate), crypto (AES-CTR + SHA-256),
// scimark (FFT, SOR, LU, Monte Carlo, sparse mat-mult), serial (ObjectOutputStream round trips),
// xml, compiler, raytrace, audio, txdb, server, wakers, contended (a shared monitor and a
// ReentrantLock), mix (compress, crypto, scimark, serial, one per thread in turn).
// --idle N starts N extra threads that stay sleeping, waiting or parked for the whole run.
// Prints "ops_per_s=<throughput> ops=<n> checksum=<hash of the results> alloc_mb_per_s=<rate>" at
// the end; the checksum depends only on the work done per operation, so runs with and without a
// profiler compare; the rate is what all threads allocated in the timed phase (ThreadMXBean's
// per-thread counters; a thread that ended in it loses its part), in MB (1e6 bytes) a second.
// --trace MS also prints "tick <System.nanoTime()> <operations so far>" every MS milliseconds of
// the timed phase (bench/phases.py reads the throughput of each phase from them).
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


    // ---- xml: build a document, transform it with XSLT, validate it against a schema ----
    static final String XSD = "<xs:schema xmlns:xs='http://www.w3.org/2001/XMLSchema'>"
        + "<xs:element name='orders'><xs:complexType><xs:sequence>"
        + "<xs:element name='order' maxOccurs='unbounded'><xs:complexType><xs:sequence>"
        + "<xs:element name='item' type='xs:string'/><xs:element name='qty' type='xs:int'/>"
        + "<xs:element name='price' type='xs:decimal'/></xs:sequence>"
        + "<xs:attribute name='id' type='xs:int'/></xs:complexType></xs:element>"
        + "</xs:sequence></xs:complexType></xs:element></xs:schema>";
    static final String XSL = "<xsl:stylesheet version='1.0' xmlns:xsl='http://www.w3.org/1999/XSL/Transform'>"
        + "<xsl:template match='/orders'><orders><xsl:for-each select='order'><xsl:sort select='item'/>"
        + "<order id='{@id}'><item><xsl:value-of select='item'/></item><qty><xsl:value-of select='qty * 2'/></qty>"
        + "<price><xsl:value-of select='price'/></price></order></xsl:for-each></orders></xsl:template></xsl:stylesheet>";
    static final ThreadLocal<javax.xml.transform.Templates> XSLT = ThreadLocal.withInitial(() -> {
        try {
            return javax.xml.transform.TransformerFactory.newInstance()
                .newTemplates(new javax.xml.transform.stream.StreamSource(new StringReader(XSL)));
        } catch (Exception e) { throw new RuntimeException(e); }
    });
    static final ThreadLocal<javax.xml.validation.Schema> SCHEMA = ThreadLocal.withInitial(() -> {
        try {
            return javax.xml.validation.SchemaFactory.newInstance(javax.xml.XMLConstants.W3C_XML_SCHEMA_NS_URI)
                .newSchema(new javax.xml.transform.stream.StreamSource(new StringReader(XSD)));
        } catch (Exception e) { throw new RuntimeException(e); }
    });

    static long xml(int seed) throws Exception {
        StringBuilder sb = new StringBuilder("<orders>");
        Random r = new Random(seed);
        for (int k = 0; k < 60; k++)
            sb.append("<order id='").append(k).append("'><item>item-").append(r.nextInt(1000)).append("</item><qty>")
              .append(r.nextInt(50)).append("</qty><price>").append(r.nextInt(10000) / 100.0).append("</price></order>");
        sb.append("</orders>");
        StringWriter out = new StringWriter();
        XSLT.get().newTransformer().transform(new javax.xml.transform.stream.StreamSource(new StringReader(sb.toString())),
            new javax.xml.transform.stream.StreamResult(out));
        SCHEMA.get().newValidator().validate(new javax.xml.transform.stream.StreamSource(new StringReader(out.toString())));
        return out.toString().length();
    }

    // ---- compiler: javac (javax.tools) on a generated source, in memory ----
    static long compiler(int seed) throws Exception {
        javax.tools.JavaCompiler jc = javax.tools.ToolProvider.getSystemJavaCompiler();
        if (jc == null) throw new IllegalStateException("compiler: no javax.tools compiler (a JRE, not a JDK)");
        StringBuilder src = new StringBuilder("public class Gen" + seed + " {\n");
        for (int m = 0; m < 20; m++)
            src.append("  static int m").append(m).append("(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * ")
               .append(m + seed % 7).append(" ^ (s >>> 3); return s; }\n");
        src.append("  public static int all(int x) { return ");
        for (int m = 0; m < 20; m++) src.append(m > 0 ? " + " : "").append("m").append(m).append("(x)");
        src.append("; }\n}\n");
        String code = src.toString();
        javax.tools.JavaFileObject file = new javax.tools.SimpleJavaFileObject(
                java.net.URI.create("string:///Gen" + seed + ".java"), javax.tools.JavaFileObject.Kind.SOURCE) {
            @Override public CharSequence getCharContent(boolean ignore) { return code; }
        };
        final long[] bytes = {0};
        javax.tools.StandardJavaFileManager std = jc.getStandardFileManager(null, null, null);
        javax.tools.JavaFileManager fm = new javax.tools.ForwardingJavaFileManager<javax.tools.JavaFileManager>(std) {
            @Override public javax.tools.JavaFileObject getJavaFileForOutput(Location loc, String name,
                    javax.tools.JavaFileObject.Kind kind, javax.tools.FileObject sibling) {
                return new javax.tools.SimpleJavaFileObject(java.net.URI.create("mem:///" + name + ".class"), kind) {
                    @Override public OutputStream openOutputStream() {
                        return new ByteArrayOutputStream() { @Override public void close() { bytes[0] += size(); } };
                    }
                };
            }
        };
        Boolean ok = jc.getTask(null, fm, null, List.of("-proc:none", "-g:none"), null, List.of(file)).call();
        if (!ok) throw new IllegalStateException("compiler: the generated source did not compile");
        return bytes[0];
    }

    // ---- raytrace: spheres, one light, shadows and reflections, a 48x48 image ----
    static long raytrace(int seed) {
        double[][] sph = {{0, -1, 3, 1}, {2, 0, 4, 1}, {-2, 0, 4, 1}, {0, -5001, 0, 5000}};
        long h = 0;
        int n = 48;
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                double dx = (x - n / 2.0) / n, dy = (y - n / 2.0) / n + (seed % 3) * 1e-3, dz = 1;
                double len = Math.sqrt(dx * dx + dy * dy + dz * dz);
                h = h * 31 + (long) (255 * trace(sph, 0, 0, 0, dx / len, dy / len, dz / len, 3));
            }
        return h;
    }

    static double trace(double[][] sph, double ox, double oy, double oz, double dx, double dy, double dz, int depth) {
        double best = Double.MAX_VALUE;
        int hit = -1;
        for (int i = 0; i < sph.length; i++) {
            double[] s = sph[i];
            double px = ox - s[0], py = oy - s[1], pz = oz - s[2];
            double b = px * dx + py * dy + pz * dz, c = px * px + py * py + pz * pz - s[3] * s[3], disc = b * b - c;
            if (disc < 0) continue;
            double t = -b - Math.sqrt(disc);
            if (t > 1e-6 && t < best) { best = t; hit = i; }
        }
        if (hit < 0) return 0.1;
        double hx = ox + dx * best, hy = oy + dy * best, hz = oz + dz * best;
        double nx = (hx - sph[hit][0]) / sph[hit][3], ny = (hy - sph[hit][1]) / sph[hit][3], nz = (hz - sph[hit][2]) / sph[hit][3];
        double lx = 5 - hx, ly = 5 - hy, lz = -5 - hz, ll = Math.sqrt(lx * lx + ly * ly + lz * lz);
        lx /= ll; ly /= ll; lz /= ll;
        double diffuse = Math.max(0, nx * lx + ny * ly + nz * lz);
        for (double[] s : sph) { // shadow ray
            double px = hx - s[0], py = hy - s[1], pz = hz - s[2];
            double b = px * lx + py * ly + pz * lz, c = px * px + py * py + pz * pz - s[3] * s[3];
            if (b * b - c > 0 && -b - Math.sqrt(b * b - c) > 1e-6) { diffuse *= 0.3; break; }
        }
        if (depth == 0) return diffuse;
        double d = dx * nx + dy * ny + dz * nz;
        return 0.7 * diffuse + 0.3 * trace(sph, hx, hy, hz, dx - 2 * d * nx, dy - 2 * d * ny, dz - 2 * d * nz, depth - 1);
    }

    // ---- audio: a synthesizer voice through a biquad filter, an echo and a 256-point DFT ----
    static long audio(int seed) {
        int n = 4096;
        float[] buf = new float[n];
        double phase = 0, f = 220 + seed % 50;
        for (int i = 0; i < n; i++) { phase += 2 * Math.PI * f / 44100; buf[i] = (float) (Math.sin(phase) + 0.3 * Math.sin(3 * phase)); }
        double b0 = 0.2, b1 = 0.4, b2 = 0.2, a1 = -0.5, a2 = 0.3, x1 = 0, x2 = 0, y1 = 0, y2 = 0;
        for (int i = 0; i < n; i++) {
            double y = b0 * buf[i] + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
            x2 = x1; x1 = buf[i]; y2 = y1; y1 = y; buf[i] = (float) y;
        }
        for (int i = 1103; i < n; i++) buf[i] += 0.4f * buf[i - 1103];
        double energy = 0;
        for (int k = 0; k < 64; k++) {
            double re = 0, im = 0;
            for (int i = 0; i < 256; i++) { double a = 2 * Math.PI * k * i / 256; re += buf[i] * Math.cos(a); im -= buf[i] * Math.sin(a); }
            energy += re * re + im * im;
        }
        return (long) energy;
    }

    // ---- txdb: an in-memory key-value store with transactions (read, update, commit/abort) ----
    static final int ACCOUNTS = 1 << 14;
    static final long[] balance = new long[ACCOUNTS];
    static final java.util.concurrent.locks.ReentrantReadWriteLock[] stripes = new java.util.concurrent.locks.ReentrantReadWriteLock[64];
    static final java.util.concurrent.ConcurrentHashMap<Integer, String> names = new java.util.concurrent.ConcurrentHashMap<>();
    static {
        for (int i = 0; i < stripes.length; i++) stripes[i] = new java.util.concurrent.locks.ReentrantReadWriteLock();
        for (int i = 0; i < ACCOUNTS; i++) { balance[i] = 1000; names.put(i, "account-" + i); }
    }

    // Each worker moves money between the accounts of its own partition (up to PARTS workers),
    // so what it computes does not depend on the other workers' timing; the lock stripes are
    // shared by all (a partition's accounts fall in every stripe), and so is the contention.
    static final int PARTS = 16, SPAN = ACCOUNTS / PARTS;
    static long txdb(int worker, int seed) {
        Random r = new Random(seed * 1_000_003L + worker);
        int base = (worker % PARTS) * SPAN;
        long sum = 0;
        for (int t = 0; t < 200; t++) {
            int a = base + r.nextInt(SPAN), b = base + r.nextInt(SPAN), amount = r.nextInt(100);
            if (t % 4 == 0) { // a read-only transaction: a range query
                var l = stripes[a % 64].readLock();
                l.lock();
                try {
                    for (int k = 0; k < 32; k++) {
                        int c = base + (a - base + k) % SPAN;
                        sum += balance[c] + names.get(c).length();
                    }
                }
                finally { l.unlock(); }
                continue;
            }
            int s1 = Math.min(a % 64, b % 64), s2 = Math.max(a % 64, b % 64); // lock order: no deadlock
            stripes[s1].writeLock().lock();
            if (s2 != s1) stripes[s2].writeLock().lock();
            try {
                Map<Integer, Long> undo = new HashMap<>();
                undo.put(a, balance[a]); undo.put(b, balance[b]);
                balance[a] -= amount; balance[b] += amount;
                if (balance[a] < 0) for (var e : undo.entrySet()) balance[e.getKey()] = e.getValue(); // abort
                else sum += amount;
            } finally {
                if (s2 != s1) stripes[s2].writeLock().unlock();
                stripes[s1].writeLock().unlock();
            }
        }
        return sum;
    }

    // ---- server: com.sun.net.httpserver with a pool of 50 threads; loopback clients ----
    static com.sun.net.httpserver.HttpServer server;
    static synchronized int serverPort() throws IOException {
        if (server == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true"); // no Nagle/delayed-ACK stalls
            server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 256);
            server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(50, r -> {
                Thread t = new Thread(r, "http-pool");
                t.setDaemon(true);
                return t;
            }));
            server.createContext("/work", ex -> {
                String q = ex.getRequestURI().getQuery();
                int n = Integer.parseInt(q.substring(q.indexOf('=') + 1));
                int[] data = new Random(n).ints(400, 0, 100000).toArray();
                Arrays.sort(data);
                StringBuilder body = new StringBuilder("{\"n\":").append(n).append(",\"median\":").append(data[200]).append(",\"top\":[");
                for (int i = 0; i < 20; i++) body.append(i > 0 ? "," : "").append(data[399 - i]);
                byte[] out = body.append("]}").toString().getBytes();
                ex.sendResponseHeaders(200, out.length);
                try (OutputStream os = ex.getResponseBody()) { os.write(out); }
            });
            server.start();
        }
        return server.getAddress().getPort();
    }

    static long serverRequest(int seed) throws Exception {
        java.net.URL url = new java.net.URL("http://127.0.0.1:" + serverPort() + "/work?n=" + seed);
        java.net.HttpURLConnection c = (java.net.HttpURLConnection) url.openConnection();
        try (InputStream in = c.getInputStream()) {
            byte[] body = in.readAllBytes();
            return body.length + body[body.length - 2];
        }
    }

    // ---- wakers: hundreds of threads, each waking every 5 ms for a little work ----
    static final AtomicLong wakeOps = new AtomicLong();
    static long wakers(int seed) throws Exception {
        // the worker threads only start the wakers (once) and then wait: the wakers' own work is
        // the throughput
        synchronized (Workloads.class) {
            if (wakeOps.get() == 0) {
                wakeOps.set(1);
                for (int i = 0; i < WAKERS; i++) {
                    final int id = i;
                    Thread t = new Thread(() -> {
                        long h = id;
                        for (int k = 0; !stop; k++) {
                            LockSupport.parkNanos(5_000_000L);
                            for (int j = 0; j < 2000; j++) h = h * 31 + j;
                            if (measuring) ops.incrementAndGet();
                        }
                        sink += h;
                    }, "waker-" + i);
                    t.setDaemon(true);
                    t.start();
                }
            }
        }
        Thread.sleep(20);
        return 1;
    }
    static final int WAKERS = 400;
    static volatile long sink;

    // ---- contended: every worker takes one shared monitor and one shared ReentrantLock in turn
    // for short work, with as much work outside them: lock contention for event=lock's benchmark
    // (a contended synchronized entry blocks after HotSpot's spin; a ReentrantLock waiter parks).
    // Under the shared lock a worker updates only its own cells (up to PARTS workers), so what it
    // computes does not depend on the other workers' timing.
    static final Object monitor = new Object();
    static final java.util.concurrent.locks.ReentrantLock rlock = new java.util.concurrent.locks.ReentrantLock();
    static final long[] cells = new long[PARTS * 16];

    static long contended(int worker, int seed) {
        int base = (worker % PARTS) * 16;
        long h = seed;
        for (int k = 0; k < 100; k++) {
            if ((k & 1) == 0) {
                synchronized (monitor) { h = held(base, h); }
            } else {
                rlock.lock();
                try { h = held(base, h); } finally { rlock.unlock(); }
            }
            for (int j = 0; j < 400; j++) h = h * 31 + (j ^ (h >>> 17)); // outside the locks
        }
        return h;
    }

    static long held(int base, long h) {
        for (int j = 0; j < 400; j++) {
            int c = base + (j & 15);
            cells[c] = cells[c] * 31 + h + j;
            h ^= cells[c] >>> 7;
        }
        return h;
    }

    // ---- the bytes every thread allocated (HotSpot's per-thread counters), for the run's rate ----
    static long allocatedBytes(Map<Long, Long> at) {
        var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[] ids = mx.getAllThreadIds();
        long[] bytes = mx.getThreadAllocatedBytes(ids);
        long sum = 0;
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] < 0) continue; // ended meanwhile, or not measured
            Long before = at.put(ids[i], bytes[i]);
            sum += bytes[i] - (before == null ? 0 : before);
        }
        return sum;
    }

    static final List<String> ALL = List.of("compress", "crypto", "scimark", "serial", "xml", "compiler",
        "raytrace", "audio", "txdb", "server", "wakers", "contended");

    static Op op(String w, int t) {
        switch (w) {
            case "compress": return Workloads::compress;
            case "crypto": return Workloads::crypto;
            case "scimark": return Workloads::scimark;
            case "serial": return Workloads::serial;
            case "xml": return Workloads::xml;
            case "compiler": return Workloads::compiler;
            case "raytrace": return Workloads::raytrace;
            case "audio": return Workloads::audio;
            case "txdb": return i -> txdb(t, i);
            case "server": return Workloads::serverRequest;
            case "wakers": return Workloads::wakers;
            case "contended": return i -> contended(t, i);
            case "mix": {
                Op[] all = {Workloads::compress, Workloads::crypto, Workloads::scimark, Workloads::serial};
                return all[t % all.length];
            }
            default: throw new IllegalArgumentException("unknown workload " + w + " (" + String.join(", ", ALL) + ", mix)");
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
        double warmup = 2, seconds = 6, trace = 0;
        for (int i = 1; i < args.length; i += 2) {
            switch (args[i]) {
                case "--threads": threads = Integer.parseInt(args[i + 1]); break;
                case "--idle": idle = Integer.parseInt(args[i + 1]); break;
                case "--warmup": warmup = Double.parseDouble(args[i + 1]); break;
                case "--seconds": seconds = Double.parseDouble(args[i + 1]); break;
                case "--trace": trace = Double.parseDouble(args[i + 1]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        idle(idle);
        allocatedBytes(new HashMap<>()); // the management classes loaded now, not at the timed phase's edges
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
                        if (measuring && !w.equals("wakers")) ops.incrementAndGet(); // wakers count their own
                    }
                } catch (Exception e) { throw new RuntimeException(e); }
            }, "worker-" + t);
            ts[t].start();
        }
        Thread.sleep((long) (warmup * 1000));
        Map<Long, Long> allocAt = new HashMap<>();
        allocatedBytes(allocAt);
        long t0 = System.nanoTime();
        measuring = true;
        if (trace > 0) {
            long step = (long) (trace * 1e6), end = t0 + (long) (seconds * 1e9);
            for (long next = t0; next <= end; next += step) {
                long now = System.nanoTime();
                if (next > now) Thread.sleep((next - now) / 1_000_000, (int) ((next - now) % 1_000_000));
                System.out.println("tick " + System.nanoTime() + " " + ops.get());
                System.out.flush();
            }
        } else {
            Thread.sleep((long) (seconds * 1000));
        }
        measuring = false;
        long t1 = System.nanoTime();
        long allocated = allocatedBytes(allocAt);
        stop = true;
        for (Thread t : ts) t.join();
        // The checksum: what the workers themselves computed in their first CHECKED operations
        // (while being profiled), so it does not depend on how many operations the run managed.
        long check = 0;
        for (long s : sums) check = check * 31 + s;
        System.out.printf(Locale.ROOT, "ops_per_s=%.2f ops=%d checksum=%d alloc_mb_per_s=%.1f%n",
            ops.get() / ((t1 - t0) / 1e9), ops.get(), check, allocated / 1e6 / ((t1 - t0) / 1e9));
        System.out.flush();
        if (server != null) server.stop(0); // its dispatcher thread would keep the JVM alive
    }
}
