/*
 * npm run bench:merge-queue-bounds [-- --prs 1500 --bad 0.03,0.08 --runners 4,6 --rate 30 --flake 0.02 --legacy 1 --full 1
 *   --batches 4,8,12,16,24,32,48,64,96 --depths 1,2,3,4,6,8,12,16 --select 1,2,3 --held-out 4,5,6,7,8,9
 *   --modes charged,run --write 1]
 *
 * Sweeps one order-keeping chain (OracleChainPolicy) over batch sizes and depths and reports, for
 * each scenario, the cell chosen on the selection seeds and that cell's figure on the held-out
 * seeds, with the grid's edges. Modes: `charged` (the charged search bound, bounds.ts) and `run`
 * (culprits named by one run of the failed batch on the base: no bound on a pass/fail search, shown
 * for comparison). The grid is searched coarse then fine: every other size and depth first, then
 * the neighbours of the best cell in the full grid, climbing until the best cell's neighbours have
 * all been measured (a local optimum of the full grid); `--full 1` measures every cell. `--write 1` stores the charged results in
 * bounds-cache.json, which `bench:merge-queue` prints beside its tables. Progress goes to stderr.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { boundsKey, type ChargedBound, countingBound } from './bounds';
import { type OracleSearch, OracleChainPolicy } from './oracle-policy';
import { simulate } from './simulator';
import { LEGACY_MODEL, type Scenario } from './world';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const list = (text: string) => text.split(',').map(Number);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const rate = Number(arg('rate', '30'));
const flake = Number(arg('flake', '0.02'));
const prs = Number(arg('prs', '1500'));
const slow = Number(arg('slow', '0.1'));
const batches = list(arg('batches', '4,8,12,16,24,32,48,64,96'));
const depths = list(arg('depths', '1,2,3,4,6,8,12,16'));
const selectSeeds = list(arg('select', '1,2,3'));
const heldOut = list(arg('held-out', '4,5,6,7,8,9'));
const modes = arg('modes', 'charged,run').split(',') as OracleSearch[];
/** `--legacy 1`: the model until issue 40 (world.ts LEGACY_MODEL) instead of world.ts's defaults. */
const legacy = arg('legacy', '') !== '';
const started = performance.now();

interface Cell {
  value: number;
  goodFailed: number;
  violations: number;
}

function scenarioOf(bad: number, runners: number): Scenario {
  return {
    name: 'bounds',
    ratePerHour: rate,
    badRate: bad,
    flakeRate: flake,
    prs,
    conflictRate: 0.004,
    orderConflictRate: 0.01,
    slowRate: slow,
    runners,
    crashRate: 0,
    ...(legacy ? LEGACY_MODEL : {}),
  };
}

function measure(scenario: Scenario, mode: OracleSearch, batch: number, depth: number, seeds: number[]): Cell {
  const runs = seeds.map((seed) => simulate(scenario, seed, 'ours', { policy: (world) => new OracleChainPolicy(world, batch, depth, mode) }).metrics);
  return {
    value: mean(runs.map((m) => m.throughput)),
    goodFailed: runs.reduce((s, m) => s + m.goodFailed, 0),
    violations: runs.reduce((s, m) => s + m.violations + m.badLanded, 0),
  };
}

function sweep(scenario: Scenario, mode: OracleSearch): { bound: ChargedBound; table: string; heldOutCell: Cell; violations: number } {
  const measured = new Map<string, Cell>();
  const at = (i: number, j: number) => {
    const key = `${i},${j}`;
    let cell = measured.get(key);
    if (!cell) {
      const t = performance.now();
      cell = measure(scenario, mode, batches[i], depths[j], selectSeeds);
      measured.set(key, cell);
      process.stderr.write(
        `  ${mode} p=${scenario.badRate} runners=${scenario.runners} batch ${batches[i]} depth ${depths[j]}: ${cell.value.toFixed(3)} ` +
          `(${((performance.now() - t) / 1000).toFixed(1)} s, ${((performance.now() - started) / 60000).toFixed(1)} min in)\n`,
      );
    }
    return cell;
  };
  const best = () => {
    let b = { i: 0, j: 0, value: -1 };
    for (const [key, cell] of measured) {
      const [i, j] = key.split(',').map(Number);
      if (cell.value > b.value) b = { i, j, value: cell.value };
    }
    return b;
  };
  // Coarse: every other size and depth (always both ends); `--full 1`: every cell.
  const full = arg('full', '') !== '';
  const coarse = (n: number) => [...new Set([...Array.from({ length: n }, (_, k) => k).filter((k) => full || k % 2 === 0), n - 1])];
  for (const i of coarse(batches.length)) for (const j of coarse(depths.length)) at(i, j);
  // Fine: climb until every neighbour of the best cell is measured.
  for (;;) {
    const b = best();
    const before = measured.size;
    for (let di = -1; di <= 1; di++)
      for (let dj = -1; dj <= 1; dj++) {
        const i = b.i + di;
        const j = b.j + dj;
        if (i >= 0 && j >= 0 && i < batches.length && j < depths.length) at(i, j);
      }
    if (measured.size === before && best().i === b.i && best().j === b.j) break;
  }
  const b = best();
  const chosen = measured.get(`${b.i},${b.j}`) as Cell;
  const heldOutCell = measure(scenario, mode, batches[b.i], depths[b.j], heldOut);
  const onEdge = b.i === 0 || b.j === 0 || b.i === batches.length - 1 || b.j === depths.length - 1;
  const rows = batches.map((batch, i) => {
    const cells = depths.map((_, j) => {
      const c = measured.get(`${i},${j}`);
      if (!c) return '·';
      return i === b.i && j === b.j ? `**${c.value.toFixed(3)}**` : c.value.toFixed(3);
    });
    return `| ${batch} | ${cells.join(' | ')} |`;
  });
  const table = [`| batch \\ depth | ${depths.join(' | ')} |`, `|---|${depths.map(() => '---:').join('|')}|`, ...rows].join('\n');
  let violations = heldOutCell.violations;
  for (const c of measured.values()) violations += c.violations;
  return {
    bound: {
      value: heldOutCell.value,
      selection: chosen.value,
      batch: batches[b.i],
      depth: depths[b.j],
      edges: { batches: [batches[0], batches[batches.length - 1]], depths: [depths[0], depths[depths.length - 1]] },
      onEdge,
      selectionSeeds: selectSeeds,
      heldOutSeeds: heldOut,
      prs,
    },
    table,
    heldOutCell,
    violations,
  };
}

const entries: Array<ChargedBound & { key: string }> = [];
const TITLE: Record<OracleSearch, string> = {
  charged: 'charged search bound (culprits named once the search is charged one CI run per bit of information)',
  run: 'one-search-run oracle (culprits named by one run of the failed batch on the base; no bound on a pass/fail search)',
  free: 'free culprits',
};
for (const mode of modes) {
  for (const runners of list(arg('runners', '4,6'))) {
    for (const bad of list(arg('bad', '0.03,0.08'))) {
      const scenario = scenarioOf(bad, runners);
      const r = sweep(scenario, mode);
      const counting = countingBound(scenario);
      const g = r.bound;
      process.stdout.write(
        `\n## ${TITLE[mode]}: ${rate}/h p=${bad * 100}% f=${flake * 100}%, ${runners} runners, ${slow * 100}% slow PRs x3, ${prs} PRs, model ${legacy ? 'legacy (until issue 40)' : 'issue 40'}\n\n` +
          `Mean throughput / X* on seeds ${selectSeeds.join(',')} (· not measured: coarse then fine search of the grid; the chosen cell in bold)\n\n${r.table}\n\n` +
          `chosen on seeds ${selectSeeds.join(',')}: batch ${g.batch}, depth ${g.depth} (${g.selection.toFixed(3)}); ` +
          `held-out seeds ${heldOut.join(',')}: **${g.value.toFixed(3)}** (good PRs wrongly failed ${r.heldOutCell.goodFailed}); ` +
          `grid edges: batches ${g.edges.batches.join('-')}, depths ${g.edges.depths.join('-')}; ${g.onEdge ? 'the chosen cell is ON THE EDGE (the grid may not enclose the optimum)' : 'the chosen cell is inside the grid'}; ` +
          `invariant violations and bad PRs landed over every run: ${r.violations}; ` +
          `counting bound (any pass/fail design): ${counting.value.toFixed(3)} (${counting.runnerMinutesNeeded.toFixed(0)} runner-min/h needed, ${counting.available} available)\n`,
      );
      if (mode === 'charged') entries.push({ key: boundsKey(scenario), ...g });
    }
  }
}
if (arg('write', '') !== '' && entries.length > 0) {
  const file = join(__dirname, 'bounds-cache.json');
  const args = process.argv
    .slice(2)
    .join(' ')
    .replace(/--write \S+/, '')
    .trim();
  const command = `npm run bench:merge-queue-bounds${args ? ` -- ${args}` : ''}`;
  // entries of other scenarios (another model, rate or runner count) stay, each with the command that wrote it
  const old = JSON.parse(readFileSync(file, 'utf8')) as { entries: Array<{ key: string }> };
  const kept = old.entries.filter((e) => !entries.some((n) => n.key === e.key));
  const all = [...kept, ...entries.map((e) => ({ ...e, command }))];
  const text = JSON.stringify({ regenerate: 'npm run bench:merge-queue-bounds (each entry names the command that wrote it)', entries: all }, null, 2).replace(
    /\[\s*([\d.,\s]+?)\s*\]/g,
    (_, xs: string) => `[${xs.split(/,\s*/).join(', ')}]`,
  );
  writeFileSync(file, `${text}\n`);
  process.stderr.write(`wrote ${file}\n`);
}
process.stderr.write(`wall time ${((performance.now() - started) / 60000).toFixed(1)} min\n`);
