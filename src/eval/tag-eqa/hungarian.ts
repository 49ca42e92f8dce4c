/**
 * The Hungarian algorithm for rectangular assignment problems, in its shortest augmenting path
 * form (Jonker-Volgenant style potentials): O(k²·l) for k = min(rows, cols), l = max(rows, cols).
 * It minimises the total cost of assigning min(rows, cols) pairs, each row and each column used
 * at most once, as SciPy's `linear_sum_assignment` does.
 */

export interface Assignment {
  /** For each row, its column, or -1 when the row is left unassigned (more rows than columns). */
  rowToCol: Int32Array;
  /** For each column, its row, or -1. */
  colToRow: Int32Array;
  /** The assigned pairs [row, col], by row. */
  pairs: [number, number][];
  /** The sum of the assigned costs. */
  total: number;
}

/**
 * Minimum-cost assignment. `cost` is a matrix as rows of numbers, or a row-major Float64Array
 * of `rows × cols` values. Costs must be finite.
 */
export function hungarian(cost: number[][]): Assignment;
export function hungarian(cost: Float64Array, rows: number, cols: number): Assignment;
export function hungarian(cost: Float64Array | number[][], rows?: number, cols?: number): Assignment {
  const matrix = toFlat(cost, rows, cols);
  const { values, nRows, nCols } = matrix;
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i]!)) throw new RangeError(`hungarian: cost ${values[i]} at row ${Math.floor(i / nCols)}, column ${i % nCols} is not finite`);
  }
  const transposed = nRows > nCols;
  const rowToCol = new Int32Array(nRows).fill(-1);
  const colToRow = new Int32Array(nCols).fill(-1);
  if (nRows > 0 && nCols > 0) {
    const matched = transposed ? solve(transpose(values, nRows, nCols), nCols, nRows) : solve(values, nRows, nCols);
    // matched[j] is the (short side) row of each long-side column, or -1
    for (let j = 0; j < matched.length; j++) {
      const i = matched[j]!;
      if (i < 0) continue;
      const [row, col] = transposed ? [j, i] : [i, j];
      rowToCol[row] = col;
      colToRow[col] = row;
    }
  }
  const pairs: [number, number][] = [];
  let total = 0;
  for (let r = 0; r < nRows; r++) {
    const c = rowToCol[r]!;
    if (c < 0) continue;
    pairs.push([r, c]);
    total += values[r * nCols + c]!;
  }
  return { rowToCol, colToRow, pairs, total };
}

function toFlat(cost: Float64Array | number[][], rows: number | undefined, cols: number | undefined): { values: Float64Array; nRows: number; nCols: number } {
  if (cost instanceof Float64Array) {
    if (rows === undefined || cols === undefined || !Number.isInteger(rows) || !Number.isInteger(cols) || rows < 0 || cols < 0 || rows * cols !== cost.length) {
      throw new RangeError(`hungarian: a Float64Array of ${cost.length} values is not ${rows} × ${cols}`);
    }
    return { values: cost, nRows: rows, nCols: cols };
  }
  const nRows = cost.length;
  const nCols = nRows === 0 ? 0 : cost[0]!.length;
  const values = new Float64Array(nRows * nCols);
  cost.forEach((row, r) => {
    if (row.length !== nCols) throw new RangeError(`hungarian: row ${r} has ${row.length} values, row 0 has ${nCols}`);
    values.set(row, r * nCols);
  });
  return { values, nRows, nCols };
}

function transpose(values: Float64Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c]!;
  return out;
}

/**
 * Shortest augmenting paths with row and column potentials, n ≤ m. Rows are added one at a
 * time; each addition runs a Dijkstra-like search over reduced costs (a[i][j] − u[i] − v[j] ≥ 0)
 * and augments along the shortest path to a free column. Returns each column's row or -1.
 */
function solve(a: Float64Array, n: number, m: number): Int32Array {
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const p = new Int32Array(m + 1); // p[j]: 1-based row matched to column j (0 = free)
  const way = new Int32Array(m + 1);
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    minv.fill(Number.POSITIVE_INFINITY);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = p[j0]!;
      const rowOffset = (i0 - 1) * m - 1;
      const ui0 = u[i0]!;
      let delta = Number.POSITIVE_INFINITY;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const reduced = a[rowOffset + j]! - ui0 - v[j]!;
        if (reduced < minv[j]!) {
          minv[j] = reduced;
          way[j] = j0;
        }
        // among equally short paths prefer a free column: the search ends there (many ties otherwise cost rounds)
        if (minv[j]! < delta || (minv[j] === delta && p[j] === 0 && p[j1] !== 0)) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[p[j]!] = u[p[j]!]! + delta;
          v[j] = v[j]! - delta;
        } else {
          minv[j] = minv[j]! - delta;
        }
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const matched = new Int32Array(m).fill(-1);
  for (let j = 1; j <= m; j++) if (p[j]! > 0) matched[j - 1] = p[j]! - 1;
  return matched;
}
