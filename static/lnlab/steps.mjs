// The five steps written out with one token's numbers, as lnlab.teach.steps.written_steps
// writes them (Layer Norm's own convention: divide by D, epsilon inside the root), and the
// token's summary line, as lnlab.labs.step_through.token.token_summary writes it.
import { bracketed, joined, num, term, vector } from "./latex.mjs";
import { fmt, fmtApart, scaleOf } from "./numbers.mjs";

const SUMMARY_VALUES = 8; // the summary line lists at most this many features

/**
 * The substituted formula of each step (LaTeX): mean, variance, sigma_eps, x_hat, y.
 * `t` holds the token's x, gamma, beta and eps and its results mean, var, std, xHat, y.
 */
export function writtenSteps(t) {
  const x = Array.from(t.x);
  const n = x.length;
  const m = term(t.mean);
  return [
    String.raw`\mu = \tfrac{1}{${n}}\big(${joined(x.map((v) => term(v)))}\big) = ${num(t.mean)}`,
    String.raw`\sigma^2 = \tfrac{1}{${n}}\big(` +
      joined(x.map((v) => `(${term(v)} - ${m})^2`)) +
      String.raw`\big) = ${num(t.var)}`,
    String.raw`\sigma_\epsilon = \sqrt{${num(t.var)} + ${num(t.eps)}} = ${num(t.std)}`,
    String.raw`\hat{x} = ` +
      bracketed(x.map((v) => String.raw`\dfrac{${term(v)} - ${m}}{${num(t.std)}}`)) +
      ` = ${vector(t.xHat)}`,
    "y = " +
      bracketed(x.map((_v, i) => `${num(t.gamma[i])} \\cdot ${term(t.xHat[i])} + ${term(t.beta[i])}`)) +
      ` = ${vector(t.y)}`,
  ];
}

/** "x = (2, 4, 6, 8) · D = 4 · ε = 1e-05 · γ = 1 · β = 0": the token and the settings. */
export function tokenSummary(x, eps, gamma, beta) {
  return [
    `x = ${shortVector(x)}`,
    `D = ${x.length}`,
    `ε = ${fmt(eps)}`,
    `γ = ${setting(gamma)}`,
    `β = ${setting(beta)}`,
  ].join(" · ");
}

function shortVector(v) {
  const scale = scaleOf(v);
  const shown = fmtApart(v.slice(0, SUMMARY_VALUES), scale).join(", ");
  const more = v.length > SUMMARY_VALUES ? `, … ${v.length} values` : "";
  return `(${shown}${more})`;
}

/** gamma or beta: one number when every feature has the same. */
function setting(v) {
  return Array.prototype.every.call(v, (a) => a === v[0]) ? fmt(v[0]) : shortVector(v);
}
