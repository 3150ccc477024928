// How the page shows a number: lnlab.core.numbers.fmt, in JavaScript, character for character.
//
// At most 4 decimals, trailing zeros dropped (2.2361, 5, -1.3416); a value that is zero up to
// rounding (|v| <= 1e-9 times the scale of its neighbours) shows as 0; values under 1e-4 or from
// 1e6 on keep 4 significant digits in Python's scientific form (1e-05, 3.2e+07).
//
// Python rounds the exact binary value half to even; JavaScript's toFixed and toExponential
// round it half away from zero. They differ only where the value lies exactly halfway, which
// a float64 can only do in two ways here: at 4 decimals when v is an odd multiple of 1/32, and
// at 4 significant digits when v is an integer from 1e6 on. Those two cases are rounded here.

export const DECIMALS = 4;
export const ROUNDING = 1e-9; // relative size under which a value is zero up to rounding
const FIXED_RANGE = [1e-4, 1e6]; // |v| shown with DECIMALS decimals; outside it, scientific

/** True for 0 and for |v| <= ROUNDING * |scale|: what float64 rounding leaves of a zero. */
export function isRoundingZero(v, scale = 1) {
  return v === 0 || (Number.isFinite(v) && Math.abs(v) <= ROUNDING * Math.abs(scale));
}

/** `v` as text, as lnlab.core.numbers.fmt writes it: "2.2361", "0", "1e-05", "NaN", "∞". */
export function fmt(v, scale = 1) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "∞" : "−∞";
  if (isRoundingZero(v, scale)) return "0";
  const a = Math.abs(v);
  if (a >= FIXED_RANGE[0] && a < FIXED_RANGE[1]) {
    const text = stripZeros(fixed4(v));
    return text === "-0" ? "0" : text;
  }
  return general4(v);
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
