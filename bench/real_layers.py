"""The real layers of chapter 25 (`dwlit.apps.layers`) as benchmark shapes: one representative layer per network, and the two
kinds of layer the kernels refuse (a filter of 512 taps or more, a stride of 2), which print the kernel's error.

    python bench/bench_conv1d.py --layers real_layers:BENCH_1D      # the 1D ones
    python bench/bench_conv2d.py --layers real_layers:BENCH_2D      # the 2D ones
    python bench/bench_layers.py                                    # both, in one run (see there)
"""
from dwlit.apps.layers import LAYERS, in_contract, programs_to_fit

PICKS = {                      # network: its representative layer (the heaviest that still runs in seconds)
    'Mamba': 'mamba-790m',                        # 1D, k=4, causal padding, 3072 channels: 3 programs on trn1
    'Conformer': 'conformer-l',                   # 1D, k=31, 'same' padding, 512 channels
    'speech front end': 'speech-frontend',        # 1D, k=8, 512 channels, W=5000
    'long convolution': 'long-conv',              # 1D, 1024 taps: out of the kernels' contract
    'MobileNetV2': 'mobilenetv2-144x56',          # 2D, 3x3
    'ConvNeXt-T': 'convnext-t-96x56',             # 2D, 7x7
    'EfficientNet-B0': 'efficientnet-b0-240x28',  # 2D, 5x5
    'MobileNetV2, stride 2': 'mobilenetv2-144x56-s2',   # out of the kernel's contract
}
BATCHES = (1, 2)               # batch 1 and a small batch, as chapter 25 runs them


def shape(name, N=1, target='trn1') -> dict:
    "The benchmark shape dict of layer `name` for batch `N` (bench_conv1d / bench_conv2d keys)."
    l = LAYERS[name]
    label = f"{name} N={N}"
    if l.dims == 1:
        d = dict(name=label, N=N, C=l.C, W=l.size[0], W_f=l.kernel[0], padding=tuple(l.padding[0]))
        if not in_contract(l): d['programs'] = programs_to_fit(l, target, N)[0]   # else the kernel says why not
        return d
    d = dict(name=label, C=l.C, N=N, H=l.size[0], W=l.size[1], k_H=l.kernel[0], k_W=l.kernel[1],
             padding=tuple(tuple(p) for p in l.padding))
    if l.stride != 1: d['stride'] = (l.stride, l.stride)
    return d


def BENCH_1D(batches=BATCHES):
    return [shape(n, N) for n in PICKS.values() if LAYERS[n].dims == 1 for N in batches]


def BENCH_2D(batches=BATCHES):
    return [shape(n, N) for n in PICKS.values() if LAYERS[n].dims == 2 for N in batches]
