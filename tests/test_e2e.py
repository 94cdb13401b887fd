"""End to end in a real browser: Debian's Chromium driven by Playwright against `streamlit run`.

Run with `make e2e` (installs chromium with apt first).  Screenshots go to test-artifacts/.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT

pytestmark = pytest.mark.e2e
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = os.path.join(ROOT, "test-artifacts")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.fail("chromium is not installed: run 'make e2e' (it installs Debian's chromium)")
    port = free_port()
    env = {**os.environ, "BOILERSCOPE_DB": str(tmp_path_factory.mktemp("e2e") / "app.duckdb")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "dashboard", "--port", str(port), "--address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).status == 200:
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("streamlit did not start: " + proc.stdout.read().decode(errors="replace")[-2000:])
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_demo_mine_and_read_a_document(server):
    from playwright.sync_api import expect, sync_playwright

    os.makedirs(ARTIFACTS, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server + "/")
        # first start mines the demo by itself
        expect(page.get_by_text("Run history")).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Maximal phrases")).to_be_visible(timeout=60_000)
        page.screenshot(path=os.path.join(ARTIFACTS, "1-mine.png"), full_page=True)

        # move the sigma slider with the keyboard, then run
        slider = page.get_by_role("slider").first
        sigma_box = page.get_by_role("spinbutton").first
        before = sigma_box.input_value()
        slider.focus()
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        # each key press is a rerun: wait for the last one to land
        after = str(int(before) + 5)
        expect(sigma_box).to_have_value(after, timeout=30_000)
        page.wait_for_timeout(1500)
        page.get_by_role("button", name="Run", exact=True).click()
        expect(page.get_by_text(re.compile(r"^Run \d+ done\.|^Reused stored run"))).to_be_visible(timeout=120_000)
        expect(page.get_by_text(f"sigma {after}, L").first).to_be_visible(timeout=30_000)
        assert f"sigma={after}" in page.url
        page.screenshot(path=os.path.join(ARTIFACTS, "2-mined.png"), full_page=True)

        # phrases view: the index eaters chart is drawn
        page.goto(server + "/repeats?" + page.url.split("?", 1)[1])
        expect(page.get_by_text("Keyword in context")).to_be_visible(timeout=60_000)
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=60_000)
        page.screenshot(path=os.path.join(ARTIFACTS, "3-phrases.png"), full_page=True)

        # sites view: click a bar, its documents are listed
        page.goto(server + "/by-site?" + page.url.split("?", 1)[1])
        bar = page.locator(".js-plotly-plot .bars path").first
        expect(bar).to_be_visible(timeout=60_000)
        bar.click(force=True)
        expect(page.get_by_text("documents shown")).to_be_visible(timeout=60_000)
        page.screenshot(path=os.path.join(ARTIFACTS, "4-sites.png"), full_page=True)
        page.get_by_role("button", name="Open in Document view").click()

        # document view: highlighted spans are there
        expect(page.get_by_text("Contamination").first).to_be_visible(timeout=60_000)
        marks = page.locator("mark.bs-span")
        expect(marks.first).to_be_visible(timeout=60_000)
        assert marks.count() > 0
        assert "doc=" in page.url
        page.screenshot(path=os.path.join(ARTIFACTS, "5-document.png"), full_page=True)
        browser.close()
