#!/usr/bin/env python3
"""Writes testdata/mxnet_rnn/: MXNet symbol files using the fused RNN
operator (lstm, gru, rnn_tanh, rnn_relu; several layers, bidirectional)
with their .params, an input and the expected outputs, computed by
PyTorch's nn.LSTM/GRU/RNN, whose weights have the cuDNN layout MXNet's RNN
packs into its parameter vector (per layer and direction: i2h weight, h2h
weight; then per layer and direction: i2h bias, h2h bias; LSTM gates
i, f, g, o; GRU gates r, z, n with the reset applied after the recurrent
product).  Run with Debian's /usr/bin/python3 (torch, numpy)."""
import json, struct, sys, os
import numpy as np
import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'testdata', 'mxnet_rnn')

def ndarray_record(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = struct.pack('<Ii', 0xF993FAC9, 0)                        # V2, dense
    b += struct.pack('<i', a.ndim) + struct.pack('<%dq' % a.ndim, *a.shape)
    b += struct.pack('<ii', 1, 0)                                # cpu(0)
    b += struct.pack('<i', 0)                                    # float32
    return b + a.tobytes()

def save_params(path, named):
    b = struct.pack('<QQQ', 0x112, 0, len(named))
    for _, a in named:
        b += ndarray_record(a)
    b += struct.pack('<Q', len(named))
    for n, _ in named:
        nb = n.encode()
        b += struct.pack('<Q', len(nb)) + nb
    open(path, 'wb').write(b)

def save_npy(path, a):
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))

def case(name, mode, layers, bidir, T, B, I, H, seed):
    torch.manual_seed(seed)
    cls = {'lstm': torch.nn.LSTM, 'gru': torch.nn.GRU}.get(mode)
    if cls:
        m = cls(I, H, num_layers=layers, bidirectional=bidir)
    else:
        m = torch.nn.RNN(I, H, num_layers=layers, bidirectional=bidir,
                         nonlinearity='relu' if mode == 'rnn_relu' else 'tanh')
    D = 2 if bidir else 1
    x = torch.randn(T, B, I)
    h0 = torch.randn(layers * D, B, H)
    c0 = torch.randn(layers * D, B, H)
    with torch.no_grad():
        if mode == 'lstm':
            y, (hn, cn) = m(x, (h0, c0))
        else:
            y, hn = m(x, h0)
    sfx = ['', '_reverse']
    ws, bs = [], []
    for l in range(layers):
        for d in range(D):
            ws += [getattr(m, 'weight_ih_l%d%s' % (l, sfx[d])), getattr(m, 'weight_hh_l%d%s' % (l, sfx[d]))]
            bs += [getattr(m, 'bias_ih_l%d%s' % (l, sfx[d])), getattr(m, 'bias_hh_l%d%s' % (l, sfx[d]))]
    packed = torch.cat([t.detach().reshape(-1) for t in ws + bs]).numpy()
    nodes = [
        {'op': 'null', 'name': 'data', 'inputs': []},
        {'op': 'null', 'name': 'rnn_parameters', 'inputs': []},
        {'op': 'null', 'name': 'state', 'inputs': []},
    ]
    ins = [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    if mode == 'lstm':
        nodes.append({'op': 'null', 'name': 'state_cell', 'inputs': []})
        ins.append([3, 0, 0])
    nodes.append({'op': 'RNN', 'name': 'rnn', 'inputs': ins,
                  'attrs': {'bidirectional': str(bidir), 'mode': mode, 'num_layers': str(layers), 'p': '0.2',
                            'state_outputs': 'True', 'state_size': str(H)}})
    r = len(nodes) - 1
    heads = [[r, 0, 0], [r, 1, 0]] + ([[r, 2, 0]] if mode == 'lstm' else [])
    sym = {'nodes': nodes, 'arg_nodes': list(range(r)), 'node_row_ptr': list(range(r + 1)) + [r + len(heads)],
           'heads': heads, 'attrs': {'mxnet_version': ['int', 10901]}}
    with open(os.path.join(OUT, name + '-symbol.json'), 'w') as f:
        json.dump(sym, f, indent=2)
        f.write('\n')
    save_params(os.path.join(OUT, name + '-0000.params'), [('arg:rnn_parameters', packed)])
    save_npy(os.path.join(OUT, name + '.data.npy'), x.numpy())
    save_npy(os.path.join(OUT, name + '.state.npy'), h0.numpy())
    if mode == 'lstm':
        save_npy(os.path.join(OUT, name + '.state_cell.npy'), c0.numpy())
    save_npy(os.path.join(OUT, name + '.out.npy'), y.numpy())
    save_npy(os.path.join(OUT, name + '.hy.npy'), hn.numpy())
    if mode == 'lstm':
        save_npy(os.path.join(OUT, name + '.cy.npy'), cn.numpy())

os.makedirs(OUT, exist_ok=True)
case('lstm2bi', 'lstm', 2, True, 4, 2, 3, 5, 1)
case('gru1', 'gru', 1, False, 5, 3, 4, 3, 2)
case('gru2bi', 'gru', 2, True, 3, 2, 4, 3, 3)
case('rnntanh2', 'rnn_tanh', 2, False, 4, 1, 2, 3, 4)
case('rnnrelu1bi', 'rnn_relu', 1, True, 3, 2, 3, 4, 5)
