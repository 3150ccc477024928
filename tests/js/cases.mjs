// Where the node tests find the cases Python wrote (tests/js/cases.py): the folder named by
// LNLAB_JS_CASES (tests/js/test_node.py writes it once for every test file), or else a new
// temporary folder that this process asks Python to fill.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export function casesDir() {
  if (process.env.LNLAB_JS_CASES) return process.env.LNLAB_JS_CASES;
  const dir = mkdtempSync(join(tmpdir(), "lnlab-js-cases-"));
  const python = process.env.LNLAB_PYTHON || join(ROOT, ".venv", "bin", "python");
  execFileSync(python, ["-m", "tests.js.cases", dir], { cwd: ROOT, stdio: "inherit" });
  return dir;
}

/** A JSON file of the cases, with {"float": "nan"}, "inf" and "-inf" back as numbers. */
export function readJson(dir, name) {
  const special = { nan: NaN, inf: Infinity, "-inf": -Infinity };
  return JSON.parse(readFileSync(join(dir, name), "utf8"), (_key, value) =>
    value && typeof value === "object" && typeof value.float === "string" ? special[value.float] : value,
  );
}

/** How many float64 values lie between a and b (0 when equal, or both NaN). */
export function ulps(a, b) {
  if (Number.isNaN(a) && Number.isNaN(b)) return 0n;
  if (a === b) return 0n;
  const ordered = (v) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, v);
    const bits = view.getBigInt64(0);
    return bits < 0n ? -(bits & 0x7fffffffffffffffn) : bits;
  };
  const d = ordered(a) - ordered(b);
  return d < 0n ? -d : d;
}
