"""The `dwlit` command as a user runs it: the installed console script, in a subprocess."""
import os, shutil, subprocess, sys
from pathlib import Path

import numpy as np
import pytest

DWLIT = shutil.which('dwlit', path=str(Path(sys.executable).parent)) or shutil.which('dwlit')


def dwlit(*args, env=None):
    assert DWLIT, "the dwlit console script is not installed: pip install -e ."
    return subprocess.run([DWLIT, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_tour_runs_every_kernel_and_all_match():
    r = dwlit('tour')
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    kernels = [l for l in lines if l.startswith(('ok', 'FAIL'))]
    assert len(kernels) >= 6 and all(l.startswith('ok') for l in kernels), r.stdout
    for what in ('_default', '_f_packing', 'f01b_o01i_bf01', 'in_perm', 'bfloat16', 'dil=2,3'):
        assert any(what in l for l in kernels), f"no tour line covers {what}"
    for l in kernels:
        assert 'Tensor 0' in l and 'peak SBUF' in l and 'max error' in l and 'instructions' in l and 'us on trn1' in l
        assert l.endswith('as planned')
    assert lines[-1].startswith(f"{len(kernels)} of {len(kernels)} kernels match") and '0 PE-array' in lines[-1]
    assert r.stderr == ''            # no progress bar when stderr is not a terminal


def test_tour_progress_bar_on_request():
    r = dwlit('tour', '--progress', 'always')
    assert r.returncode == 0 and '6/6' in r.stderr and '[' in r.stderr and '#' in r.stderr


def test_explain_conv1d_happy_path():
    r = dwlit('explain', 'conv1d', '--shape', '4,256,1000', '--padding', '1,1', '--programs', '3')
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert 'dispatch: conv1d_depthwise_f_packing' in out and 'div_ceil(512, W_f=3) = 171' in out
    assert 'tiles_per_core = div_ceil(2, 3) = 1' in out and '2        idle' in out
    assert '5 x 513, 1 x 435' in out and '48 tensor_tensor + 48 tensor_reduce' in out
    assert 'total 10,072 of 196,608 B' in out
    assert 'predicted time on trn1:' in out and 'simulated run on zeros: 130 instructions' in out


def test_explain_prediction_is_gated_and_can_be_forced_or_skipped():
    big = ('explain', 'conv1d', '--shape', '64,1024,4096', '--programs', '2')
    r = dwlit(*big)
    assert r.returncode == 0 and 'not computed: the plan has 25,088 instructions' in r.stdout
    r = dwlit('explain', 'conv1d', '--shape', '1,128,100', '--no-predict')
    assert r.returncode == 0 and 'not computed (--no-predict)' in r.stdout
    r = dwlit('explain', 'conv2d', '--shape', '1,8,6,6', '--predict', '--target', 'trn3')
    assert r.returncode == 0 and 'predicted time on trn3' in r.stdout


def test_explain_conv1d_short_row_dispatches_to_default():
    r = dwlit('explain', 'conv1d', '--shape', '1,128,100', '--filter', '5', '--dtype', 'bfloat16', '--target', 'trn2')
    assert r.returncode == 0 and 'dispatch: conv1d_depthwise_default' in r.stdout and 'bfloat16' in r.stdout
    assert 'of 229,376 B' in r.stdout    # trn2: 224 KiB per partition


def test_explain_conv1d_too_wide_says_so():
    r = dwlit('explain', 'conv1d', '--shape', '1,1024,20000')
    assert r.returncode == 0 and 'DOES NOT FIT' in r.stdout


def test_explain_conv2d_happy_path():
    r = dwlit('explain', 'conv2d', '--shape', '2,64,32,32', '--lhs-dilation', '2,2', '--padding', '1', '--programs', '2')
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert 'img (64, 32, 32, 2) (C, H, W, N: f01b)' in out and 'out (2, 64, 63, 63)' in out
    assert 'max_h_tile_size 31' in out and 'H window' in out and 'dilation row' in out
    assert 'each of the 2 programs would compute all of them' in out
    assert 'tensor_tensor  one tap x one output row (L1015)' in out and 'total 37,512 of 196,608 B' in out


def test_explain_conv2d_in_perm():
    r = dwlit('explain', 'conv2d', '--shape', '1,8,5,6', '--in-perm', '--filter', '2,3', '--padding', '0,1,2,0')
    assert r.returncode == 0, r.stderr
    assert 'fb10' in r.stdout and 'Vector engine first' in r.stdout and 'dve_transpose' in r.stdout


@pytest.mark.parametrize('args, says', [
    (['explain', 'conv1d', '--shape', '4,256'], "--shape must be 3 comma-separated integers N,C,W"),
    (['explain', 'conv1d', '--shape', 'a,b,c'], "--shape must be 3"),
    (['explain', 'conv1d', '--shape', '4,0,10'], "--shape values must be >= 1"),
    (['explain', 'conv1d', '--shape', '4,256,1000', '--padding', '-1'], "--padding values must be >= 0"),
    (['explain', 'conv2d', '--shape', '1,1,100000000,8'], "--shape values must be <= 10,000,000"),
    (['explain', 'conv1d', '--shape', '4,256,1000', '--padding', '1,2,3'], "--padding must be 1 or 2"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--filter', '600'], "W_f must be < 512"),
    (['explain', 'conv1d', '--shape', '1,8,2', '--filter', '5'], "W_out"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--lhs-dilation', '2'], "lhs_dilation must be 1"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--programs', '0'], "--programs must be >= 1"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--programs', 'many'], "invalid int value: 'many'"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--dtype', 'float64'], "invalid choice: 'float64'"),
    (['explain', 'conv2d', '--shape', '1,8,4,4', '--filter', '9,9'], "larger than the dilated, padded image"),
    (['explain', 'conv2d', '--shape', '1,8,4,4', '--lhs-dilation', '0'], "--lhs-dilation values must be >= 1"),
    (['explain', 'conv2d', '--shape', '1,8,4'], "--shape must be 4 comma-separated integers N,C,H,W"),
    (['explain', 'conv2d', '--shape', '1,8,4,20000', '--lhs-dilation', '4'], "image too wide for one SBUF partition"),
    (['explain', 'conv3d', '--shape', '1,2,3'], "invalid choice: 'conv3d'"),
    (['explain', 'conv1d'], "the following arguments are required: --shape"),
    (['tour', '--progress', 'sometimes'], "invalid choice: 'sometimes'"),
    (['frobnicate'], "invalid choice: 'frobnicate'"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--predict', '--no-predict'], "not allowed with argument"),
    ([], "the following arguments are required"),
])
def test_bad_arguments_one_line_status_2(args, says):
    r = dwlit(*args)
    assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
    assert r.stdout == ''
    assert r.stderr.count('\n') == 1 and says in r.stderr, r.stderr
    assert 'Traceback' not in r.stderr


def test_help_is_not_an_error():
    for args in (['--help'], ['explain', '--help'], ['tour', '--help']):
        r = dwlit(*args)
        assert r.returncode == 0 and 'usage: dwlit' in r.stdout


def test_the_tour_reports_a_wrong_kernel(monkeypatch, capsys):
    "The tour can fail: with a kernel that adds a small error, its line says FAIL and the status is 1."
    from dwlit import cli
    real = cli.tour_cases
    def broken(seed=0):
        cases = real(seed)
        k = cases[0].kernel
        cases[0].kernel = lambda *a, **kw: _plus(getattr(k, 'func', k)(*a, **kw))
        return cases
    def _plus(t):  # the kernel's output tensor, nudged by 1e-3 in one element
        t.data[0, 0, 0, 0] += 1e-3
        return t
    monkeypatch.setattr(cli, 'tour_cases', broken)
    status = cli.main(['tour', '--progress', 'never'])
    out = capsys.readouterr().out
    assert status == 1 and out.splitlines()[0].startswith('FAIL') and out.splitlines()[-1].startswith('5 of 6')
