// The demo workload of the README's main job: a small "service" whose flame graph has several
// phases and shapes — JSON-ish parsing, a recursive tree search, regex matching, sorting, string
// building, hashing — run by a few worker threads beside idle ones, for ~6 seconds.
import java.util.*;
import java.util.regex.Pattern;

public class Demo {
    static volatile long sink;
    static final Pattern WORD = Pattern.compile("[a-z]+ing\\b");

    static Map<String, Object> parse(String s) {
        Map<String, Object> m = new HashMap<>();
        for (String kv : s.split(",")) {
            int c = kv.indexOf(':');
            String k = kv.substring(0, c).trim(), v = kv.substring(c + 1).trim();
            m.put(k, v.chars().allMatch(Character::isDigit) ? (Object) Long.parseLong(v) : v);
        }
        return m;
    }

    static String request(Random r) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 20; i++) sb.append("key").append(i).append(':').append(r.nextInt(1000)).append(',');
        return sb.append("text:profiling sampling walking graphing").toString();
    }

    static int search(int[] board, int row, int n) { // n-queens: a recursive search
        if (row == n) return 1;
        int count = 0;
        for (int c = 0; c < n; c++) {
            boolean ok = true;
            for (int r = 0; r < row && ok; r++) ok = board[r] != c && Math.abs(board[r] - c) != row - r;
            if (ok) { board[row] = c; count += search(board, row + 1, n); }
        }
        return count;
    }

    static long handle(Random r) {
        Map<String, Object> req = parse(request(r));
        long h = 0;
        for (Object v : req.values()) h += v.hashCode();
        h += WORD.matcher((String) req.get("text")).results().count();
        int[] data = r.ints(2000, 0, 100000).toArray();
        Arrays.sort(data);
        h += data[1000];
        h += search(new int[8], 0, 8);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 200; i++) out.append(i).append(';');
        return h + out.toString().hashCode();
    }

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 6000;
        for (int i = 0; i < 20; i++) {
            Thread t = new Thread(() -> { try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { } }, "idle-" + i);
            t.setDaemon(true);
            t.start();
        }
        long end = System.currentTimeMillis() + millis;
        List<Thread> ws = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            final int seed = w;
            Thread t = new Thread(() -> {
                Random r = new Random(seed);
                long s = 0;
                while (System.currentTimeMillis() < end) s += handle(r);
                sink += s;
            }, "worker-" + w);
            ws.add(t);
            t.start();
        }
        for (Thread t : ws) t.join();
        System.out.println("demo done");
    }
}
