// Runs the models of testdata/onnx_rnn (cases.json) in ONNX Runtime and
// writes NAME.ort.OUT.npy beside them.
// Usage: cd testdata/onnx_rnn && ORT_DIR=/path/with/node_modules node ../../scripts/onnx_rnn_ort_fixtures.js
const path = require('path'); const fs = require('fs');
const ort = require(path.join(process.env.ORT_DIR, 'node_modules', 'onnxruntime-node'));
function readNpy(p) {
  const b = fs.readFileSync(p); const hl = b.readUInt16LE(8); const hd = b.slice(10, 10 + hl).toString();
  const shape = hd.match(/'shape': \(([^)]*)\)/)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  return new ort.Tensor('float32', new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length)), shape);
}
function writeNpy(p, t) {
  let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${t.dims.join(', ')}${t.dims.length == 1 ? ',' : ''}), }`;
  while ((10 + h.length + 1) % 64) h += ' ';
  h += '\n';
  const head = Buffer.alloc(10); head.write('\x93NUMPY', 'latin1'); head[6] = 1; head[7] = 0; head.writeUInt16LE(h.length, 8);
  fs.writeFileSync(p, Buffer.concat([head, Buffer.from(h, 'latin1'), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]));
}
(async () => {
  for (const [name, ins, outs] of JSON.parse(fs.readFileSync('cases.json'))) {
    const s = await ort.InferenceSession.create(name + '.onnx', { intraOpNumThreads: 1 });
    const feeds = {}; for (const k of ins) feeds[k] = readNpy(name + '.' + k + '.npy');
    const r = await s.run(feeds);
    for (const o of outs) writeNpy(name + '.ort.' + o + '.npy', r[o]);
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
