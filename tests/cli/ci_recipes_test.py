#!/usr/bin/python3
"""The CI recipes in docs/ci/ hold valid YAML and imgsmith commands that work.

Usage: ci_recipes_test.py IMGSMITH RECIPES_DIR FIXTURES_DIR ACTION_YML

For each recipe (GitHub Actions: every step's `run`; GitLab CI: every job's
before_script, script and after_script), the shell text is split into
commands; each `imgsmith` command must name a subcommand whose --help lists
every flag it uses. Then the imgsmith commands run, in the recipe's order,
in one directory, with $IMAGE standing for dive's fixture instead of the
built image (and the main branch's report present, so the diff runs): each
must exit 0 or 1 (a gate), never 2 (a usage or input error), and every
file a --report or -o names must exist afterwards. The GitLab template's
variables ($IMGSMITH_IMAGE, $IMGSMITH_BASELINE) name the fixture and that
report.

The GitHub Action (action.yml): every `${{ inputs.X }}` it reads is
declared and every input is read; every flag its analysis step passes
imgsmith exists; and that step's script runs under bash as the runner would
run it (inputs in the environment, $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT
files): status 0 with the gates passed, 1 with a size gate failed, 2 for an
unknown finding id, the report in the summary, the diff against a baseline.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

imgsmith, recipes_dir, fixtures, action_yml = sys.argv[1:5]
imgsmith = os.path.abspath(imgsmith)
check = Checks("ci_recipes")




def scripts_of(doc):
    """The shell texts of a recipe, in order."""
    out = []
    for job in (doc.get("jobs") or {}).values():  # GitHub Actions
        for step in job.get("steps", []):
            if "run" in step:
                out.append(step["run"])
    for name, job in doc.items():  # GitLab CI: a job is a mapping with a script
        if isinstance(job, dict) and "script" in job:
            for key in ("before_script", "script", "after_script"):
                for line in job.get(key, []) or []:
                    out.append(line)
    return out


def commands(text):
    """The simple commands of a shell text: words split at ;, &&, ||, |, newlines."""
    text = text.replace("\\\n", " ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    current, out = [], []
    for token in lexer:
        if token in (";", "&&", "||", "|", "&", ";;"):
            if current:
                out.append(current)
            current = []
        else:
            current.append(token)
    if current:
        out.append(current)
    return out


def split_lines_first(text):
    # A newline ends a command too; shlex treats it as space, so split first
    # on newlines that are not inside a quoted string or after a backslash.
    out, buf, quote = [], "", None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            buf += c
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            buf += c
        elif c == "\\" and i + 1 < len(text) and text[i + 1] == "\n":
            buf += " "
            i += 1
        elif c == "\n":
            out.append(buf)
            buf = ""
        else:
            buf += c
        i += 1
    out.append(buf)
    return out


def expand(word, env):
    """$VAR and ${VAR} in a word, from env (unknown ones left as written)."""
    return re.sub(r"\$(?:\{(\w+)\}|(\w+))",
                  lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)


help_cache = {}


def flags_of(sub):
    if sub not in help_cache:
        r = subprocess.run([imgsmith, sub, "--help"], capture_output=True, text=True)
        help_cache[sub] = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", r.stdout)) if r.returncode == 0 else None
    return help_cache[sub]


work = tempfile.mkdtemp(prefix="imgsmith-ci-recipes-")
recipes = sorted(f for f in os.listdir(recipes_dir) if f.endswith((".yml", ".yaml")))
check("there are recipes", len(recipes) >= 2, str(recipes))
for recipe in recipes:
    with open(os.path.join(recipes_dir, recipe)) as f:
        try:
            doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            check(recipe + ": valid YAML", False, str(e))
            continue
    check(recipe + ": valid YAML, a mapping", isinstance(doc, dict))
    found = []
    for text in scripts_of(doc):
        for line in split_lines_first(text):
            for argv in commands(line):
                while argv and argv[0] in ("then", "do", "else", "{", "!", "if", "elif", "while"):
                    argv.pop(0)
                if argv and argv[0] == "imgsmith":
                    found.append(argv)
    check(recipe + ": runs imgsmith analyze", any(len(a) > 1 and a[1] == "analyze" for a in found))
    for argv in found:
        sub = argv[1] if len(argv) > 1 else ""
        known = flags_of(sub)
        check(recipe + ": 'imgsmith %s' is a command" % sub, known is not None)
        if known is None:
            continue
        for word in argv[2:]:
            if word.startswith("-") and word != "-":
                flag = word.split("=", 1)[0]
                check(recipe + ": imgsmith %s knows %s" % (sub, flag), flag in known)

    # Run them, in order, on dive's fixture, with the main branch's report there.
    run_dir = os.path.join(work, recipe)
    os.makedirs(os.path.join(run_dir, "main-report"))
    fixture = os.path.join(fixtures, "test-docker-image.tar")
    env = dict(os.environ, IMAGE="unused", PATH=os.path.dirname(os.path.abspath(imgsmith)) + ":" + os.environ["PATH"],
               IMGSMITH_IMAGE=fixture, IMGSMITH_GATES="", IMGSMITH_BASELINE="main-imgsmith.json")
    seed = subprocess.run([imgsmith, "analyze", fixture, "-q", "--format", "json"], capture_output=True)
    for name in ("main-report/imgsmith.json", "main-imgsmith.json"):
        with open(os.path.join(run_dir, name), "wb") as f:
            f.write(seed.stdout)
    for argv in found:
        words = [fixture if w == "docker://$IMAGE" else expand(w, env) for w in argv[1:]]
        # An unquoted variable that is empty ($IMGSMITH_GATES) is no word at all.
        real = [imgsmith] + [w for w, raw in zip(words, argv[1:]) if w or not raw.startswith("$")]
        r = subprocess.run(real, cwd=run_dir, env=env, capture_output=True, text=True)
        check(recipe + ": '%s' runs (exit 0 or 1)" % " ".join(argv[:3]), r.returncode in (0, 1),
              "exit %d: %s" % (r.returncode, r.stderr[-400:]))
        outputs = [w.split("=", 1)[1] for w in argv if w.startswith("--report=")]
        outputs += [argv[i + 1].split("=", 1)[1] for i, w in enumerate(argv[:-1]) if w == "--report"]
        outputs += [argv[i + 1] for i, w in enumerate(argv[:-1]) if w in ("-o", "--output")]
        for out in outputs:
            check(recipe + ": %s written" % out, os.path.isfile(os.path.join(run_dir, out)))

# ----- the GitHub Action -------------------------------------------------------------
with open(action_yml) as f:
    action = yaml.safe_load(f)
check("action.yml: valid YAML, a mapping", isinstance(action, dict))
inputs = action.get("inputs") or {}
runs = action.get("runs") or {}
check("action.yml: a composite action", runs.get("using") == "composite")
text = open(action_yml).read()
used = set(re.findall(r"\binputs\.([\w-]+)", text))  # in ${{ }} and in if: expressions
for name in sorted(used):
    check("action.yml: input %s is declared" % name, name in inputs)
for name in sorted(inputs):
    check("action.yml: input %s is read" % name, name in used)
check("action.yml: 'image' is required", (inputs.get("image") or {}).get("required") is True)
steps = runs.get("steps") or []
for step in steps:
    if "run" in step:
        check("action.yml: step '%s' names its shell" % step.get("name"), step.get("shell") == "bash")
analyze_step = next((s for s in steps if s.get("id") == "analyze"), None)
check("action.yml: an analysis step with id analyze", analyze_step is not None)
script = analyze_step["run"] if analyze_step else ""
known = flags_of("analyze")
flags = set(re.findall(r"args\+=\((--[\w-]+)", script))
for argv in (a for line in split_lines_first(script) for a in commands(line)):
    if argv and argv[0] == "imgsmith" and len(argv) > 1:
        sub_known = flags_of(argv[1])
        check("action.yml: 'imgsmith %s' is a command" % argv[1], sub_known is not None)
        for word in argv[2:]:
            if word.startswith("--"):
                check("action.yml: imgsmith %s knows %s" % (argv[1], word.split("=")[0]),
                      sub_known is not None and word.split("=")[0] in sub_known)
check("action.yml: the step passes gate flags", {"--max-size", "--deny", "--budget"} <= flags, str(flags))
for flag in sorted(flags):
    check("action.yml: imgsmith analyze knows %s" % flag, flag in known)
# The step's env: each input it maps, as the runner would set it.
step_env = {k: v for k, v in (analyze_step or {}).get("env", {}).items()}
check("action.yml: the step reads its inputs from the environment, not the script",
      "${{" not in script and all("inputs." in v for v in step_env.values()))


def run_action(case, **values):
    d = os.path.join(work, "action-" + case)
    os.makedirs(d)
    env = dict(os.environ, PATH=os.path.dirname(imgsmith) + ":" + os.environ["PATH"],
               GITHUB_STEP_SUMMARY=os.path.join(d, "summary.md"), GITHUB_OUTPUT=os.path.join(d, "output"))
    for key in step_env:
        env[key] = values.get(key, "")
    env.setdefault("IMAGE", "")
    env["IMAGE"] = values.get("IMAGE", os.path.join(fixtures, "test-docker-image.tar"))
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=d, env=env, capture_output=True, text=True)
    out = {}
    if os.path.exists(env["GITHUB_OUTPUT"]):
        for line in open(env["GITHUB_OUTPUT"]):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                out[k] = v
    return d, r, out


baseline = os.path.join(work, "baseline.json")
with open(baseline, "wb") as f:
    f.write(subprocess.run([imgsmith, "analyze", os.path.join(fixtures, "test-docker-image.tar"), "-q",
                            "--format", "json"], capture_output=True).stdout)
d, r, out = run_action("pass", MAX_SIZE="1GB", MAX_WASTED="50%", DENY="devel-in-final\ncuda-duplicated",
                       BUDGET="cuda=1GB os=1GB", ARGS="--top 5 --ignore '/opt/no such/**'", BASELINE=baseline)
check("action: gates passed: the step ends 0 with status=0", r.returncode == 0 and out.get("status") == "0",
      r.stderr[-400:] + str(out))
summary = open(os.path.join(d, "summary.md")).read() if os.path.exists(os.path.join(d, "summary.md")) else ""
check("action: the Markdown report is in the job summary", "imgsmith" in summary and "|" in summary, summary[:200])
check("action: the diff against the baseline is added", "### Against the baseline" in summary)
for name in ("imgsmith.json", "imgsmith.html", "imgsmith-junit.xml", "imgsmith.md"):
    check("action: %s written" % name, os.path.isfile(os.path.join(d, name)))
check("action: the report output names the JSON", out.get("report") == os.path.join(d, "imgsmith.json"))
d, r, out = run_action("size-gate", MAX_SIZE="1000")
check("action: a failed size gate is status=1, the step itself still ends 0 (the job fails later)",
      r.returncode == 0 and out.get("status") == "1", r.stderr[-400:] + str(out))
check("action: the failed gate's report is still in the summary",
      os.path.exists(os.path.join(d, "summary.md")) and "**Gate failed.**" in open(os.path.join(d, "summary.md")).read())
d, r, out = run_action("bad-id", DENY="no-such-finding")
check("action: an unknown finding id is status=2", out.get("status") == "2", r.stderr[-400:] + str(out))
d, r, out = run_action("injection", ARGS="--top 5 $(touch pwned) `touch pwned2`; touch pwned3")
check("action: args are words, never run", not any(os.path.exists(os.path.join(d, p))
                                                   for p in ("pwned", "pwned2", "pwned3")))

shutil.rmtree(work, ignore_errors=True)
check.finish()
