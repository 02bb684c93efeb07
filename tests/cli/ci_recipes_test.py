#!/usr/bin/python3
"""The CI recipes in docs/ci/ hold valid YAML and imgsmith commands that work.

Usage: ci_recipes_test.py IMGSMITH RECIPES_DIR FIXTURES_DIR

For each recipe (GitHub Actions: every step's `run`; GitLab CI: every job's
before_script, script and after_script), the shell text is split into
commands; each `imgsmith` command must name a subcommand whose --help lists
every flag it uses. Then the imgsmith commands run, in the recipe's order,
in one directory, with $IMAGE standing for dive's fixture instead of the
built image (and the main branch's report present, so the diff runs): each
must exit 0 or 1 (a gate), never 2 (a usage or input error), and every
file a --report or -o names must exist afterwards.
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

imgsmith, recipes_dir, fixtures = sys.argv[1:4]
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
    env = dict(os.environ, IMAGE="unused", PATH=os.path.dirname(os.path.abspath(imgsmith)) + ":" + os.environ["PATH"])
    fixture = os.path.join(fixtures, "test-docker-image.tar")
    seed = subprocess.run([imgsmith, "analyze", fixture, "-q", "--format", "json"], capture_output=True)
    for name in ("main-report/imgsmith.json", "main-imgsmith.json"):
        with open(os.path.join(run_dir, name), "wb") as f:
            f.write(seed.stdout)
    for argv in found:
        real = [imgsmith] + [fixture if w == "docker://$IMAGE" else os.path.expandvars(w) for w in argv[1:]]
        r = subprocess.run(real, cwd=run_dir, env=env, capture_output=True, text=True)
        check(recipe + ": '%s' runs (exit 0 or 1)" % " ".join(argv[:3]), r.returncode in (0, 1),
              "exit %d: %s" % (r.returncode, r.stderr[-400:]))
        outputs = [w.split("=", 1)[1] for w in argv if w.startswith("--report=")]
        outputs += [argv[i + 1].split("=", 1)[1] for i, w in enumerate(argv[:-1]) if w == "--report"]
        outputs += [argv[i + 1] for i, w in enumerate(argv[:-1]) if w in ("-o", "--output")]
        for out in outputs:
            check(recipe + ": %s written" % out, os.path.isfile(os.path.join(run_dir, out)))

shutil.rmtree(work, ignore_errors=True)
check.finish()
