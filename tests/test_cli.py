"""The `dwlit` command as a user runs it: the installed console script, in a subprocess."""
import os, re, shutil, subprocess, sys
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
    kernels = [l for l in lines if l.startswith(('ok ', 'FAIL '))]
    assert len(kernels) >= 6 and all(l.startswith('ok') for l in kernels), r.stdout
    for what in ('_default', '_f_packing', 'H tiles', 'T+', 'bfloat16', 'd2,3', 'fb10'):
        assert any(what in l for l in kernels), f"no tour line covers {what}"
    header = next(l for l in lines if 'kernel path' in l)
    for col in ('input', 'programs', 'Vec', 'DMA', 'PE', 'SBUF B', 'max err', 'us'): assert col in header
    pe = header.index(' PE') + 3                                     # the PE array's column, right-aligned
    assert all(l[pe - 1] == '0' and l[pe - 2] == ' ' for l in kernels), "a kernel used the PE array"
    assert lines[-1].startswith(f"{len(kernels)} of {len(kernels)} kernels match") and '0 PE-array' in lines[-1]
    assert r.stderr == ''            # no progress bar when stderr is not a terminal


def test_tour_reads_in_100_columns_with_aligned_columns():
    lines = dwlit('tour').stdout.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    header = next(i for i, l in enumerate(lines) if 'kernel path' in l)
    rows = [l for l in lines if l.startswith(('ok ', 'FAIL '))]
    assert lines[header + 1:header + 1 + len(rows)] == rows          # the rows right under the header
    for name in ('Vec', 'DMA', 'SBUF B', 'max err', 'us'):           # numbers end where their header ends
        end = lines[header].index(name) + len(name)
        assert all(l[end - 1] != ' ' and l[end:end + 1] in ('', ' ') for l in rows), (name, rows)
    for name in ('input', 'kernel path', 'programs'):                # words start where their header starts
        start = lines[header].index(name)
        assert all(l[start - 1] == ' ' and l[start] != ' ' for l in rows), (name, rows)
    assert any(l.startswith('max err:') for l in lines) and any(l.startswith('input:') for l in lines)


def test_tour_progress_bar_on_request():
    r = dwlit('tour', '--progress', 'always')
    assert r.returncode == 0 and '6/6' in r.stderr and '[' in r.stderr and '#' in r.stderr


def test_explain_conv1d_happy_path():
    r = dwlit('explain', 'conv1d', '--shape', '4,256,1000', '--padding', '1,1', '--programs', '3')
    assert r.returncode == 0, r.stderr
    out, flat = r.stdout, ' '.join(r.stdout.split())          # prose wraps at 100 columns; tables do not
    assert 'dispatch: conv1d_depthwise_f_packing' in flat and 'div_ceil(512, W_f=3) = 171' in flat
    assert 'tiles_per_core = div_ceil(2, 3) = 1' in flat and '\n  2        idle' in out
    assert '5 x 513, 1 x 435' in flat and '48 tensor_tensor + 48 tensor_reduce' in flat
    assert 'total 10,072 of 196,608 B' in flat
    assert 'predicted time on trn1:' in flat and 'simulated run on zeros: 130 instructions' in flat
    assert max(map(len, out.splitlines())) <= 100


def test_explain_prediction_is_gated_and_can_be_forced_or_skipped():
    big = ('explain', 'conv1d', '--shape', '64,1024,4096', '--programs', '2')
    r = dwlit(*big)
    assert r.returncode == 0 and 'not computed: the plan has 25,088 instructions' in ' '.join(r.stdout.split())
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
    out, flat = r.stdout, ' '.join(r.stdout.split())
    assert 'img (64, 32, 32, 2) (C, H, W, N: f01b)' in flat and 'out (2, 64, 63, 63)' in flat
    assert 'max_h_tile_size 31' in flat and 'H window' in flat and 'dilation row' in flat
    assert 'each of the 2 programs would compute all of them' in flat
    assert 'tensor_tensor  one tap x one output row ' in out and 'total 37,512 of 196,608 B' in out


def test_explain_conv2d_in_perm():
    r = dwlit('explain', 'conv2d', '--shape', '1,8,5,6', '--in-perm', '--filter', '2,3', '--padding', '0,1,2,0')
    assert r.returncode == 0, r.stderr
    flat = ' '.join(r.stdout.split())
    assert 'fb10' in flat and 'Vector engine first' in flat and 'dve_transpose' in flat


@pytest.mark.parametrize('args, says', [
    (['explain', 'conv1d', '--shape', '4,256'], "--shape must be 3 comma-separated integers N,C,W"),
    (['explain', 'conv1d', '--shape', 'a,b,c'], "--shape must be 3"),
    (['explain', 'conv1d', '--shape', '4,0,10'], "--shape values must be >= 1"),
    (['explain', 'conv1d', '--shape', '4,256,1000', '--padding', '-1'], "--padding values must be >= 0"),
    (['explain', 'conv2d', '--shape', '1,1,100000000,8'], "--shape values must be <= 10,000,000"),
    (['explain', 'conv1d', '--shape', '4,256,1000', '--padding', '1,2,3'], "--padding must be 1 or 2"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--filter', '600'], "W_f must be < 512"),
    (['explain', 'conv1d', '--shape', '1,8,2', '--filter', '5'], "W_out"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--lhs-dilation', '2'], "--lhs-dilation is a conv2d option"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--programs', '0'], "--programs must be >= 1"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--programs', 'many'], "--programs must be an integer K, got 'many'"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--programs', '100000000'], "--programs must be <= 4,096"),
    (['explain', 'conv2d', '--shape', '1,8,6,6', '--programs', '5000'], "--programs must be <= 4,096"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--in-perm'], "--in-perm is a conv2d option"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--lhs-dilation', '1,1'], "--lhs-dilation is a conv2d option"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--filter', '3,3'], "--filter must be an integer W_f for conv1d"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--padding', '1,1,1,1'], "--padding must be 1 or 2"),
    (['tour', '--seed', '-1'], "--seed must be >= 0, got '-1'"),
    (['tour', '--seed', str(2**40)], "--seed must be <= 4,294,967,295"),
    (['tour', '--seed', 'x'], "--seed must be an integer, got 'x'"),
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
    assert 'Traceback' not in r.stderr and 'internal error' not in r.stderr
    assert not re.search(r'\bL\d+', r.stderr), f"a line number in an error message: {r.stderr}"


def test_help_is_not_an_error():
    for args in (['--help'], ['explain', '--help'], ['tour', '--help']):
        r = dwlit(*args)
        assert r.returncode == 0 and 'usage: dwlit' in r.stdout


def test_explain_help_describes_and_gives_examples():
    out = dwlit('explain', '--help').stdout
    assert 'without running it' in out and 'examples:' in out
    examples = [l.strip() for l in out.splitlines() if l.strip().startswith('dwlit explain ')]
    assert len(examples) >= 3
    for ex in examples:                                             # every example runs
        r = dwlit(*ex.split()[1:], '--no-predict')
        assert r.returncode == 0, (ex, r.stderr)


def test_explain_shows_line_numbers_only_when_asked():
    for args in (['conv1d', '--shape', '4,256,1000', '--padding', '1'], ['conv2d', '--shape', '1,8,5,6', '--in-perm']):
        plain = dwlit('explain', *args, '--no-predict').stdout
        refs = dwlit('explain', *args, '--no-predict', '--lines').stdout
        assert not re.search(r'\bL\d+', plain), re.search(r'.*\bL\d+.*', plain).group(0)
        assert len(re.findall(r'\bL\d+', refs)) >= 3


def test_explain_advice_is_true_for_the_shape():
    "More programs only when one channel tile alone fits; otherwise what would fit; and why no predicted time."
    out = dwlit('explain', 'conv1d', '--shape', '1,1024,20000').stdout
    k = int(re.search(r'use (\d+) programs or more', out).group(1))
    assert 'DOES NOT FIT' not in dwlit('explain', 'conv1d', '--shape', '1,1024,20000', '--programs', str(k), '--no-predict').stdout
    assert 'DOES NOT FIT' in dwlit('explain', 'conv1d', '--shape', '1,1024,20000', '--programs', str(k - 1)).stdout
    assert 'predicted time: not computed: the plan does not fit SBUF' in out
    out = ' '.join(dwlit('explain', 'conv1d', '--shape', '1,128,200000', '--programs', '4').stdout.split())
    assert 'more programs cannot help' in out and 'use more programs' not in out
    w = int(re.search(r'a row of at most W=([\d,]+) would fit', out).group(1).replace(',', ''))
    assert 'DOES NOT FIT' not in dwlit('explain', 'conv1d', '--shape', f'1,128,{w}', '--no-predict').stdout
    assert 'DOES NOT FIT' in dwlit('explain', 'conv1d', '--shape', f'1,128,{w + 1}', '--no-predict').stdout
    out = ' '.join(dwlit('explain', 'conv1d', '--shape', '1,128,40000').stdout.split())
    assert '--dtype bfloat16' in out
    assert 'DOES NOT FIT' not in dwlit('explain', 'conv1d', '--shape', '1,128,40000', '--dtype', 'bfloat16', '--no-predict').stdout


def test_every_explanation_says_why_when_there_is_no_predicted_time():
    for args in (['conv1d', '--shape', '1,128,100', '--no-predict'], ['conv1d', '--shape', '64,1024,4096', '--programs', '2'],
                 ['conv1d', '--shape', '1,128,200000'], ['conv2d', '--shape', '1,8,6,6', '--no-predict']):
        out = dwlit('explain', *args).stdout
        last = ' '.join(out.split('predicted time')[-1].split())
        assert 'predicted time' in out and last.startswith(('on ', ': not computed')), (args, last)


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
    rows = [l for l in out.splitlines() if l.startswith(('ok ', 'FAIL '))]
    assert status == 1 and rows[0].startswith('FAIL') and out.splitlines()[-1].startswith('5 of 6')
    assert any(l.startswith('FAIL conv1d') and 'tolerance' in l for l in out.splitlines())   # and why
