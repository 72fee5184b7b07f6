#!/usr/bin/env node
// onnxruntime's forward time of an exported LSTM cell (batch 20, hidden
// 650; issue 14's comparison).  Usage:
//   node bench/bench_onnx_lstm_cell.js ORT_DIR MODEL.onnx [MODEL2.onnx ...]
// ORT_DIR holds node_modules/onnxruntime-node (CTest's onnx.ort_setup
// installs it into build/<preset>/tests/onnxruntime-node); the yagrad
// model is written by `test_onnx test_export_lstm_cell_650_for_the_benchmark`
// (tests/onnx_out/lstm_cell_650.onnx) and a PyTorch export of
// torch.nn.LSTMCell(650, 650) by bench/export_torch_lstm_cell.py, so both
// run in one process on the same machine.  Inputs are x, h, c (any
// names: taken in the model's order).  Prints one JSON line per model:
// best and median of 200 runs after 20 warm-up runs, at 2 intra-op
// threads (OMP-style: YG_BENCH_THREADS overrides).
'use strict';
const path = require('path');
const [ortDir, ...models] = process.argv.slice(2);
const ort = require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node'));
const threads = Number(process.env.YG_BENCH_THREADS || 2);

function rand(n) {
  const a = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    a[i] = (s / 4294967296) * 2 - 1;
  }
  return a;
}

(async () => {
  for (const m of models) {
    const session = await ort.InferenceSession.create(m, {intraOpNumThreads: threads,
                                                          interOpNumThreads: 1});
    const feeds = {};
    for (const name of session.inputNames)
      feeds[name] = new ort.Tensor('float32', rand(20 * 650), [20, 650]);
    for (let i = 0; i < 20; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(JSON.stringify({bench: 'onnxruntime_lstm_cell', model: path.basename(m), threads,
                                batch: 20, hidden: 650, best_ms: +times[0].toFixed(4),
                                median_ms: +times[100].toFixed(4)}));
  }
})();
