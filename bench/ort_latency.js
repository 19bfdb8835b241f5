// ort_latency.js — ONNX Runtime (onnxruntime-node, CPU provider) latency
// for one model: the peer tinyrt-perf is compared against.
//   node bench/ort_latency.js MODEL.onnx [threads] [runs] [warmup]
// Prints one JSON object: {"median_ms": ..., "min_ms": ..., "runs": ...}.
const ort = require('onnxruntime-node');

async function main() {
  const [model, threads = '1', runs = '20', warmup = '3'] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const [i, name] of session.inputNames.entries()) {
    // Each input's shape from the model (symbolic dimensions as 1): images,
    // MFCCs, audio, sequences. ORT 1.30's inputMetadata is an array in
    // input order; older versions have no metadata (torchvision's image).
    const md = session.inputMetadata;
    const meta = Array.isArray(md) ? md[i] : md ? md[name] : null;
    const type = meta && meta.type ? meta.type : 'float32';
    if (type !== 'float32' && type !== 'bool') throw new Error(`input ${name}: type ${type} is not float32 or bool`);
    const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' ? d : 1)) : [1, 3, 224, 224];
    const n = dims.reduce((a, b) => a * b, 1);
    if (type === 'bool') {
      // false, as tinyrt-perf's zeros: an If on it takes the same branch in both.
      feeds[name] = new ort.Tensor('bool', new Uint8Array(n), dims);
      continue;
    }
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = (i % 255) / 255;
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], min_ms: times[0], runs: times.length,
                               threads: Number(threads), ort_version: require('onnxruntime-node/package.json').version }));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
