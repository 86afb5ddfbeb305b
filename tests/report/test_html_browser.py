"""report.html in a real headless browser (Debian's Chromium): it loads without console errors, asks for
nothing over the network, and every plot image actually rendered.

Driven with playwright when it is importable (launching /usr/bin/chromium; `playwright install` is never run),
else with Chromium's own --dump-dom and a checking script appended to a copy of the page. .ci/install-browser.sh
installs both; the test is skipped only when Chromium is absent.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tests.report import test_report_data as data
from modelcost.decide.constraints import Constraints
from modelcost.decide.recommend import recommend
from modelcost.report.folder import write_report_folder

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (bash .ci/install-browser.sh)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

CHECK_JS = """() => {
  const imgs = [...document.querySelectorAll('img')].map(i => ({name: i.dataset.plot || i.alt,
      complete: i.complete, w: i.naturalWidth, h: i.naturalHeight, shown: i.getBoundingClientRect().width}));
  const svgs = [...document.querySelectorAll('svg')].map(s => {
      const b = s.getBBox(); return {w: b.width, h: b.height};});
  const banner = document.querySelector('.banner');
  return {imgs, svgs, title: document.title, banner: banner ? banner.textContent : null,
          tables: document.querySelectorAll('table').length};
}"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    r = data.run(complete=False)
    rec = recommend(r.benchmarks, Constraints(max_latency_ms=2))
    out = write_report_folder(r, tmp_path_factory.mktemp("rep") / "out", recommendation=rec,
                              comparison=data.comparison())
    return out, sorted(p.stem for p in (out / "plots").iterdir())


@pytest.fixture(scope="module")
def real_report(tmp_path_factory):
    """A real comparison on the CPU: a small conv net vs its INT8 copy, timed on ONNX Runtime's CPU provider."""
    from tests.decide.test_quantize import make_convnet, specs_for

    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.decide.quantize import quantize_int8

    d = tmp_path_factory.mktemp("real")
    net = make_convnet(d / "net.onnx", channels=8)
    q = quantize_int8(net, d / "net.int8.onnx", specs_for=specs_for(), samples=8, chunk=4)
    config = BenchConfig(device="cpu", warmup=3, warmup_max_s=0.3)
    _, _, out = api.compare(str(net), str(q.path), backends=["ort-cpu"], batch_sizes=[1, 2], rounds=3,
                            runs_per_block=3, config=config, out=str(d / "out"))
    return out, sorted(p.stem for p in (out / "plots").iterdir())


def _check(result, plots, incomplete=True):
    assert sorted(i["name"] for i in result["imgs"]) == plots
    for img in result["imgs"]:  # decoded (naturalWidth > 0) and laid out on the page
        assert img["complete"] and img["w"] > 100 and img["h"] > 50 and img["shown"] > 0, img
    for svg in result["svgs"]:
        assert svg["w"] > 0 and svg["h"] > 0
    if incomplete:
        assert result["banner"].startswith("INCOMPLETE")
        assert result["title"].endswith("(INCOMPLETE)")
    else:
        assert result["banner"] is None
    assert result["tables"] >= 5


@pytest.mark.parametrize("which", ["report", "real_report"])
def test_report_renders_in_chromium_with_playwright(which, request, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed; the --dump-dom test runs")
    out, plots = request.getfixturevalue(which)
    assert len(plots) >= 4
    messages, errors, requests = [], [], []
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                   headless=True, args=FLAGS[1:])
        try:
            page = ctx.new_page()
            page.on("console", lambda m: messages.append((m.type, m.text)))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto((out / "report.html").as_uri(), wait_until="load")
            result = page.evaluate(CHECK_JS)
        finally:
            ctx.close()
    assert not errors
    assert not [m for m in messages if m[0] in ("error", "warning")], messages
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    _check(result, plots, incomplete=which == "report")


def test_report_renders_in_chromium_dump_dom(report, tmp_path):
    out, plots = report
    page = out / "check.html"
    probe = ("<script>window.__errs=[];addEventListener('error',e=>__errs.push(String(e.message||e.target.src)),true);"
             "addEventListener('load',()=>{const r=(" + CHECK_JS + ")();r.errs=__errs;"
             "const pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify(r);"
             "document.body.appendChild(pre);});</script>")
    page.write_text((out / "report.html").read_text().replace("<head>", "<head>" + probe, 1))
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=90)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    result = json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert result["errs"] == []
    assert not re.search(r"CONSOLE.*(Uncaught|Failed to load)", proc.stderr)
    _check(result, plots)
