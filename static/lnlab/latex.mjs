// Numbers and vectors written as LaTeX, as lnlab.teach.latex writes them: the formulas with a
// token's numbers substituted. Long vectors show their first and last few entries around
// \dots, and \allowbreak after each comma lets a long formula wrap instead of running off.
import { fmt } from "./numbers.mjs";

export const MAX_SHOWN = 8;
export const COMMA = String.raw`,\allowbreak\ `;

/** A number as fmt rounds it, in LaTeX (1e-05 -> 10^{-5}, 2.5e+07 -> 2.5 \times 10^{7}). */
export function num(v, scale = null) {
  if (Number.isNaN(v)) return String.raw`\mathrm{NaN}`;
  if (!Number.isFinite(v)) return v > 0 ? String.raw`\infty` : String.raw`-\infty`;
  const text = fmt(v, scale);
  if (!text.includes("e")) return text;
  const [mantissa, exponent] = text.split("e");
  const head = mantissa === "1" ? "" : `${mantissa} \\times `;
  return `${head}10^{${Number(exponent)}}`;
}

/** A number ready to stand inside a sum: negatives in parentheses. */
export function term(v, scale = null) {
  const text = num(v, scale);
  return text.startsWith("-") ? `(${text})` : text;
}

/** Short lists whole; long ones cut to head, \dots, tail. */
export function elided(items) {
  if (items.length <= MAX_SHOWN) return [...items];
  const half = MAX_SHOWN / 2;
  return [...items.slice(0, half), String.raw`\dots`, ...items.slice(-half)];
}

/** A row vector in square brackets, breakable after each comma. */
export function vector(values) {
  return bracketed(Array.from(values, (v) => num(v)));
}

/** LaTeX items in square brackets, long lists elided, breakable after each comma. */
export function bracketed(items) {
  return `[${elided(items).join(COMMA)}]`;
}

/** Items joined with `sep`, long lists elided. */
export function joined(items, sep = " + ") {
  return elided(items).join(sep);
}
