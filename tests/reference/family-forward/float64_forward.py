"""An independent float64 forward pass of the stories260K family files, with numpy and gguf-py.

Teacher-forces each reference case (prompt + llama.cpp's 128 greedy tokens) through the model in
float64 and prints, per case, how far llama.cpp's recorded top-1 log-probabilities are from the
exact ones. It is the third opinion behind the bounds of tests/support/family_greedy_suite.hpp:
eredu's departures from llama.cpp are the same as this script's, to the digits it prints:
llama.cpp's own arithmetic is what departs.

Usage (EREDU_SHARED_DIR defaults to ../shared beside the repository):
  python3 float64_forward.py llama3rope 4     # family file suffix (or 'llama'), case index 0-4
Versions used: Python 3.11.7, numpy 2.4.6, gguf 0.19.0.
"""
import json
import os
import sys

import gguf
import numpy as np

shared = os.environ.get('EREDU_SHARED_DIR',
                        os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'shared'))
name = sys.argv[1]
neox = name in ('qwen2', 'qwen3')
model = 'stories260K.gguf' if name == 'llama' else f'stories260K-{name}.gguf'
reference = 'stories260K-F32-greedy.json' if name == 'llama' else f'stories260K-{name}-greedy.json'
r = gguf.GGUFReader(os.path.join(shared, 'models', model))
T={t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
f={k:v.parts[v.data[0]] for k,v in r.fields.items()}
arch=bytes(f['general.architecture']).decode()
g=lambda k: f[f'{arch}.{k}'][0]
L=int(g('block_count')); E=int(g('embedding_length')); H=int(g('attention.head_count')); HK=int(g('attention.head_count_kv'))
D=E//H; nrot=int(g('rope.dimension_count')); eps=float(g('attention.layer_norm_rms_epsilon'))
base=float(f[f'{arch}.rope.freq_base'][0]) if f'{arch}.rope.freq_base' in f else 10000.0
ff=T.get('rope_freqs.weight', np.ones(nrot//2))
def rms(x,w): return x/np.sqrt((x*x).mean(-1,keepdims=True)+eps)*w
def rope(x,n):  # x [T, n, D]
    T_=x.shape[0]; pos=np.arange(T_)[:,None]
    i=np.arange(nrot//2)
    th=pos*base**(-2*i/nrot)/ff
    c,s=np.cos(th)[:,None,:],np.sin(th)[:,None,:]
    x=x.copy()
    if neox: a,b=x[...,:nrot//2].copy(),x[...,nrot//2:nrot].copy()
    else: a,b=x[...,0:nrot:2].copy(),x[...,1:nrot:2].copy()
    na,nb=a*c-b*s,a*s+b*c
    if neox: x[...,:nrot//2],x[...,nrot//2:nrot]=na,nb
    else: x[...,0:nrot:2],x[...,1:nrot:2]=na,nb
    return x
ref = json.load(open(os.path.join(shared, 'reference', reference)))
c=ref['cases'][int(sys.argv[2])]
toks=c['prompt_tokens']+c['generated_tokens']
x=T['token_embd.weight'][toks]
n=len(toks)
for l in range(L):
    p=f'blk.{l}.'
    h=rms(x,T[p+'attn_norm.weight'])
    q=h@T[p+'attn_q.weight'].T; k=h@T[p+'attn_k.weight'].T; v=h@T[p+'attn_v.weight'].T
    if p+'attn_q.bias' in T: q+=T[p+'attn_q.bias']; k+=T[p+'attn_k.bias']; v+=T[p+'attn_v.bias']
    q=q.reshape(n,H,D); k=k.reshape(n,HK,D); v=v.reshape(n,HK,D)
    if p+'attn_q_norm.weight' in T: q=rms(q,T[p+'attn_q_norm.weight']); k=rms(k,T[p+'attn_k_norm.weight'])
    q=rope(q,H); k=rope(k,HK)
    rep=H//HK; k=np.repeat(k,rep,axis=1); v=np.repeat(v,rep,axis=1)
    sc=np.einsum('thd,shd->hts',q,k)/np.sqrt(D)
    mask=np.triu(np.ones((n,n)),1)*-1e30
    sc=sc+mask; sc-=sc.max(-1,keepdims=True); pr=np.exp(sc); pr/=pr.sum(-1,keepdims=True)
    a=np.einsum('hts,shd->thd',pr,v).reshape(n,H*D)
    x=x+a@T[p+'attn_output.weight'].T
    h=rms(x,T[p+'ffn_norm.weight'])
    gt=h@T[p+'ffn_gate.weight'].T; up=h@T[p+'ffn_up.weight'].T
    x=x+((gt/(1+np.exp(-gt)))*up)@T[p+'ffn_down.weight'].T
x=rms(x,T['output_norm.weight'])
out=T['output.weight'] if 'output.weight' in T else T['token_embd.weight']
lg=x@out.T
lg-=lg.max(-1,keepdims=True); lp=lg-np.log(np.exp(lg).sum(-1,keepdims=True))
P=len(c['prompt_tokens'])
d=[lp[P-1+i][c['top5_logprobs'][i][0]['id']]-c['top5_logprobs'][i][0]['logprob'] for i in range(128)]
d=np.abs(np.array(d)); print(name, sys.argv[2], 'numpy-vs-llama.cpp top1 max %.5f mean %.6f'%(d.max(), d.mean()))
