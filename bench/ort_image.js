// ort_image.js — ONNX Runtime (onnxruntime-node, CPU provider, 1 intra-op
// and 1 inter-op thread, all graph optimizations) latency for a model with
// one float32 input given as raw bytes: a detector's data-dependent work
// depends on the image, so both runtimes must see the same one.
//   node bench/ort_image.js MODEL.onnx INPUT.bin D0,D1,... [runs]
// Prints {"median_ms": ..., "min_ms": ..., "runs": ..., "output0_dims": [...]}.
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
  const [model, file, dims, runs = '10'] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const buf = fs.readFileSync(file);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, dims.split(',').map(Number))};
  let out;
  for (let i = 0; i < 2; ++i) out = await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const first = out[session.outputNames[0]];
  console.log(JSON.stringify({median_ms: times[Math.floor(times.length / 2)], min_ms: times[0], runs: times.length,
                              output0_dims: first.dims}));
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
