"""The real layers of chapter 25 through the simulator, against the fastest direct NumPy and their instruction streams run bare, in one run.

    python bench/bench_layers.py [--repeat 5] [--batch 1 2] [--only 1d|2d] [--dtype float32] [--threads 1]
                                 [--clock cpu|wall] [--memory reuse|default] [--impl DIR] [--profile]

One representative layer per network (real_layers.PICKS: Mamba, the Conformer, a speech front end, MobileNetV2,
ConvNeXt-T, EfficientNet-B0) at batch 1 and 2, measured exactly as bench_conv1d.py and bench_conv2d.py measure their
shapes (same columns, same targets line); the long-convolution layer and a stride-2 layer print the kernel's error
instead, since they are out of its contract. About two minutes on a quiet machine with --repeat 5.
"""
import argparse

from benchlib import set_memory_from_argv, set_threads_from_argv, use_impl_from_argv

THREADS = set_threads_from_argv()
MEMORY = set_memory_from_argv()
IMPL = use_impl_from_argv()
import bench_conv1d as b1
import bench_conv2d as b2
import real_layers
from benchlib import add_common_args, report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--batch', type=int, nargs='*', default=list(real_layers.BATCHES))
    ap.add_argument('--only', choices=['1d', '2d'])
    add_common_args(ap)
    a = ap.parse_args(argv)
    report([(mod.run_shape, sh)
            for dims, mod, shapes in (('1d', b1, real_layers.BENCH_1D), ('2d', b2, real_layers.BENCH_2D))
            if not a.only or a.only == dims for sh in shapes(a.batch)],
           a, f"Real layers (chapter 25), batch {' and '.join(map(str, a.batch))}", IMPL, THREADS, MEMORY)

if __name__ == '__main__':
    main()
