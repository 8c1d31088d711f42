"""Writes testdata/onnx_rnn/: single-node ONNX LSTM/GRU/RNN models (opset 14)
with what ONNX's own test data does not cover (bidirectional with clip,
peepholes and sequence_lens; reverse with input_forget; activations with
alpha/beta; linear_before_reset), their inputs, and cases.json.  The
expected outputs NAME.ort.OUT.npy are ONNX Runtime's (onnxruntime-node,
CPU, layout 0 only): run scripts/onnx_rnn_ort_fixtures.js in that folder.
Run with Debian's /usr/bin/python3 (onnx, numpy)."""
import numpy as np, onnx, json, sys, os, zlib
from onnx import helper as h, TensorProto as TP
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'testdata', 'onnx_rnn')
os.makedirs(OUT, exist_ok=True)
os.chdir(OUT)
cases = []
def mk(name, op, attrs, T=4, B=3, I=2, H=3, D=1, layout=0, seq=None, init=True, peep=False, opset=14):
    G = {'LSTM': 4, 'GRU': 3, 'RNN': 1}[op]
    rng = np.random.RandomState(zlib.crc32(name.encode()) % 1000)
    W = rng.randn(D, G*H, I).astype(np.float32); R = rng.randn(D, G*H, H).astype(np.float32)
    Bb = rng.randn(D, 2*G*H).astype(np.float32)
    xs = (B, T, I) if layout else (T, B, I); ss = (B, D, H) if layout else (D, B, H)
    inits = [h.make_tensor('W', TP.FLOAT, W.shape, W.ravel()), h.make_tensor('R', TP.FLOAT, R.shape, R.ravel()),
             h.make_tensor('B', TP.FLOAT, Bb.shape, Bb.ravel())]
    ins = ['X', 'W', 'R', 'B', '', '', '', '']
    gin = [h.make_tensor_value_info('X', TP.FLOAT, xs)]
    feeds = {'X': rng.randn(*xs).astype(np.float32)}
    if seq is not None:
        inits.append(h.make_tensor('L', TP.INT32, [B], seq)); ins[4] = 'L'
    if init:
        ins[5] = 'h0'; gin.append(h.make_tensor_value_info('h0', TP.FLOAT, ss)); feeds['h0'] = rng.randn(*ss).astype(np.float32)
        if op == 'LSTM':
            ins[6] = 'c0'; gin.append(h.make_tensor_value_info('c0', TP.FLOAT, ss)); feeds['c0'] = rng.randn(*ss).astype(np.float32)
    if peep:
        P = rng.randn(D, 3*H).astype(np.float32); inits.append(h.make_tensor('P', TP.FLOAT, P.shape, P.ravel())); ins[7] = 'P'
    n_in = {'LSTM': 8, 'GRU': 6, 'RNN': 6}[op]
    ins = ins[:n_in]
    while ins and ins[-1] == '': ins.pop()
    outs = ['Y', 'Y_h'] + (['Y_c'] if op == 'LSTM' else [])
    node = h.make_node(op, ins, outs, hidden_size=H, layout=layout, **attrs)
    g = h.make_graph([node], name, gin, [h.make_tensor_value_info(o, TP.FLOAT, ['d%d' % i for i in range(4 if o == 'Y' else 3)]) for o in outs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)]); m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, name + '.onnx')
    for k, v in feeds.items(): np.save('%s.%s.npy' % (name, k), v)
    cases.append((name, list(feeds.keys()), outs))
mk('lstm_bi_clip_seq', 'LSTM', dict(direction='bidirectional', clip=0.7), D=2, seq=[4, 2, 3], peep=True)
mk('lstm_rev_if', 'LSTM', dict(direction='reverse', input_forget=1), seq=[1, 4, 2])
mk('lstm_acts', 'LSTM', dict(activations=['HardSigmoid', 'LeakyRelu', 'Softsign'], activation_alpha=[0.3, 0.05], activation_beta=[0.4]), init=False)
mk('gru_bi_seq', 'GRU', dict(direction='bidirectional', clip=1.2), D=2, seq=[3, 4, 1])
mk('gru_lbr_acts', 'GRU', dict(linear_before_reset=1, activations=['Sigmoid', 'Elu'], activation_alpha=[0.8]), seq=[2, 4, 4])
mk('rnn_bi_relu', 'RNN', dict(direction='bidirectional', activations=['Relu', 'Tanh']), D=2, seq=[4, 1, 3])
mk('rnn_rev', 'RNN', dict(direction='reverse'), init=False)
json.dump(cases, open('cases.json', 'w'), indent=1)
