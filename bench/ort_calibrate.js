// ort_calibrate.js — min/max calibration for bench/make_qdq.py: runs a model
// whose tensors to calibrate are graph outputs in ONNX Runtime (onnxruntime-node,
// CPU provider) on every sample and prints the range of each tensor.
//   node bench/ort_calibrate.js MODEL.onnx INPUTS.json
//   node bench/ort_calibrate.js MODEL.onnx --seed S [--samples N]
// INPUTS.json: one object per sample, [{"input name": {"dims": [...], "data": [...]}}, ...].
// With --seed: N (default 8) samples from a seeded generator, shaped from the
// model's input metadata (symbolic dimensions as 1): uniform [0,1) for 4-D
// (image) inputs, standard normal otherwise.
// Prints one JSON object {tensor_name: [min, max]} over all samples, graph
// inputs and outputs alike; NaNs are ignored.
const fs = require('fs');
const ort = require('onnxruntime-node');

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seededSamples(session, seed, count) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const md = session.inputMetadata;
  const samples = [];
  for (let s = 0; s < count; ++s) {
    const sample = {};
    for (const [i, name] of session.inputNames.entries()) {
      const meta = Array.isArray(md) ? md[i] : md ? md[name] : null;
      const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' ? d : 1)) : [1, 3, 224, 224];
      const n = dims.reduce((a, b) => a * b, 1);
      const data = new Float32Array(n);
      for (let k = 0; k < n; ++k) data[k] = dims.length === 4 ? rand() : normal();
      sample[name] = { dims, data };
    }
    samples.push(sample);
  }
  return samples;
}

function widen(ranges, name, data) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < data.length; ++i) {
    const v = data[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo > hi) return; // empty or all NaN
  const r = ranges[name];
  ranges[name] = r ? [Math.min(r[0], lo), Math.max(r[1], hi)] : [lo, hi];
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) throw new Error('usage: ort_calibrate.js MODEL.onnx INPUTS.json | --seed S [--samples N]');
  const session = await ort.InferenceSession.create(args[0], {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'basic',
  });
  let samples;
  if (args[1] === '--seed') {
    const i = args.indexOf('--samples');
    samples = seededSamples(session, Number(args[2]), i > 0 ? Number(args[i + 1]) : 8);
  } else {
    samples = JSON.parse(fs.readFileSync(args[1], 'utf8'));
  }
  const ranges = {};
  for (const sample of samples) {
    const feeds = {};
    for (const [name, { dims, data }] of Object.entries(sample)) {
      const t = new ort.Tensor('float32', Float32Array.from(data), dims);
      feeds[name] = t;
      widen(ranges, name, t.data);
    }
    const out = await session.run(feeds);
    for (const [name, t] of Object.entries(out)) if (t.type === 'float32') widen(ranges, name, t.data);
  }
  console.log(JSON.stringify(ranges));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
