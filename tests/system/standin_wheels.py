#!/usr/bin/env python3
"""Stand-in wheels for a project's requirements, so that gen's Dockerfile can
be built with no index at all (pip install --no-index --find-links).

Usage: standin_wheels.py OUT_DIR REQUIREMENTS_FILE...

Each requirement gets a pure-Python wheel of its name and of a version that
satisfies its specifier (the pinned one, or the lower bound). Its module
answers any attribute with a permissive stand-in object, so the project's own
code imports and runs. Servers are stand-ins that really listen: the console
scripts `uvicorn`, `gunicorn`, `streamlit` and `jupyter`, and gradio's
`launch()`, import the app they are given and serve HTTP on the port their
arguments (or the environment) name, answering "stand-in NAME serving APP".
"""
import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

# Distribution name -> the module it installs, where they differ.
MODULES = {"scikit-learn": "sklearn", "tensorflow-cpu": "tensorflow", "pyyaml": "yaml",
           "pillow": "PIL", "opencv-python": "cv2", "python-multipart": "multipart",
           "jupyterlab": "jupyterlab", "onnxruntime-gpu": "onnxruntime", "openai-whisper": "whisper",
           "opencv-python-headless": "cv2"}

PERMISSIVE = '''
class _StandIn:
    """Answers anything: calls, attributes, items, iteration, formatting."""
    def __init__(self, *args, **kwargs):
        pass
    def __call__(self, *args, **kwargs):
        # Used as a decorator (@app.get("/")): hand the function back.
        if len(args) == 1 and callable(args[0]) and not kwargs and not isinstance(args[0], _StandIn):
            return args[0]
        return _StandIn()
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StandIn()
    def __getitem__(self, key):
        return _StandIn()
    def __iter__(self):
        return iter(())
    def __bool__(self):
        return False
    def __format__(self, spec):
        return "0"
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False

def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _StandIn()
'''

SERVE = '''
import http.server, importlib, os, runpy, sys

def serve(tool, app, host, port):
    """Imports the app the way the real server would, then serves HTTP."""
    sys.path.insert(0, os.getcwd())
    if app.endswith(".py"):
        runpy.run_path(app, run_name="__main__")
    elif app:
        module, _, attr = app.partition(":")
        obj = importlib.import_module(module)
        if attr:
            getattr(obj, attr)
    body = f"stand-in {tool} serving {app}\\n".encode()
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    print(f"stand-in {tool}: serving {app} on {host}:{port}", flush=True)
    http.server.HTTPServer((host, int(port)), Handler).serve_forever()

def option(args, names, default):
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return default
'''

# Console scripts: name -> (module, body of main()).
SERVERS = {
    "uvicorn": ("uvicorn", '''
def main():
    args = sys.argv[1:]
    app = next((a for a in args if not a.startswith("-") and ":" in a), "")
    serve("uvicorn", app, option(args, ["--host"], "127.0.0.1"), option(args, ["--port"], "8000"))
'''),
    "gunicorn": ("gunicorn", '''
def main():
    args = sys.argv[1:]
    bind = option(args, ["--bind", "-b"], "127.0.0.1:8000")
    app = next((a for a in args if not a.startswith("-") and ":" in a and a != bind), "")
    host, _, port = bind.rpartition(":")
    serve("gunicorn", app, host, port)
'''),
    "streamlit": ("streamlit", '''
def main():
    args = sys.argv[1:]
    script = next((a for a in args[1:] if a.endswith(".py")), "")
    serve("streamlit", script, option(args, ["--server.address"], "0.0.0.0"), option(args, ["--server.port"], "8501"))
'''),
    "jupyter": ("jupyterlab", '''
def main():
    args = sys.argv[1:]
    serve("jupyter", "", option(args, ["--ip"], "127.0.0.1"), option(args, ["--port"], "8888"))
'''),
}

GRADIO = '''
class Interface(_StandIn):
    def launch(self, *args, **kwargs):
        serve("gradio", "", os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
              os.environ.get("GRADIO_SERVER_PORT", "7860"))
Blocks = Interface
'''


def requirement(line):
    """(name, version) of a requirements line, or None for options and blanks."""
    line = line.split("#", 1)[0].split(";", 1)[0].strip()
    if not line or line.startswith("-"):
        return None
    m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)", line)
    if not m:
        return None
    name, spec = m.group(1), m.group(3)
    version = "1.0"
    for op, v in re.findall(r"(==|>=|~=|===)\s*([A-Za-z0-9.+!*]+)", spec):
        version = v.replace("*", "0")
        break
    return name, version


def wheel(out, name, version):
    dist = re.sub(r"[-_.]+", "_", name)
    key = name.lower().replace("_", "-")
    # CuPy's wheels are named by CUDA (cupy-cuda12x) and all install cupy.
    module = "cupy" if key.startswith("cupy-cuda") else MODULES.get(key, dist.lower())
    files = {}
    body = PERMISSIVE
    console = {}
    for script, (owner, main) in SERVERS.items():
        if owner == module:
            files[f"{module}/_standin_cli.py"] = SERVE + PERMISSIVE + main
            console[script] = f"{module}._standin_cli:main"
    if module == "gradio":
        body = SERVE + PERMISSIVE + GRADIO
    files[f"{module}/__init__.py"] = body
    info = f"{dist}-{version}.dist-info"
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: imgsmith-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if console:
        files[f"{info}/entry_points.txt"] = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in console.items())
    record = ""
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(text.encode())}\n"
    files[f"{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    target = Path(out) / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)


def main():
    out = sys.argv[1]
    Path(out).mkdir(parents=True, exist_ok=True)
    for req in sys.argv[2:]:
        for line in Path(req).read_text().splitlines():
            parsed = requirement(line)
            if parsed:
                wheel(out, *parsed)


if __name__ == "__main__":
    main()
