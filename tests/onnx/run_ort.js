#!/usr/bin/env node
// Runs exported models in onnxruntime and compares with yagrad's eager
// outputs.  Usage: node run_ort.js ORT_DIR DIR NAME...  where ORT_DIR is
// where the CTest fixture installed onnxruntime-node (tests/onnx/
// setup_ort.sh), DIR/NAME.onnx the model and DIR/NAME.json the case
// test_onnx wrote: inputs (name, dtype, dims, data) and the expected
// outputs, compared within atol + rtol * |expected| (1e-5 each for
// float32; exact for int64 and bool).  A NAME '@list' reads the names
// from DIR/list.txt.  Exit status 77 (CTest's skip) when onnxruntime-node
// is not installed, 1 on a mismatch.
'use strict';
const fs = require('fs');
const path = require('path');

const [ortDir, dir, ...args] = process.argv.slice(2);
let ort;
try {
  ort = require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  console.log(`SKIP: onnxruntime-node is not installed in ${ortDir} (${e.message.split('\n')[0]}); ` +
              'the onnx.ort_setup fixture installs it with npm (needs the npm registry)');
  process.exit(77);
}

const arrays = {float32: Float32Array, float64: Float64Array, int64: BigInt64Array,
                int32: Int32Array, bool: Uint8Array};

function names() {
  const out = [];
  for (const a of args) {
    if (a.startsWith('@')) {
      out.push(...fs.readFileSync(path.join(dir, a.slice(1) + '.txt'), 'utf8').split('\n').filter(Boolean));
    } else {
      out.push(a);
    }
  }
  return out;
}

function tensor(t) {
  const A = arrays[t.dtype];
  const data = t.dtype === 'int64' ? A.from(t.data.map(BigInt)) : A.from(t.data);
  return new ort.Tensor(t.dtype, data, t.dims);
}

// One run: feed c.inputs, compare with c.outputs; the worst |diff|.
async function runOnce(name, session, c, tol) {
  const feeds = {};
  for (const t of c.inputs) feeds[t.name] = tensor(t);
  const res = await session.run(feeds);
  let worst = 0;
  for (const e of c.outputs) {
    const got = res[e.name];
    if (!got) throw new Error(`${name}: output ${e.name} missing`);
    if (JSON.stringify(Array.from(got.dims)) !== JSON.stringify(e.dims))
      throw new Error(`${name}: output ${e.name} has dims [${got.dims}], expected [${e.dims}]`);
    const exact = e.dtype !== 'float32' && e.dtype !== 'float64';
    for (let i = 0; i < e.data.length; i++) {
      const g = Number(got.data[i]), x = e.data[i];
      const err = Math.abs(g - x);
      const bound = exact ? 0 : tol.atol + tol.rtol * Math.abs(x);
      const same = (Number.isNaN(g) && Number.isNaN(x)) || g === x || err <= bound;
      if (!same)
        throw new Error(`${name}: output ${e.name}[${i}] = ${g}, yagrad ${x} (|diff| ${err} > ${bound})`);
      if (!exact && Number.isFinite(err)) worst = Math.max(worst, err);
    }
  }
  return worst;
}

// A case holds one run (inputs, outputs) or several ("runs": a model
// exported with dynamic axes, run at sizes other than the traced ones).
async function runCase(name) {
  const c = JSON.parse(fs.readFileSync(path.join(dir, name + '.json'), 'utf8'));
  const session = await ort.InferenceSession.create(path.join(dir, name + '.onnx'),
                                                    {intraOpNumThreads: 1});
  const runs = c.runs || [c];
  const figures = [];
  for (const run of runs) {
    const worst = await runOnce(name, session, run, c);
    const dims = run.inputs.map((t) => `[${t.dims}]`).join(' ');
    figures.push(runs.length > 1 ? `${dims}: ${worst.toExponential(2)}` : worst.toExponential(2));
  }
  console.log(`${name}: ok (max |diff| ${figures.join(', ')})`);
}

(async () => {
  const list = names();
  for (const n of list) {
    try {
      await runCase(n);
    } catch (e) {
      console.log(`FAIL ${e.message}`);
      process.exit(1);
    }
  }
  console.log(`${list.length} models match yagrad in onnxruntime ${ort.env.versions ? ort.env.versions.common : ''}`);
})();
