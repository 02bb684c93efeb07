#!/usr/bin/python3
"""The HTML report in a real browser, and the exports in the tools that read them.

Usage: report_browser_test.py IMGSMITH FIXTURES_DIR REPO_DIR ARTIFACTS_DIR KERNEL_FIXTURES_DIR

Debian's chromium, headless, driven through the DevTools protocol over a
pipe (--remote-debugging-pipe: no port, no network), loads each report from
file:// and the test checks, in the page: no console error, exception or
CSP violation; no network request but the page itself; the header's final
bytes equal the JSON's final_bytes; the treemap's top rectangles' areas are
proportional to the categories' bytes (within 1%); a real mouse click on a
category zooms into it. Reports: dive's fixture, the README's example image,
an image of 100,000 files (its page size and open time are printed), an
image whose paths and commands are HTML and script (rendered as text, none
runs), an image with a CUDA library compiled here by nvcc (its kernels
table per GPU, as CUDA's rules and the library's -gencode flags say), and
a diff. Screenshots go to ARTIFACTS_DIR. `ncdu -f` reads the
ncdu export and its total equals final_bytes; the CSV's bytes sum to
final_bytes. Exit 77 (skipped) when chromium or ncdu is missing.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

imgsmith, fixtures, repo, artifacts, kernel_fixtures = sys.argv[1:6]
check = Checks("report_browser")




chromium = shutil.which("chromium")
ncdu = shutil.which("ncdu")
if not chromium or not ncdu:
    print("report_browser: chromium or ncdu is missing (scripts/setup.sh installs them); skipped")
    sys.exit(77)

work = tempfile.mkdtemp(prefix="imgsmith-browser-")
os.makedirs(artifacts, exist_ok=True)


def run(*args):
    r = subprocess.run([imgsmith] + list(args), capture_output=True)
    if r.returncode not in (0, 1):
        raise SystemExit("imgsmith %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.decode()))
    return r


def make_image(spec, name, fmt="docker-legacy", compression="none"):
    spec_path = os.path.join(work, name + ".json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    out = os.path.join(work, name + ".tar")
    subprocess.run(["/usr/bin/python3", os.path.join(repo, "examples/make_image.py"), spec_path, out,
                    "--format", fmt, "--layer-compression", compression, "-q"], check=True)
    return out


def zoom_into(browser, top):
    """Zooms the treemap into the top-level directory `top` and waits until it is drawn."""
    browser.eval("location.hash = 't=' + [...document.querySelectorAll('#treemap > .tm.top')]"
                 ".findIndex(e => e.dataset.name === %s)" % json.dumps(top))
    for _ in range(100):
        if browser.eval("document.body.dataset.zoom") != "":
            break
        time.sleep(0.02)


class Browser:
    """chromium with the DevTools protocol on fds 3 (commands in) and 4 (out)."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="imgsmith-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        cmd = ("exec %s --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --no-default-browser-check "
               "--disable-background-networking --disable-component-update --disable-sync "
               "--user-data-dir=%s --window-size=1280,1000 --remote-debugging-pipe about:blank "
               "3<&%d 4>&%d 2>/dev/null" % (chromium, self.profile, to_browser_r, from_browser_w))
        self.proc = subprocess.Popen(["bash", "-c", cmd], pass_fds=(to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable", session=True)

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise SystemExit("chromium did not answer in time")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise SystemExit("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self.read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            e = self.read_message(deadline)
            if e.get("method") == method:
                return e
            self.events.append(e)

    def eval(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in r:
            raise SystemExit("evaluating %s: %s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    def open(self, path):
        """Loads the page; returns the seconds from navigation to the page's ready mark."""
        self.events = []
        start = time.time()
        self.send("Page.navigate", {"url": "file://" + path}, session=True)
        self.wait_event("Page.loadEventFired")
        for _ in range(600):
            if self.eval("document.body && document.body.dataset.ready") == "1":
                break
            time.sleep(0.05)
        return time.time() - start

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}, session=True)

    def screenshot(self, path):
        height = self.eval("Math.ceil(document.documentElement.scrollHeight)")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": min(int(height), 4000), "deviceScaleFactor": 1, "mobile": False},
                  session=True)
        data = self.send("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        import base64
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        self.send("Emulation.clearDeviceMetricsOverride", session=True)

    def problems(self, page_url):
        """Console errors, exceptions, CSP reports and requests other than the page."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:300])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append("console %s: %s" % (p.get("type"), json.dumps(p.get("args"))[:300]))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append("log: " + p["entry"].get("text", "")[:300])
            elif m == "Network.requestWillBeSent" and p.get("request", {}).get("url") != page_url:
                out.append("request: " + p["request"]["url"][:200])
        return out

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except SystemExit:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)


def analysis_page(browser, name, image, extra=()):
    """The checks every analysis report passes; returns the JSON report."""
    report = json.loads(run("analyze", image, "-q", "--format", "json", *extra).stdout)
    html = os.path.join(work, name + ".html")
    run("analyze", image, "-q", "--format", "html", "-o", html, *extra)
    seconds = browser.open(html)
    check(name + ": the page drew itself", browser.eval("document.body.dataset.ready") == "1")
    problems = browser.problems("file://" + html)
    check(name + ": no console error, exception, CSP violation or request", not problems, "; ".join(problems))
    shown = browser.eval("document.getElementById('final-bytes').dataset.bytes")
    check(name + ": the header's final bytes are the JSON's", shown == str(report["size"]["final_bytes"]),
          "%s against %s" % (shown, report["size"]["final_bytes"]))
    # The top rectangles: one a category with bytes, areas in proportion.
    rects = browser.eval("""[...document.querySelectorAll('#treemap > .tm.top')].map(e => {
        const r = e.getBoundingClientRect();
        return {name: e.dataset.name, bytes: Number(e.dataset.bytes), x: r.x, y: r.y, w: r.width, h: r.height,
                zoomable: e.classList.contains('zoomable')}; })""")
    categories = {c["name"]: c["bytes"] for c in report.get("categories", []) if c["bytes"] > 0}
    check(name + ": a top rectangle for each category with bytes",
          sorted(r["name"] for r in rects) == sorted(categories), "%s against %s" % ([r["name"] for r in rects], categories))
    area_total = sum(r["w"] * r["h"] for r in rects)
    byte_total = sum(categories.values())
    check(name + ": the categories add up to final_bytes", byte_total == report["size"]["final_bytes"])
    for r in rects:
        expected = area_total * categories.get(r["name"], 0) / byte_total
        if expected < 400:  # a few pixels: layout rounds to 1/64 px
            continue
        check(name + ": the area of '%s' is in proportion to its bytes" % r["name"],
              abs(r["w"] * r["h"] - expected) <= 0.01 * expected,
              "%.1f px² against %.1f" % (r["w"] * r["h"], expected))
    # The findings show their paths, and the categories table who installed what.
    finding_text = browser.eval("(document.getElementById('findings') || {}).textContent || ''")
    for f in report.get("findings", []):
        for p in f.get("paths", [])[:3]:
            check(name + ": finding %s shows its path %s" % (f["id"], p["path"]), p["path"] in finding_text)
    rows = browser.eval("[...document.querySelectorAll('#categories tbody tr')].map(tr => "
                        "[...tr.children].map(td => td.textContent))")
    row_of = {r[0]: r[3] for r in rows}
    for c in report.get("categories", []):
        if c["bytes"] == 0:
            continue
        check(name + ": the categories table has '%s'" % c["name"], c["name"] in row_of, str(sorted(row_of)))
        for k in c.get("children", [])[:5]:
            for origin in k.get("origins", {}):
                check(name + ": the categories table says %s/%s came from %s" % (c["name"], k["name"], origin),
                      k["name"] in row_of.get(c["name"], "") and "(" + origin in row_of.get(c["name"], "")
                      or ", " + origin in row_of.get(c["name"], ""), row_of.get(c["name"], ""))
    colours = browser.eval("""Object.fromEntries([...document.querySelectorAll('.legend span')].map(
        e => [e.textContent, e.style.getPropertyValue('--swatch')]))""")
    browser.screenshot(os.path.join(artifacts, "report-" + name + ".png"))
    # A real click on the largest zoomable category's label strip.
    target = max((r for r in rects if r["zoomable"] and r["w"] > 20 and r["h"] > 20), key=lambda r: r["bytes"], default=None)
    check(name + ": a category to click", target is not None)
    if target:
        browser.eval("window.scrollTo(0, 0)")
        browser.eval("document.getElementById('treemap').scrollIntoView()")
        rects2 = browser.eval("""[...document.querySelectorAll('#treemap > .tm.top')].map(e => {
            const r = e.getBoundingClientRect(); return {name: e.dataset.name, x: r.x, y: r.y}; })""")
        at = next(r for r in rects2 if r["name"] == target["name"])
        hit = browser.eval("(e => e ? e.className + ' ' + (e.dataset.name || '') : 'nothing')"
                           "(document.elementFromPoint(%f, %f))" % (at["x"] + 6, at["y"] + 6))
        before = browser.eval("document.body.dataset.zoom")
        browser.click(at["x"] + 6, at["y"] + 6)
        for _ in range(100):  # the page sets data-zoom once it has drawn the new level
            if browser.eval("document.body.dataset.zoom") != before:
                break
            time.sleep(0.02)
        crumb = browser.eval("[...document.querySelectorAll('#crumbs button')].map(b => b.textContent)")
        inside = browser.eval("[...document.querySelectorAll('#treemap > .tm')].reduce((s, e) => s + Number(e.dataset.bytes), 0)")
        check(name + ": clicking '%s' zooms into it" % target["name"],
              crumb == ["all categories", target["name"]] and inside == target["bytes"],
              "breadcrumb %s, %s bytes shown against %s; the click hit %s" % (crumb, inside, target["bytes"], hit))
        browser.screenshot(os.path.join(artifacts, "report-" + name + "-zoomed.png"))
    return report, html, seconds, colours


browser = Browser()
try:
    # dive's own fixture.
    dive_image = os.path.join(fixtures, "test-docker-image.tar")
    dive, _, _, dive_colours = analysis_page(browser, "dive", dive_image)

    # The README's example image (scripts/run-example.sh builds the same).
    with open(os.path.join(repo, "examples/images/gpu-app.json")) as f:
        example_spec = json.load(f)
    example_image = make_image(example_spec, "gpu-app", "oci-archive", "gzip")
    _, _, _, example_colours = analysis_page(browser, "example", example_image, ("--max-wasted", "10%"))
    # A category's colour is its own, whatever else the report holds.
    shared = sorted(set(dive_colours) & set(example_colours))
    check("colours: categories in both reports (%s)" % ", ".join(shared), len(shared) >= 2)
    for c in shared:
        check("colours: '%s' is the same colour in both reports" % c, dive_colours[c] == example_colours[c],
              "%s against %s" % (dive_colours[c], example_colours[c]))
    every = list(example_colours.values())
    check("colours: no two categories share one", len(set(every)) == len(every), str(example_colours))

    # 100,000 files: the page stays small and opens at once.
    many = make_image({"tag": "many:1", "layers": [
        {"created_by": "COPY data /data", "entries": [
            {"generate": "many", "dir": "data/small", "count": 100000, "size_min": 100, "size_max": 4000, "seed": 3},
            {"path": "opt/big/model.bin", "size": 50000000, "seed": 4}]}]}, "many")
    report, html, seconds, _ = analysis_page(browser, "100k-files", many)
    size = os.path.getsize(html)
    check("100k-files: the page is under 3 MB", size < 3_000_000, "%d bytes" % size)
    check("100k-files: 100,000 files read", report["size"]["final_entries"] >= 100000)
    print("report_browser: 100,000-file report: %d bytes, %.2f s from navigation to drawn" % (size, seconds))

    # Hostile names: markup and script in paths and in a layer's command.
    hostile = make_image({"tag": "hostile:1", "layers": [
        {"created_by": "RUN echo '<script>window.pwned=3</script><img src=x onerror=\"window.pwned=4\">'",
         "entries": [
             {"path": "app/<img src=x onerror=\"window.pwned=1\">.bin", "size": 400000, "seed": 5},
             {"path": "app/<script>window.pwned=2<", "type": "dir"},
             {"path": "app/<script>window.pwned=2</script>.bin", "size": 300000, "seed": 6},
             {"path": "app/\"'&amp;<b>bold</b>.txt", "size": 200000, "seed": 7}]}]}, "hostile")
    _, html, _, _ = analysis_page(browser, "hostile", hostile)
    check("hostile: no script from the image ran", browser.eval("typeof window.pwned") == "undefined")
    check("hostile: only the report's own scripts are in the page",
          browser.eval("document.scripts.length") == 3 and browser.eval("document.images.length") == 0,
          "%s scripts, %s images" % (browser.eval("document.scripts.length"), browser.eval("document.images.length")))
    check("hostile: no element from a name", browser.eval("document.querySelectorAll('#app b, #app script').length") == 0)
    zoom_into(browser, "app")
    names = browser.eval("[...document.querySelectorAll('#treemap .tm')].map(e => e.textContent)")
    check("hostile: the names are shown as text",
          any('<img src=x onerror="window.pwned=1">.bin' in n for n in names), json.dumps(names)[:400])
    command = browser.eval("document.getElementById('layers').textContent")
    check("hostile: the layer's command is shown as text", "<script>window.pwned=3</script>" in command)

    # Names that deceive the eye: a right-to-left override ("gpj.exe" would show as
    # "exe.jpg"), a zero-width space, a byte order mark, controls, DEL and a newline.
    # The page draws each mark as its escape, never its effect.
    deceiving = make_image({"tag": "deceiving:1", "layers": [{"created_by": "COPY . /srv", "entries": [
        {"path": "srv/invoice-\u202egpj.exe", "size": 500000, "seed": 11},
        {"path": "srv/pay\u200bpal.html", "size": 400000, "seed": 12},
        {"path": "srv/\ufeffbom-\u2067isolate", "size": 300000, "seed": 13},
        {"path": "srv/esc\u001b[31m-del\u007f-new\nline", "size": 200000, "seed": 14}]}]}, "deceiving")
    _, html, _, _ = analysis_page(browser, "deceiving", deceiving)
    zoom_into(browser, "srv")
    shown = browser.eval("document.body.innerText")
    for mark, escape in (("\u202e", "invoice-\\u{202e}gpj.exe"), ("\u200b", "pay\\u{200b}pal.html"),
                         ("\ufeff", "\\u{feff}bom-\\u{2067}isolate"), ("\u001b", "esc\\x1b[31m-del\\x7f-new\\nline")):
        check("deceiving: %s is drawn as %s" % (json.dumps(mark), escape), escape in shown and mark not in shown,
              "escape %s, mark %s" % (escape in shown, mark in shown))
    browser.screenshot(os.path.join(artifacts, "report-deceiving-names.png"))

    # CUDA kernels: a torch-like library compiled here (tests/kernels/build-fixtures.sh:
    # SASS sm_75, sm_80, sm_86, sm_90 and PTX compute_90). By CUDA's rules its SASS runs on
    # 7.5 to 9.0 (8.9 and 8.7 by 8.6's code: same major, lower minor), and only its PTX
    # on 10.0 and 12.0: JIT at first load.
    cuda_image = make_image({"tag": "cuda:1", "layers": [{"created_by": "COPY torch /opt/venv/", "entries": [
        {"path": "opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
         "from": os.path.join(kernel_fixtures, "old-torch.so")}]}]}, "cuda")
    report, _, _, _ = analysis_page(browser, "kernels", cuda_image)
    rows = browser.eval("[...document.querySelectorAll('#kernel-gpus tbody tr')]"
                        ".map(r => [...r.cells].map(c => c.textContent))")
    answers = {r[0]: r[2] for r in rows}
    expected = {"T4": "runs", "A10": "runs", "A100-80GB": "runs", "L4": "runs", "Jetson-AGX-Orin": "runs",
                "H100": "runs", "GH200": "runs", "B200": "JIT only", "B300": "JIT only", "RTX-5090": "JIT only"}
    check("kernels: each GPU's answer is CUDA's rule for the library's code",
          all(answers.get(g) == a for g, a in expected.items()), json.dumps(answers))
    check("kernels: a row per GPU of the JSON, by compute capability",
          [r[0] for r in rows] == [g["gpu"] for g in sorted(report["kernels"]["gpus"],
                                                            key=lambda g: float(g["compute_capability"]))])
    jit = next(g for g in report["kernels"]["gpus"] if g["gpu"] == "B200")
    ptx = [c for c in report["kernels"]["binaries"][0]["code"] if c["kind"] == "ptx"]
    check("kernels: the PTX to compile on B200 is the library's PTX, named",
          len(ptx) == 1 and jit["jit_bytes"] == ptx[0]["bytes"] and
          next(r for r in rows if r[0] == "B200")[3] == "libtorch_cuda.so", json.dumps(rows[-3:]))
    binary = browser.eval("[...document.querySelectorAll('#kernel-binaries tbody tr')]"
                          ".map(r => [...r.cells].map(c => c.textContent))")
    check("kernels: the library's row names its code",
          len(binary) == 1 and binary[0][0].endswith("/libtorch_cuda.so") and
          binary[0][2].startswith("sm_75 sm_80 sm_86 sm_90 (") and binary[0][3].startswith("compute_90 ("),
          json.dumps(binary))

    # A diff: the page draws, the change is the JSON's.
    diff_json = json.loads(run("diff", dive_image, example_image, "-q", "--format", "json").stdout)
    diff_html = os.path.join(work, "diff.html")
    run("diff", dive_image, example_image, "-q", "--format", "html", "-o", diff_html)
    browser.open(diff_html)
    problems = browser.problems("file://" + diff_html)
    check("diff: no console error, exception, CSP violation or request", not problems, "; ".join(problems))
    check("diff: the final size's change is the JSON's",
          browser.eval("document.getElementById('final-delta').dataset.bytes") == str(diff_json["size"]["final_bytes"]["delta"]))
    browser.screenshot(os.path.join(artifacts, "report-diff.png"))
finally:
    browser.close()

# The exports: ncdu reads the ncdu one whole; the CSV adds up.
for name, image in (("dive", dive_image), ("example", example_image), ("deceiving", deceiving)):
    final = json.loads(run("analyze", image, "-q", "--format", "json").stdout)["size"]["final_bytes"]
    export = os.path.join(work, name + ".ncdu.json")
    run("analyze", image, "-q", "--format", "ncdu", "-o", export)
    again = subprocess.run([ncdu, "-f", export, "-o", "-"], capture_output=True)
    check(name + ": ncdu -f reads the export", again.returncode == 0, again.stderr.decode()[:300])

    def total(node):
        return sum(total(c) for c in node[1:]) if isinstance(node, list) else node.get("asize", 0)

    if again.returncode == 0:
        check(name + ": ncdu's total is final_bytes", total(json.loads(again.stdout)[3]) == final)
        if name == "deceiving":
            def names(node):
                return [node[0]["name"]] + sum((names(c) for c in node[1:]), []) if isinstance(node, list) else [node["name"]]
            read_back = names(json.loads(again.stdout)[3])
            check("deceiving: ncdu reads the names as escapes, no mark in them",
                  "invoice-\\u{202e}gpj.exe" in read_back and not any("\u202e" in n or "\u200b" in n for n in read_back),
                  json.dumps(read_back)[:300])
    rows = list(csv.DictReader(io.StringIO(run("analyze", image, "-q", "--format", "csv").stdout.decode())))
    check(name + ": the CSV's bytes sum to final_bytes", sum(int(r["bytes"]) for r in rows) == final,
          "%d against %d" % (sum(int(r["bytes"]) for r in rows), final))
    check(name + ": every CSV row has a category", all(r["category"] for r in rows))

shutil.rmtree(work, ignore_errors=True)
check.finish()
