// How the page shows a number: lnlab.core.numbers.fmt, in JavaScript, character for character.
//
// At most 4 decimals, trailing zeros dropped (2.2361, 5, -1.3416), and 4 significant digits
// under 0.1 (0.000125); a value that is zero up to rounding (|v| <= 1e-9 times the scale of its
// neighbours, when one is given) shows as 0; values under 1e-4 or from 1e6 on keep 4
// significant digits in Python's scientific form (1e-05, 3.2e+07).
//
// Python rounds the exact binary value half to even; JavaScript's toFixed and toExponential
// round it half away from zero. They differ only where the value lies exactly halfway, which
// a float64 can only do in two ways here: at 4 decimals when v is an odd multiple of 1/32, and
// at 4 significant digits when v is an integer from 1e6 on. Those two cases are rounded here.

export const DECIMALS = 4;
export const ROUNDING = 1e-9; // relative size under which a value is zero up to rounding
const FIXED_RANGE = [1e-4, 1e6]; // |v| shown in fixed notation; outside it, scientific
const DECIMALS_FROM = 0.1; // from here DECIMALS decimals; under it, 4 significant digits

/** True for 0 and for |v| <= ROUNDING * |scale|: what float64 rounding leaves of a zero.
 * Without a scale (null) only 0 is. */
export function isRoundingZero(v, scale = null) {
  if (v === 0) return true;
  return scale !== null && Number.isFinite(v) && Math.abs(v) <= ROUNDING * Math.abs(scale);
}

/** `v` as text, as lnlab.core.numbers.fmt writes it: "2.2361", "0", "1e-05", "NaN", "∞". */
export function fmt(v, scale = null) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "∞" : "−∞";
  if (isRoundingZero(v, scale)) return "0";
  const a = Math.abs(v);
  if (a >= FIXED_RANGE[0] && a < DECIMALS_FROM) {
    return stripZeros(fixedEven(v, DECIMALS - 1 - Math.floor(Math.log10(a))));
  }
  if (a >= FIXED_RANGE[0] && a < FIXED_RANGE[1]) {
    const text = stripZeros(fixed4(v));
    return text === "-0" ? "0" : text;
  }
  return general4(v);
}

/** Each value as `fmt` writes it, unless two different values would read the same: then each
 * in its shortest exact form (lnlab.core.numbers.fmt_apart: 1e8 + 1 is 100000001). */
export function fmtApart(values, scale = null) {
  const texts = Array.from(values, (v) => fmt(v, scale));
  const seen = new Map();
  for (const [i, v] of Array.from(values).entries()) {
    if (!seen.has(texts[i])) seen.set(texts[i], v);
    const first = seen.get(texts[i]);
    if (first !== v && !(Number.isNaN(v) && Number.isNaN(first))) {
      return Array.from(values, (a) => shortest(a));
    }
  }
  return texts;
}

/** Python's repr of `v` without a trailing ".0" (lnlab.core.numbers.shortest): the shortest
 * digits that read back as v (toExponential's), fixed from 1e-4 up to 1e16, else 1.5e+16. */
export function shortest(v) {
  if (v === 0 || !Number.isFinite(v)) return fmt(v);
  const [mantissa, e] = v.toExponential().split("e");
  const exponent = Number(e);
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = v < 0 ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= digits.length - 1) return sign + digits + "0".repeat(exponent - digits.length + 1);
    if (exponent >= 0) return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
    return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  }
  const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${head}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

/** The largest finite magnitude among `values` (1 when there is none), for `fmt`. */
export function scaleOf(values) {
  let top = 0;
  for (const v of values) if (Number.isFinite(v)) top = Math.max(top, Math.abs(v));
  return top > 0 ? top : 1;
}

/** Python's f"{v:.4f}" for |v| < 1e6. */
function fixed4(v) {
  const q = v * 32; // exact: |v| < 1e6
  if (!(Number.isInteger(q) && q % 2 !== 0)) return v.toFixed(DECIMALS);
  // exactly halfway between two multiples of 1e-4: Python keeps the even one
  let units = Math.floor(Math.abs(v) * 1e4); // |v| * 1e4 = units + 0.5, exactly
  if (units % 2 === 1) units += 1;
  const whole = Math.floor(units / 1e4);
  const part = String(units % 1e4).padStart(DECIMALS, "0");
  return `${v < 0 ? "-" : ""}${whole}.${part}`;
}

/** Python's f"{v:.{decimals}f}" for 1e-4 <= |v| < 0.1: toFixed, but an exact tie (a dyadic
 * value such as 0.078125 ending in 5 just past the last digit) keeps the even neighbour. */
function fixedEven(v, decimals) {
  const [whole, frac] = Math.abs(v).toFixed(100).split("."); // the exact binary value
  if (!/^50*$/.test(frac.slice(decimals))) return v.toFixed(decimals);
  let digits = BigInt(whole + frac.slice(0, decimals));
  if (digits % 2n === 1n) digits += 1n;
  const text = digits.toString().padStart(decimals + 1, "0");
  return `${v < 0 ? "-" : ""}${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
}

/** Python's f"{v:.4g}": 4 significant digits, scientific below 1e-4 and from 1e4 on. */
function general4(v) {
  let [mantissa, exp] = v.toExponential(DECIMALS - 1).split("e");
  let exponent = Number(exp);
  if (Number.isInteger(v) && Math.abs(v) >= 1e4) {
    [mantissa, exponent] = evenTie(v, mantissa, exponent);
  }
  if (exponent >= -4 && exponent < DECIMALS) {
    return stripZeros(v.toFixed(DECIMALS - 1 - exponent));
  }
  const sign = exponent < 0 ? "-" : "+";
  return `${stripZeros(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

/** An integer's 4 significant digits when it lies exactly halfway: the even neighbour. */
function evenTie(v, mantissa, exponent) {
  const digits = BigInt(Math.abs(v)).toString();
  if (digits[DECIMALS] !== "5" || /[1-9]/.test(digits.slice(DECIMALS + 1))) {
    return [mantissa, exponent];
  }
  let kept = Number(digits.slice(0, DECIMALS));
  if (kept % 2 === 1) kept += 1;
  let at = digits.length - 1;
  if (kept === 10 ** DECIMALS) {
    kept = 10 ** (DECIMALS - 1);
    at += 1;
  }
  const text = String(kept);
  return [`${v < 0 ? "-" : ""}${text[0]}.${text.slice(1)}`, at];
}

function stripZeros(text) {
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}
