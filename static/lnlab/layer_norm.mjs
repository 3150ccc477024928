// Layer Norm of one token, as lnlab.core.standardize computes it with numpy in float64.
//
// The same steps in the same order: shift the token by its first feature (a constant token is
// then exactly 0, and 1e4 + x gives the answer for x), take the mean of the shifted values with
// numpy's pairwise summation, the centred values, the mean corrected by their sum, their sum of
// squares, and divide by sqrt(var + eps). Where the squares would overflow or underflow (1e200,
// 1e-200) the centred values are first divided by a power of two near their largest magnitude,
// as lnlab does.
// numpy sums the squares with BLAS, whose order depends on the CPU, so var may differ from
// numpy's in its last bits; the page shows 4 decimals (tests/js/layer_norm.test.mjs).

const TINY = 2.2250738585072014e-308; // np.finfo(np.float64).tiny: the smallest normal
const EPSILON = 2.220446049250313e-16; // np.finfo(np.float64).eps
const LARGEST = 1.7976931348623157e308;
const BLOCK = 8; // numpy's pairwise summation: 8 running sums over blocks of at most 128
const PAIRWISE_BLOCK = 128;

/**
 * The five steps for token `x` (an array of D numbers) with per-feature `gamma` and `beta`:
 * {mean, var, std, xHat, y}, std being sigma_eps = sqrt(var + eps), the denominator.
 */
export function layerNorm(x, gamma, beta, eps) {
  const n = x.length;
  const k = x[0];
  const d = Float64Array.from(x, (v) => v - k);
  const meanD = pairwiseSum(d, 0, n) / n;
  const c = d.map((v) => v - meanD);
  const lost = pairwiseSum(c, 0, n) / n; // the corrected two-pass mean: what the first sum lost
  const sumSquares = pairwiseSumOfSquares(c, 0, n);
  let variance, std, xHat;
  if (squaresIntact(sumSquares, n, eps)) {
    variance = sumSquares / n;
    std = Math.sqrt(variance + eps);
    xHat = c.map((v) => v / std);
  } else {
    ({ variance, std, xHat } = scaled(c, n, eps));
  }
  const y = xHat.map((v, i) => gamma[i] * v + beta[i]);
  const mean = k + (Number.isFinite(lost) ? meanD + lost : meanD); // NaN from an infinity: kept
  return { mean, var: variance, std, xHat, y };
}

/** numpy's pairwise sum of a[start .. start + n) (numpy/_core/src/umath/loops_utils.h.src). */
export function pairwiseSum(a, start, n) {
  return pairwise(a, start, n, (v) => v);
}

function pairwiseSumOfSquares(a, start, n) {
  return pairwise(a, start, n, (v) => v * v);
}

function pairwise(a, start, n, term) {
  if (n < BLOCK) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += term(a[start + i]);
    return sum;
  }
  if (n <= PAIRWISE_BLOCK) {
    const r = new Float64Array(BLOCK);
    for (let j = 0; j < BLOCK; j++) r[j] = term(a[start + j]);
    let i = BLOCK;
    for (; i < n - (n % BLOCK); i += BLOCK) {
      for (let j = 0; j < BLOCK; j++) r[j] += term(a[start + i + j]);
    }
    let sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) sum += term(a[start + i]);
    return sum;
  }
  let half = Math.floor(n / 2);
  half -= half % BLOCK;
  return pairwise(a, start, half, term) + pairwise(a, start + half, n - half, term);
}

/** Whether the sum of squares neither overflowed nor lost bits to underflow (Ops.squares_intact). */
function squaresIntact(sumSquares, n, eps) {
  const small = (n * TINY) / EPSILON;
  const large = LARGEST / 2;
  return eps <= large && sumSquares >= small && sumSquares <= large;
}

/** var, sigma_eps and x_hat of centred values whose squares would overflow or underflow. */
function scaled(c, n, eps) {
  let top = 0;
  for (const v of c) top = Math.max(top, Math.abs(v));
  const s = powerOfTwoAtOrBelow(top);
  const u = c.map((v) => v / s);
  const r = pairwiseSumOfSquares(u, 0, n) / n; // var / s^2
  const variance = s * (s * r);
  const t = eps === 0 ? 0 : eps / s / s;
  if (t === Infinity) {
    // s is so small that var is nothing next to eps
    const root = eps ** 0.5;
    return { variance, std: root, xHat: c.map((v) => v / root) };
  }
  const root = Math.sqrt(r + t);
  return { variance, std: s * root, xHat: u.map((v) => v / root) };
}

/** The power of two at or just below `m` (1/2 for 0): numpy's ldexp(1, frexp(m)[1] - 1). */
export function powerOfTwoAtOrBelow(m) {
  if (m === 0) return 0.5;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, m);
  const biased = (view.getUint32(0) >>> 20) & 0x7ff;
  if (biased === 0) return powerOfTwoAtOrBelow(m * 2 ** 64) / 2 ** 64; // subnormal: exact
  view.setUint32(0, biased << 20);
  view.setUint32(4, 0);
  return view.getFloat64(0);
}
