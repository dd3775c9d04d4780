"""Shared fixtures and the test lanes.

`python -m pytest` runs the fast lane (a few minutes): everything but the tests marked `slow`, `site` (builds the
website) and `browser` (drives Chromium or JupyterLab). `python -m pytest --lane all` runs everything; the README's
test command (`bash scripts/test`) and CI do. A whole file joins a lane through `FILE_LANES`; a single test through
`@pytest.mark.slow`."""
import numpy as np
import pytest

from dwlit.sim.core import NeuronCore, use_core

FILE_LANES = {'test_site.py': 'site', 'test_jupyterlab.py': 'browser', 'test_jupyterlab_exercise.py': 'browser'}
SLOW = {   # single tests of other files that take more than ~10 s on a 2-core machine
    'test_conv1d_plan.py::test_following_the_advice_fits_and_is_the_least_change',
    'test_cli.py::test_explain_advice_is_the_plans_and_following_it_fits',
    'test_conv2d.py::test_matches_reference_on_random_shapes'}
LANES = ('slow', 'site', 'browser')


def pytest_addoption(parser):
    parser.addoption('--lane', choices=('fast', 'all'), default='fast',
                     help="fast (default): skip the slow, site and browser tests; all: run everything")


def pytest_collection_modifyitems(config, items):
    for item in items:
        lane = FILE_LANES.get(item.path.name)
        if lane: item.add_marker(getattr(pytest.mark, lane))
        if f"{item.path.name}::{item.originalname}" in SLOW: item.add_marker(pytest.mark.slow)
    if config.getoption('--lane') == 'all' or config.getoption('-m'): return
    keep, drop = [], []
    for item in items: (drop if any(item.get_closest_marker(m) for m in LANES) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    if config.getoption('--lane') == 'fast' and not config.getoption('-m'):
        return "lane: fast (the slow, site and browser tests are deselected; --lane all runs them)"


@pytest.fixture
def core():
    "A fresh NeuronCore (trn1) as the current core for the test."
    c = NeuronCore('trn1')
    with use_core(c): yield c


@pytest.fixture
def rng():
    "A seeded random generator."
    return np.random.default_rng(0)
