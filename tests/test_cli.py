"""The `dwlit` command as a user runs it: the installed console script, in a subprocess."""
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
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
    for what in ('1D default', '1D f_packing', '  2D  ', 'bfloat16', 'd2,3', 'fb10'):
        assert any(what in l for l in kernels), f"no tour line covers {what}"
    header = next(l for l in lines if 'max err' in l and 'kernel' in l)
    for col in ('input', 'kernel', 'programs', 'Vector', 'DMA', 'PE', 'SBUF B', 'max err', 'us'): assert col in header
    pe = header.index(' PE') + 3                                     # the PE array's column, right-aligned
    assert all(l[pe - 1] == '0' and l[pe - 2] == ' ' for l in kernels), "a kernel used the PE array"
    summary = next(l for l in lines if 'kernels match NumPy' in l)
    assert summary.startswith(f"{len(kernels)} of {len(kernels)} kernels match") and '; 0 PE-array' in summary
    nxt = lines[lines.index(summary) + 1:]                              # then the next steps: chapter 1 first
    assert nxt[0].startswith('next: the book, from chapter 1') and 'nbs/start/01_one_kernel.ipynb' in nxt[0]
    assert '01_one_kernel.html' in ' '.join(nxt) and nxt[-1].startswith('then: ') and 'dwlit explain conv1d' in nxt[-1]
    assert r.stderr == ''            # no progress bar when stderr is not a terminal


def test_tour_reads_in_100_columns_with_aligned_columns():
    lines = dwlit('tour').stdout.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    header = next(i for i, l in enumerate(lines) if 'max err' in l and 'kernel' in l)
    rows = [l for l in lines if l.startswith(('ok ', 'FAIL '))]
    assert lines[header + 1:header + 1 + len(rows)] == rows          # the rows right under the header
    for name in ('Vector', 'DMA', 'SBUF B', 'max err', 'us'):        # numbers end where their header ends
        end = lines[header].index(name) + len(name)
        assert all(l[end - 1] != ' ' and l[end:end + 1] in ('', ' ') for l in rows), (name, rows)
    for name in ('input', 'kernel', 'programs'):                     # words start where their header starts
        start = lines[header].index(name)
        assert all(l[start - 1] == ' ' and l[start] != ' ' for l in rows), (name, rows)
    legend = [l.split()[0] for l in lines if l[:1].isalpha() and not l.startswith(('dwlit', 'AWS', 'ok', 'FAIL'))]
    for word in ('input', 'kernel', 'programs', 'Vector,', 'SBUF', 'max', 'us'): assert word in legend, (word, legend)
    words = ' '.join(lines)                                         # the legend explains what a newcomer has not met
    for term in ('SPMD programs', 'PE array', 'SBUF', 'partition', 'Trainium', 'f_packing', 'fb10'): assert term in words, term
    for jargon in ('H tiles', 'T+', '_f_packing x'): assert jargon not in words, jargon


def test_tour_progress_bar_on_request():
    r = dwlit('tour', '--progress', 'always')
    assert r.returncode == 0 and '6/6' in r.stderr and '[' in r.stderr and '#' in r.stderr


def test_explain_conv1d_happy_path():
    r = dwlit('explain', 'conv1d', '--shape', '4,256,1000', '--padding', '1,1', '--programs', '3')
    assert r.returncode == 0, r.stderr
    out, flat = r.stdout, ' '.join(r.stdout.split())          # prose wraps at 100 columns; tables do not
    assert 'dispatch: conv1d_depthwise_f_packing' in flat and 'div_ceil(512, W_f=3) = 171' in flat
    assert 'div_ceil(2, 3) = 1 per program' in flat and '\n  2        idle' in out
    assert '5 x 513, 1 x 435' in flat and '48 tensor_tensor + 48 tensor_reduce' in flat
    assert 'total 10,072 of 196,608 B' in flat
    assert 'predicted time on trn1:' in flat and 'simulated run on zeros: 130 instructions' in flat
    assert max(map(len, out.splitlines())) <= 100


def test_explain_prediction_is_gated_and_can_be_forced_or_skipped():
    big = ('explain', 'conv1d', '--shape', '64,1024,4096', '--programs', '2')
    r = dwlit(*big)
    assert r.returncode == 0 and 'not computed: the plan has 25,088 instructions' in ' '.join(r.stdout.split())
    r = dwlit('explain', 'conv1d', '--shape', '1,128,100', '--no-predict')
    assert r.returncode == 0 and 'not computed: --no-predict' in r.stdout
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
    assert 'each of the 2 programs computes all of them, the same work 2 times' in flat
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
    (['explain', 'conv1d', '--shape', '4,256,1000', '--padding', '-1,1'], "--padding values must be >= 0, got '-1,1'"),
    (['explain', 'conv1d', '--shape', '-1,256,1000'], "--shape values must be >= 1, got '-1,256,1000'"),
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
    (['explain', 'conv1d'], "explain conv1d needs --shape N,C,W (or --layer NAME instead of both)"),
    (['explain', 'conv2d', '--filter', '3,3'], "explain conv2d needs --shape N,C,H,W"),
    (['explain'], "explain needs a kernel and a shape"),
    (['explain', '--layer', 'resnet-50'], "--layer must be the name of a preset, got --layer 'resnet-50'"),
    (['explain', '--layer', 'mobilenetv2-96x112-s2'], "layer 'mobilenetv2-96x112-s2' is outside the kernels' contract: stride 2"),
    (['explain', '--layer', 'efficientnet-b0-144x56-s2', '--batch', '2'], "stride must be 1"),
    (['explain', '--layer', 'long-conv'], "W_f=1024: the 1D entry point takes filters of fewer than 512 taps"),
    (['explain', '--layer', 'mamba-2.8b', '--shape', '1,8,100'], "--shape cannot go with --layer"),
    (['explain', '--layer', 'mamba-2.8b', '--padding', '1'], "--padding cannot go with --layer"),
    (['explain', 'conv2d', '--layer', 'mamba-2.8b'], "--layer mamba-2.8b is a conv1d layer, got 'conv2d'"),
    (['explain', '--layer', 'mamba-2.8b', '--batch', '0'], "--batch must be >= 1, got '0'"),
    (['explain', '--layer', 'mamba-2.8b', '--batch', 'two'], "--batch must be an integer N, got 'two'"),
    (['explain', '--layer', 'mamba-2.8b', '--programs', '0'], "--programs must be >= 1"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--batch', '4'], "--batch goes with --layer"),
    (['explain', '--list-layers', '--layer', 'mamba-2.8b'], "--list-layers lists the layer names and takes no"),
    (['explain', 'conv1d', '--shape', '1,128,200000'], "the longest that fits trn1 in float32 is W=24,319"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--filter', ''], "--filter must be an integer W_f for conv1d, got ''"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--padding', ''], "--padding must be 1 or 2 comma-separated integers"),
    (['explain', 'conv2d', '--shape', '1,8,6,6', '--lhs-dilation', ''], "--lhs-dilation must be 1 or 2"),
    (['explain', '--layer', 'conformer-m', '--batch', ''], "--batch must be an integer N, got ''"),
    (['explain', '--layer', 'conformer-m', '--programs', ''], "--programs must be an integer K, got ''"),
    (['explain', 'conv1d', '--shape', ''], "--shape must be 3 comma-separated integers"),
    (['explain', '--layer', ''], "--layer must be the name of a preset, got --layer ''"),
    (['tour', '--seed', ''], "--seed must be an integer, got ''"),
    (['explain', 'conv1d', '--shape', '1,8,100', '--padding', '1,2,3,4,5'], "--padding must be 1 or 2 comma-separated"),
    (['explain', 'conv2d', '--shape', '1,8,6,6', '--padding', '1,2,3,4,5'], "--padding must be 1 or 2 or 4"),
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


def advised_flags(out):
    "The flags each piece of advice in an explanation gives, e.g. ['--programs 8']."
    return re.findall(r'\((--[^)]*)\)', ' '.join(out.split()))


def fits(*args):
    r = dwlit('explain', *args, '--no-predict')
    assert r.returncode == 0, r.stderr
    return 'DOES NOT FIT' not in r.stdout


def test_explain_advice_is_the_plans_and_following_it_fits():
    "More programs only when one channel tile alone fits; otherwise what would fit; each flag set fits; and why no time."
    out = dwlit('explain', 'conv1d', '--shape', '1,1024,20000').stdout
    assert advised_flags(out) == ['--programs 8'] and 'more programs cannot help' not in out
    assert fits('conv1d', '--shape', '1,1024,20000', '--programs', '8')
    assert not fits('conv1d', '--shape', '1,1024,20000', '--programs', '7')                # the fewest
    assert 'predicted time: not computed: the plan does not fit SBUF' in out
    from dwlit.kernels.conv1d_plan import conv1d_plan
    for shape, programs in (('1,1024,30000', '1'), ('1,128,40000', '4'), ('2,600,60000', '3'), ('1,300,26000', '2')):
        base = ('conv1d', '--shape', shape, '--programs', programs)
        out = ' '.join(dwlit('explain', *base, '--no-predict').stdout.split())
        assert 'more programs cannot help' in out and not re.search(r'DOES NOT FIT; [\d,]+ programs', out)
        N, C, W = map(int, shape.split(','))
        plan = conv1d_plan((N, C, 1, W), (C, 1, 1, 3), ((0, 0), (0, 0)), int(programs), 'trn1')
        assert plan.advice and ' '.join(plan.advice.split()) in re.sub(r' \(--[^)]*\)', '', out)   # the plan's own words
        flags = advised_flags(out)
        assert flags and len(flags) == len(plan.fixes)
        assert not fits(*base, '--programs', str(max(int(programs), -(-C // 128))))      # more programs alone do not
        for f in flags:
            assert fits(*base, *f.split()), (shape, f)                                  # each change fits
            if '--shape' in f:                                                          # ... with the longest row
                w = int(f.split()[1].split(',')[2])
                assert not fits(*base, *f.split(), '--shape', f'{N},{C},{w + 1}')


def test_explain_a_row_longer_than_any_partition_names_the_longest_that_fits():
    r = dwlit('explain', 'conv1d', '--shape', '1,128,200000', '--programs', '4')
    assert r.returncode == 2 and r.stdout == '' and r.stderr.count('\n') == 1
    w = int(re.search(r'the longest that fits trn1 in float32 is W=([\d,]+)', r.stderr).group(1).replace(',', ''))
    assert fits('conv1d', '--shape', f'1,128,{w}') and not fits('conv1d', '--shape', f'1,128,{w + 1}')
    r = dwlit('explain', 'conv1d', '--shape', '1,1024,150000', '--dtype', 'bfloat16', '--target', 'trn3')
    m = re.search(r'the longest that fits trn3 in bfloat16 is W=([\d,]+), with (\d+) programs', r.stderr)
    assert r.returncode == 2 and m, r.stderr
    w, k = int(m.group(1).replace(',', '')), m.group(2)
    same = ('--dtype', 'bfloat16', '--target', 'trn3')
    assert fits('conv1d', '--shape', f'1,1024,{w}', '--programs', k, *same)
    assert not fits('conv1d', '--shape', f'1,1024,{w + 1}', '--programs', '8', *same)
    assert not fits('conv1d', '--shape', f'1,1024,{w}', '--programs', str(int(k) - 1), *same)


def test_explain_a_real_layer():
    "--layer NAME plans a preset of chapter 25 on the fewest programs that fit; --batch, --programs, --dtype, --target."
    from dwlit.apps.layers import programs_to_fit
    r = dwlit('explain', '--layer', 'mamba-2.8b')
    out, flat = r.stdout, ' '.join(r.stdout.split())
    assert r.returncode == 0 and out.startswith('layer mamba-2.8b: Mamba-2.8B'), r.stderr
    k = programs_to_fit('mamba-2.8b', 'trn1')[0]
    assert f'{k} program(s), the fewest whose plan fits trn1' in flat and 'DOES NOT FIT' not in out
    assert 'img (1, 5120, 1, 2048)' in flat and 'filter (5120, 1, 1, 4)' in flat and 'padding (3, 0)' in flat
    assert 'predicted time on trn1' in flat and max(map(len, out.splitlines())) <= 100
    assert not fits('conv1d', '--shape', '1,5120,2048', '--filter', '4', '--padding', '3,0', '--programs', str(k - 1))
    plain = dwlit('explain', '--layer', 'mamba-2.8b', '--no-predict').stdout            # the same as typing its shape
    typed = dwlit('explain', 'conv1d', '--shape', '1,5120,2048', '--filter', '4', '--padding', '3,0', '--programs',
                  str(k), '--no-predict').stdout
    assert plain.endswith(typed)
    r = dwlit('explain', 'conv2d', '--layer', 'convnext-t-96x56', '--batch', '8', '--no-predict', '--target', 'trn2',
              '--dtype', 'bfloat16')
    flat = ' '.join(r.stdout.split())
    assert r.returncode == 0 and 'img (96, 56, 56, 8)' in flat and 'out (8, 96, 56, 56)' in flat, r.stderr
    assert 'bfloat16' in flat and 'on trn2' in flat and 'the 2D kernel does not share channel tiles' in flat
    r = dwlit('explain', '--layer', 'speech-frontend', '--programs', '3', '--no-predict', '--lines')
    assert r.returncode == 0 and '3 program(s), as asked' in r.stdout and '(L723)' in r.stdout
    assert not re.search(r'\bL\d', dwlit('explain', '--layer', 'speech-frontend', '--no-predict').stdout)


def test_explain_list_layers_names_every_preset():
    r = dwlit('explain', '--list-layers')
    from dwlit.apps.layers import LAYERS, in_contract
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and max(map(len, lines)) <= 100
    rows = {l.split()[0]: l for l in lines if l.split() and l.split()[0] in LAYERS}
    assert list(rows) == list(LAYERS)
    from dwlit.apps.cli import main  # in this process: 29 starts of dwlit are slow
    for name, line in rows.items():                                # and every name it lists is taken, or refused
        assert line.endswith('yes') == (not in_contract(name)), line
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(['explain', '--layer', name, '--no-predict'])
        assert status == (0 if line.endswith('yes') else 2), (name, status, err.getvalue())
        assert out.getvalue().startswith(f'layer {name}: ') if status == 0 else "outside the kernels' contract" in err.getvalue()


def test_every_explanation_says_why_when_there_is_no_predicted_time():
    for args in (['conv1d', '--shape', '1,128,100', '--no-predict'], ['conv1d', '--shape', '64,1024,4096', '--programs', '2'],
                 ['conv1d', '--shape', '1,128,40000'], ['conv2d', '--shape', '1,8,6,6', '--no-predict']):
        out = dwlit('explain', *args).stdout
        last = ' '.join(out.split('predicted time')[-1].split())
        assert 'predicted time' in out and last.startswith(('on ', ': not computed')), (args, last)


def test_the_tour_reports_a_wrong_kernel(monkeypatch, capsys):
    "The tour can fail: with a kernel that adds a small error, its line says FAIL and the status is 1."
    from dwlit.apps import cli, tour
    real = tour.tour_cases
    def broken(seed=0):
        cases = real(seed)
        k = cases[0].kernel
        cases[0].kernel = lambda *a, **kw: _plus(getattr(k, 'func', k)(*a, **kw))
        return cases
    def _plus(t):  # the kernel's output tensor, nudged by 1e-3 in one element
        t.storage[0] += 1e-3
        return t
    monkeypatch.setattr(tour, 'tour_cases', broken)      # the tour (chapter 28) finds its cases in its own module
    status = cli.main(['tour', '--progress', 'never'])
    out = capsys.readouterr().out
    rows = [l for l in out.splitlines() if l.startswith(('ok ', 'FAIL '))]
    assert status == 1 and rows[0].startswith('FAIL') and any(l.startswith('5 of 6 kernels match') for l in out.splitlines())
    assert any(l.startswith('FAIL conv1d') and 'tolerance' in l for l in out.splitlines())   # and why


def test_layer_programs_follow_the_dtype():
    "With --dtype bfloat16 every buffer halves, so the fewest programs that fit is planned in bfloat16, and it fits."
    fp32 = dwlit('explain', '--layer', 'mamba-2.8b', '--no-predict').stdout
    bf16 = dwlit('explain', '--layer', 'mamba-2.8b', '--dtype', 'bfloat16', '--no-predict').stdout
    assert '4 program(s), the fewest whose plan fits trn1 in float32' in ' '.join(fp32.split())
    assert '2 program(s), the fewest whose plan fits trn1 in bfloat16' in ' '.join(bf16.split())
    assert 'DOES NOT FIT' not in bf16


# --- the first hour: version, help, bounded explain ---------------------------------------------------------------

def test_version_prints_the_package_version():
    import dwlit as pkg
    r = dwlit('--version')
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, f"dwlit {pkg.__version__}", '')


@pytest.mark.parametrize("args", [(), ('tour',), ('explain',)])
def test_help_has_examples_and_defaults(args):
    r = dwlit(*args, '--help')
    assert r.returncode == 0 and 'examples:' in r.stdout, r.stdout
    if args == ('explain',):
        flat = ' '.join(r.stdout.split())
        assert 'element type of the tensors (default float32)' in flat
        assert 'the Trainium generation to plan for (default trn1)' in flat


@pytest.mark.parametrize("args,skipped", [
    (('--layer', 'mamba-2.8b', '--batch', '10000000'), 'the plan has 12,960,000,000 instructions, more than the 1,000,000'),
    (('conv1d', '--shape', '100000,100000,10', '--programs', '4096'), 'more than the 1,000,000 one simulated launch'),
    (('conv1d', '--shape', '100000,100000,10', '--programs', '4096', '--predict'), 'more than the 1,000,000'),
    (('conv1d', '--shape', '1000000,3,10', '--predict'), 'the plan has 6,000,000 instructions, more than'),
    (('conv1d', '--shape', '1,1280,4000000', '--no-predict'), None)])
def test_explain_plans_from_shapes_and_says_what_it_skipped(args, skipped):
    "Huge calls end in seconds, within a small memory: the plan, and the reason the prediction was skipped."
    r = subprocess.run(['bash', '-c', 'ulimit -v 4000000; exec "$@"', 'dwlit', DWLIT, 'explain', *args],
                       capture_output=True, text=True, timeout=60)
    assert 'internal error' not in r.stderr and 'MemoryError' not in r.stderr + r.stdout, r.stderr
    if skipped is None: assert r.returncode == 2 and r.stderr.count('\n') == 1, r.stderr   # a row no SBUF holds
    else: assert r.returncode == 0 and skipped in ' '.join(r.stdout.split()), r.stdout[-400:]


def test_explain_never_allocates_the_input_when_it_does_not_predict(monkeypatch):
    from dwlit.apps import cli
    monkeypatch.setattr(cli.np, 'zeros', lambda *a, **k: pytest.fail("explain made an array"))
    for kw in (dict(predict_time=False), dict(predict_time=None, shape=(10**6, 3, 10))):           # (planned only)
        text = cli.explain_conv1d(**{'shape': (4, 256, 1000), **kw})
        assert 'predicted time: not computed: ' in ' '.join(text.split())
    assert 'not computed: --no-predict' in cli.explain_conv2d((1, 8, 6, 6), predict_time=False)


def test_explain_conv2d_programs_says_the_kernel_does_not_shard():
    r = dwlit('explain', 'conv2d', '--shape', '2,64,32,32', '--programs', '4', '--no-predict')
    flat = ' '.join(r.stdout.split())
    assert r.returncode == 0 and 'the 2D kernel, like the original, does not shard them across programs' in flat
    assert '--programs 4 buys nothing' in flat


def test_a_huge_seed_is_refused_shortened():
    r = dwlit('tour', '--seed', '9' * 5000)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and len(r.stderr) < 200, r.stderr
    assert '--seed must be <= 4,294,967,295' in r.stderr


@pytest.mark.parametrize("text", ['1,2,\u0663', '1,2,\uff13', '1,2,3.0', '1,2,1_0', '1,,2', '', '+1,2,3'])
def test_parse_ints_takes_ascii_digits_only(text):
    from dwlit.apps.cli import UsageError, parse_ints
    with pytest.raises(UsageError, match='--shape must be 3 comma-separated integers'): parse_ints(text, '--shape', (3,), 1)


def test_parse_ints_reads_leading_zeros_and_refuses_long_values_without_reading_them():
    from dwlit.apps.cli import UsageError, parse_ints
    assert parse_ints('0000000000000000000000000007', '--batch', (1,), 1) == (7,)
    with pytest.raises(UsageError, match=r"--batch must be <= 10,000,000, got '1000"): parse_ints('1' + '0' * 100000, '--batch', (1,), 1)
    with pytest.raises(UsageError, match=r"--padding must be >= 0, got '-9"): parse_ints('-' + '9' * 100, '--padding', (1,), 0)


def test_build_docs_without_the_dev_extra_says_so_in_one_line(tmp_path):
    "Run scripts/build_docs.py with nbdev and sphinx hidden: one line naming the dev extra, no traceback."
    root = Path(__file__).resolve().parent.parent
    hide = ("import sys, runpy\nfor m in ('nbdev', 'sphinx', 'myst_nb'): sys.modules[m] = None\n"
            f"sys.argv = ['scripts/build_docs.py']\nrunpy.run_path({str(root / 'scripts' / 'build_docs.py')!r}, run_name='__main__')\n")
    r = subprocess.run([sys.executable, '-c', hide], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode != 0 and r.stdout == '' and r.stderr.count('\n') == 1, r.stderr
    assert 'not installed' in r.stderr and 'dev extra' in r.stderr and 'Traceback' not in r.stderr


# --- the Python-level functions: every argument checked at the entry, the rule named, bounded work -----------------

from dwlit import SimulatorError  # noqa: E402
from dwlit.apps import cli as _cli  # noqa: E402
from dwlit.apps import tour as _tour


@pytest.mark.parametrize("call,says", [
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), programs=10**30), "explain_conv2d: programs must be <= 4,096"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), programs=-1), "programs must be >= 1"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), programs=0), "programs must be >= 1"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), programs=True), "programs must be an integer, got programs=True"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), padding=(1, 2, 3, 4, 5)), "padding must be ((H_padding_l, H_padding_r)"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), padding={1, 2}), "padding must be"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), k={3, 2}), "k must be an ordered sequence"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), padding=''), "padding must be"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), padding={}), "padding must be"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), padding=1.5), "padding must be"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), lhs_dilation=range(10**6)), "lhs_dilation must have 2 integers"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), dtype=np.float32('nan')), "dtype must be one of 'float32'"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), predict_time='abc'), "predict_time must be True or False"),
    (lambda: _cli.explain_conv2d((1, 4, 5, 6), lines=None), "lines must be True or False"),
    (lambda: _cli.explain_conv1d(1.5), "explain_conv1d: shape must be an ordered sequence"),
    (lambda: _cli.explain_conv1d({1, 4, 16}), "shape must be an ordered sequence"),
    (lambda: _cli.explain_conv1d((1, 4, 16), padding=(1, 2, 3)), "padding must be"),
    (lambda: _cli.explain_conv1d((1, 4, 16), padding={1, 2}), "padding must be"),
    (lambda: _cli.explain_conv1d((1, 4, 16), W_f=2.0), "W_f must be an integer"),
    (lambda: _cli.explain_conv1d((1, 4, 16), target='trn9'), "target must be one of"),
    (lambda: _cli.explain_layer('conformer-m', programs=np.uint8(0)), "explain_layer: programs must be >= 1"),
    (lambda: _cli.explain_layer('conformer-m', N=True), "N must be an integer"),
    (lambda: _cli.explain_layer(None), "layer must be one of"),
    (lambda: _tour.tour(seed=2**32), "tour_cases: seed must be <= 4,294,967,295"),
    (lambda: _tour.tour(stream=True), "tour: stream must have a write method"),
    (lambda: _tour.tour(progress=True), "tour: progress must be a Progress"),
    (lambda: _tour.tour_cases(seed=True), "seed must be an integer"),
    (lambda: _tour.tour_cases(seed=range(10)), "seed must be an integer"),
    (lambda: _tour.conv1d_case(None, 1, 4, 16, 3, ((0, 0), (1, 1))), "conv1d_case: rng must be a Generator"),
    (lambda: _tour.conv1d_case(np.random.default_rng(), 10**9, 4, 16, 3, ((0, 0), (1, 1))), "MAX_HBM_BYTES"),
    (lambda: _tour.conv2d_case(np.random.default_rng(), 1, 4, 5, 6, None, ((0, 0), (0, 0))), "conv2d_case: k must be an ordered"),
    (lambda: _tour.conv2d_case(np.random.default_rng(), 10**9, 4, 5, 6, (3, 3), ((0, 0), (0, 0))), "output too large"),
    (lambda: _tour.check_case(None, np.zeros(1)), "check_case: case must be a TourCase"),
    (lambda: _tour.as_planned(_tour.tour_cases()[0], None), "as_planned: run must be a Run"),
    (lambda: _tour.run_case('x'), "run_case: case must be a TourCase"),
    (lambda: _tour.run_traced(None), "kernel must be a function"),
    (lambda: _tour.Progress(None), "Progress: total must be an integer"),
    (lambda: _tour.Progress(6, width=10**9), "width must be <= 200"),
    (lambda: _tour.Progress(6, enabled=None), "enabled must be True or False"),
    (lambda: _cli.parse_ints('1', '--x', ()), "parse_ints: counts must be a tuple of 1 to 8 allowed lengths"),
    (lambda: _cli.parse_ints(1.5, '--x', (1,)), "parse_ints: text must be a str"),
    (lambda: _cli.parse_ints('1', '--x', (1,), minimum=None), "minimum must be an integer"),
    (lambda: _cli.parse_ints('1,2,3', '--x', range(10**9)), "counts must be a tuple of 1 to 8"),
    (lambda: _cli.parse_ints('1,2,3', '--x', list(range(20))), "counts must be a tuple of 1 to 8"),
])
def test_python_level_bad_values_get_the_rule(call, says):
    with pytest.raises(SimulatorError) as e: call()
    assert says in str(e.value) and len(str(e.value)) < 1200, str(e.value)[:500]


def test_explain_layer_takes_a_numpy_integer_of_programs():
    "np.uint8(255) programs: a number of programs like any other (it once overflowed inside a uint8 product)."
    text = _cli.explain_layer('conformer-m', programs=np.uint8(255), predict_time=False)
    assert '255 program(s), as asked' in ' '.join(text.split())


def test_main_refuses_an_argv_that_is_not_words(capsys):
    assert _cli.main(True) == 2 and 'argv' in capsys.readouterr().err


def test_exhaustive_explain_checks_left_here_from_the_chapter():
    "Chapter 29 keeps one check per claim; the rest of what it used to show."
    text = _cli.explain_conv1d((4, 256, 1000), 3, ((0, 0), (1, 1)), programs=3)
    assert max(map(len, text.splitlines())) <= 100 and not re.search(r'\bL\d', text)
    refs = _cli.explain_conv1d((4, 256, 1000), 3, ((0, 0), (1, 1)), programs=3, lines=True, predict_time=False)
    assert '(L723)' in refs and '(L154-L173)' in refs
    flat = lambda t: ' '.join(t.split())
    assert flat(_cli._plain(flat(refs))) == flat(_cli.explain_conv1d((4, 256, 1000), 3, ((0, 0), (1, 1)), programs=3, predict_time=False))
    for with_refs, plain in [("dispatch: default (L723)", "dispatch: default"),
                             ("1 tensor_tensor (multiply, L251/L587) + 1 tensor_reduce (add, axis=2, L276/L594)",
                              "1 tensor_tensor (multiply) + 1 tensor_reduce (add, axis=2)"),
                             ("does not shard them (L847, no program_id)", "does not shard them (no program_id)"),
                             ("budget 16,384 B (L839-L842): h_tile_count", "budget 16,384 B: h_tile_count")]:
        assert _cli._plain(with_refs) == plain
    assert _cli._say('x ' * 60, lines=False) == ['x ' * 49 + 'x', '    ' + 'x ' * 9 + 'x']
    assert 'not computed: the plan has 25,088 instructions to trace (limit 20,000)' in flat(_cli.explain_conv1d((64, 1024, 4096), 3, programs=2))
    assert [_cli.explain_conv1d((1, 1024, 20_000), programs=k).count('DOES NOT FIT') for k in (7, 8)] == [1, 0]
    ll = _cli.layer_list()
    from dwlit.apps.layers import LAYERS
    assert len(ll) == 1 + 1 + len(LAYERS) + 1 and max(map(len, ll)) <= 100
    assert sorted({l.split()[-1] for l in ll[2:-1] if ' no: ' in l}) == ['2', 'W_f=1024']
    t2 = _cli.explain_layer('convnext-t-96x56', N=8, predict_time=False)
    assert flat(t2).startswith('layer convnext-t-96x56: ConvNeXt-T, stage 1; 3 layer(s) of the network have this shape')
    assert t2.endswith('\n' + _cli.explain_conv2d((8, 96, 56, 56), (7, 7), ((3, 3), (3, 3)), predict_time=False))


def test_a_range_of_ten_billion_as_a_kernel_size_is_refused_in_bounded_memory():
    code = ("import sys\nfrom dwlit.apps.cli import explain_conv2d\nfrom dwlit import SimulatorError\n"
            "try: explain_conv2d((1, 4, 5, 6), k=range(10**10))\nexcept SimulatorError as e: print('refused:', e); sys.exit(0)\n")
    r = subprocess.run(['bash', '-c', 'ulimit -v 3000000; exec "$@"', 'python', sys.executable, '-c', code],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and 'k must have 2 integers' in r.stdout, r.stderr[-300:]
