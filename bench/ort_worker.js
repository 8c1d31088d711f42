// ONNX Runtime side of bench_ort (bench/bench_ort.c drives it through pipes).
// Usage: node ort_worker.js MODEL.onnx INPUT.npy THREADS WARMUP OUT.npy
// Loads MODEL into onnxruntime-node (found in $ORT_DIR/node_modules), feeds
// INPUT.npy (float32, C order) to the first input, runs WARMUP times, writes
// the first output to OUT.npy and prints "ready".  Then each "run" line on
// stdin runs the model once and prints its latency in milliseconds; end of
// input ends the process.  A run's line is "WALL_MS CPU_MS" (CPU time of
// the whole process during the run: user + system).
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

function fail(msg) {
  process.stderr.write('ort_worker: ' + msg + '\n');
  process.exit(1);
}

const dir = process.env.ORT_DIR;
if (!dir) fail('ORT_DIR is not set (the folder where `npm install onnxruntime-node` was run)');
let ort;
try {
  ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  fail('cannot load onnxruntime-node from ' + dir + '/node_modules: ' + e.message);
}

// A float32 C-order .npy file: [Float32Array, dims].
function npyRead(file) {
  const b = fs.readFileSync(file);
  if (b.length < 10 || b.toString('latin1', 0, 6) !== '\x93NUMPY') fail(file + ': not a .npy file');
  const major = b[6];
  const hlen = major >= 2 ? b.readUInt32LE(8) : b.readUInt16LE(8);
  const off = major >= 2 ? 12 + hlen : 10 + hlen;
  const head = b.toString('latin1', major >= 2 ? 12 : 10, off);
  if (!/'descr':\s*'<f4'/.test(head) || /'fortran_order':\s*True/.test(head)) fail(file + ': expected little-endian float32 in C order');
  const m = head.match(/'shape':\s*\(([^)]*)\)/);
  if (!m) fail(file + ': no shape in the header');
  const dims = m[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const copy = new Uint8Array(b.length - off);
  copy.set(b.subarray(off));
  return [new Float32Array(copy.buffer), dims];
}

function npyWrite(file, data, dims) {
  let head = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims.join(', ') + (dims.length === 1 ? ',' : '') + '), }';
  const pad = 64 - ((10 + head.length + 1) % 64);
  head += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(head.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(head, 'latin1'), body]));
}

(async () => {
  const [model, input, threadsArg, warmupArg, out] = process.argv.slice(2);
  if (!out) fail('usage: node ort_worker.js MODEL INPUT.npy THREADS WARMUP OUT.npy');
  const threads = Number(threadsArg);
  const warmup = Math.max(1, Number(warmupArg));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const [x, dims] = npyRead(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x, dims) };
  let r;
  for (let i = 0; i < warmup; i++) r = await session.run(feeds);
  const y = r[session.outputNames[0]];
  npyWrite(out, y.data, y.dims);
  process.stdout.write('ready\n');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line.trim() !== 'run') continue;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = process.cpuUsage(c0);
    process.stdout.write(ms.toFixed(4) + ' ' + ((c.user + c.system) / 1000).toFixed(4) + '\n');
  }
})().catch((e) => fail(String(e && e.message ? e.message : e)));
