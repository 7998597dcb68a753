// A JavaScript workload for Rhino that compiles a lot: bench/wholejvm.py's `rhino` program.
//   java -cp /usr/share/java/js.jar org.mozilla.javascript.tools.shell.Main -opt 9 compile.js N
// Generates N small scripts, each a different function (loops, closures, objects, strings), and
// evaluates each with the shell's own Context at its optimization level (>= 0: Rhino's code
// generator turns every script into a new JVM class, which HotSpot loads, interprets and JIT-
// compiles), runs it over 200 inputs and checks every result against the same formula computed
// here. Prints "ok N CHECKSUM"; a wrong result throws (the shell exits non-zero).
var n = arguments.length > 0 ? parseInt(arguments[0], 10) : 600;
var cx = Packages.org.mozilla.javascript.Context.getCurrentContext();
if (cx.getOptimizationLevel() < 0)
  throw new Error("run with -opt 0..9: the interpreter compiles no classes");
var scope = this;
var sum = 0;
for (var i = 0; i < n; i++) {
  var a = ((i * 7919) % 97) + 1,
    b = ((i * 104729) % 89) + 2,
    kind = i % 4;
  var body;
  if (kind === 0) {
    body =
      "var s = 0; for (var k = 0; k < " +
      b +
      "; k++) { s += (x * " +
      a +
      " + k) % 1009; } return s;";
  } else if (kind === 1) {
    body =
      "var add = function (y) { return y + " +
      a +
      "; }; var t = x; for (var k = 0; k < " +
      ((b % 7) + 1) +
      "; k++) t = add(t) * 3 % 65521; return t;";
  } else if (kind === 2) {
    body =
      "var o = { p: x, q: " +
      a +
      " }; var arr = []; for (var k = 0; k < " +
      ((b % 11) + 2) +
      "; k++) arr.push(o.p * k + o.q); return arr.reduce(function (u, v) { return (u + v) % 32749; }, 0);";
  } else {
    body =
      "var s = 'v' + x + '_" +
      a +
      "'; var h = " +
      b +
      "; for (var k = 0; k < s.length; k++) " +
      "h = (h * 31 + s.charCodeAt(k)) % 1000003; return h;";
  }
  var name = "f" + i;
  cx.evaluateString(scope, "function " + name + "(x) { " + body + " }", "gen" + i + ".js", 1, null);
  var f = scope[name];
  for (var x = 0; x < 200; x++) {
    var got = f(x),
      want,
      j;
    if (kind === 0) {
      want = 0;
      for (j = 0; j < b; j++) want += (x * a + j) % 1009;
    } else if (kind === 1) {
      want = x;
      for (j = 0; j < (b % 7) + 1; j++) want = ((want + a) * 3) % 65521;
    } else if (kind === 2) {
      want = 0;
      for (j = 0; j < (b % 11) + 2; j++) want = (want + (x * j + a)) % 32749;
    } else {
      var s = "v" + x + "_" + a;
      want = b;
      for (j = 0; j < s.length; j++) want = (want * 31 + s.charCodeAt(j)) % 1000003;
    }
    if (got !== want) throw new Error(name + "(" + x + ") = " + got + ", want " + want);
    sum = (sum * 131 + got) % 2147483647;
  }
}
print("ok " + n + " " + sum);
