"""Headless Debian Chromium for the browser tests (docs site, JupyterLab), driven by Selenium.

The browser and its driver are Debian's (`apt-get install chromium chromium-driver`): both paths are given, so
Selenium Manager has nothing to find or download. Without them the tests skip with `MISSING`."""
import os
import shutil
import tempfile
from pathlib import Path

CHROMIUM, CHROMEDRIVER = '/usr/bin/chromium', '/usr/bin/chromedriver'
MISSING = ("Debian's chromium and chromium-driver are not installed (/usr/bin/chromium, /usr/bin/chromedriver): "
           "run `apt-get update && apt-get install -y chromium chromium-driver` (.ci/run does)")
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--disable-dev-shm-usage', '--window-size=1280,1600']


def have_chromium() -> bool:
    "Whether the browser tests can run; with DWLIT_REQUIRE_BROWSER set (CI), their absence is an error instead."
    ok = Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()
    if not ok and os.environ.get('DWLIT_REQUIRE_BROWSER'): raise RuntimeError(MISSING)
    return ok


class Chromium:
    "A context manager: a fresh headless Chromium (own empty profile) with the browser console log recorded."
    def __enter__(self):
        os.environ.setdefault('SE_AVOID_STATS', 'true')
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        self.profile = tempfile.mkdtemp(prefix='dwlit-chromium-')
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for f in FLAGS + [f'--user-data-dir={self.profile}']: opts.add_argument(f)
        opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        self.driver.set_page_load_timeout(60)
        return self.driver

    def __exit__(self, *exc):
        try: self.driver.quit()
        finally: shutil.rmtree(self.profile, ignore_errors=True)


def console_errors(driver) -> list:
    "The browser console's errors since the last call (Chromium logs failed loads and uncaught exceptions here)."
    return [e['message'] for e in driver.get_log('browser') if e['level'] == 'SEVERE']
