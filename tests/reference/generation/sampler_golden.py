#!/usr/bin/env python3
# Prints the golden token stream pinned in tests/unit/generation/test_sampler.cpp
# (SamplerGolden.SeededStreamMatchesAnIndependentPythonImplementation). Standard library only;
# run with Python 3.11.7. The SplitMix64 / xoshiro256** vectors in test_rng.cpp come from the
# same two generator functions (sm, xo).
# Independent Python re-implementation of the documented sampler draw (softmax of logit/T in
# double, xoshiro256** seeded by SplitMix64, u = (x >> 11) * 2^-53, inverse CDF in id order).
import math, struct, sys
M=(1<<64)-1
def f32(x): return struct.unpack('f',struct.pack('f',x))[0]
def sm(seed):
    s=seed
    while True:
        s=(s+0x9E3779B97F4A7C15)&M
        z=s
        z=((z^(z>>30))*0xBF58476D1CE4E5B9)&M
        z=((z^(z>>27))*0x94D049BB133111EB)&M
        yield z^(z>>31)
def rotl(x,k): return ((x<<k)|(x>>(64-k)))&M
def xo(seed):
    g=sm(seed); s=[next(g) for _ in range(4)]
    while True:
        r=(rotl((s[1]*5)&M,7)*9)&M
        t=(s[1]<<17)&M
        s[2]^=s[0]; s[3]^=s[1]; s[1]^=s[2]; s[0]^=s[3]; s[2]^=t; s[3]=rotl(s[3],45)
        yield r
logits=[f32(x) for x in (0.2,0.5,0.1,0.4,0.3)]
T=f32(0.9)
g=xo(42)
out=[]
for _ in range(24):
    m=max(logits); inv=1.0/T
    w=[math.exp((l-m)*inv) for l in logits]
    tot=0.0
    for wi in w: tot+=wi
    u=(next(g)>>11)*2**-53*tot
    c=0.0
    for i,wi in enumerate(w):
        c+=wi
        if u<c: out.append(i); break
print(out)
