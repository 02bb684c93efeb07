#!/usr/bin/env python3
"""gen on real public repositories (tests/gen-real/): agreement with the
maintainers' own Dockerfiles, and the decisions gen gets wrong in silence.

Each tests/gen-real/<slug>/ holds tree/ (the facts gen must see in the
repository, written from it, not copied) and case.json (the repository, the
files read, and the maintainers' answer: their Dockerfile's base image,
Python, apt packages, command and port, or their README's run command).

For every case this runs `imgsmith gen tree --stdout` and reads the final
stage of the Dockerfile it writes. Six decisions are compared:
  gpu             a GPU image or not
  cuda_major      the CUDA major (GPU images both)
  flavor          base | runtime | devel | cpu
  python          X.Y
  system_packages the expert's run-time apt packages, all in gen's final stage
  cmd             the same program and script, module or app
  port            the same port (the expert's EXPOSE or command)
A field the expert leaves null is not compared, nor the apt packages that
are tools or Python itself, nor a command hidden in a wrapper script. Agreement is a figure, not a
pass mark: NVIDIA's base image for pip torch where the maintainers took a
runtime image is a choice, and the maintainers are not always right.

A disagreement on gpu, system_packages, cmd or port makes an image that
fails at start (no GPU, a missing library, a wrong program, an unreachable
port); when gen printed no warning that speaks to it (TOPICS) it is
*silent-wrong*. The test fails on
any silent-wrong decision not listed in tests/gen-real/known-silent.tsv
(the ratchet: fix one, delete its line), and on a case gen cannot read
because the case itself is broken.

Usage: gen_real_test.py IMGSMITH CORPUS_DIR [--table FILE]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FAIL_FIELDS = ("gpu", "system_packages", "cmd", "port")
FIELDS = ("gpu", "cuda_major", "flavor", "python", "system_packages", "cmd", "port")


def final_stage(dockerfile):
    """The lines from the last FROM on."""
    lines = dockerfile.splitlines()
    start = max((i for i, l in enumerate(lines) if l.startswith("FROM ")), default=0)
    return lines[start:]


def read_gen(text, stderr):
    stage = final_stage(text)
    joined = "\n".join(stage)
    image = stage[0].split()[1] if stage and stage[0].startswith("FROM ") else ""
    out = {"image": image}
    m = re.match(r"nvidia/cuda:(\d+)\.\d+(?:\.\d+)?-(cudnn\d*-)?(base|runtime|devel)-", image)
    if m:
        out.update(gpu=True, cuda_major=m.group(1), flavor=m.group(3), cudnn=bool(m.group(2)))
    else:
        # --base images and the CPU image: a GPU image sets NVIDIA_VISIBLE_DEVICES.
        gpu = "NVIDIA_VISIBLE_DEVICES" in joined
        out.update(gpu=gpu, cuda_major=None, flavor="other" if gpu else "cpu", cudnn=False)
    m = re.match(r"python:(\d+\.\d+)", image)
    py = m.group(1) if m else None
    m = re.search(r"\bpython(3\.\d+)=", joined)
    if py is None and m:
        py = m.group(1)
    m = re.search(r"/opt/venv/bin/python(3\.\d+)|python(3\.\d+) -m venv", text)
    if py is None and m:
        py = m.group(1) or m.group(2)
    out["python"] = py
    apt = []
    logical = joined.replace("\\\n", " ")
    for m in re.finditer(r"apt-get install -y --no-install-recommends ([^&\n]+)", logical):
        apt += [w.split("=")[0] for w in m.group(1).split() if not w.startswith("-")]
    out["system_packages"] = apt
    # The final stage checks at build time that every shared library the
    # app ships finds its libraries, naming the package of a missing one.
    out["library_check"] = "imgsmith-check/libraries.sh" in joined
    cmd = entry = None
    for line in stage:
        if line.startswith("CMD "):
            cmd = json.loads(line[4:])
        if line.startswith("ENTRYPOINT "):
            entry = json.loads(line[11:])
    full = []
    if entry and not entry[0].endswith("imgsmith-probe"):
        full += entry
    full += cmd or []
    out["cmd"] = full
    m = re.search(r"^EXPOSE (\d+)", joined, re.M)
    out["port"] = int(m.group(1)) if m else None
    out["warnings"] = [l for l in stderr.splitlines() if l.startswith("warning:")]
    return out


# A warning speaks to a decision only when it names what the decision is
# about: "gen does not know what X needs from a GPU" says nothing of the
# command or the port, and must not make a wrong one look warned.
TOPICS = {
    "gpu": re.compile(r"\bGPU\b|CUDA|cuda"),
    "system_packages": re.compile(r"\bapt\b|apt-get|system librar|shared librar|\blib[\w.+-]*\.so|"
                                  r"Debian package|OS package|find_package|find_library|needs [A-Z]\w+ \(lib"),
    "cmd": re.compile(r"entrypoint|--cmd|\bcommand\b|\bCMD\b|runs? (it|the|as|python)|served by"),
    "port": re.compile(r"\bport\b|--port|listens?\b|127\.0\.0\.1"),
}


def warned(field, warnings, gen=None, result=None):
    topic = TOPICS.get(field)
    if topic is None:
        return bool(warnings)
    if any(topic.search(w) for w in warnings):
        return True
    # Missing shared libraries (lib*) fail the build, by name, where the
    # image checks its libraries; a missing program (ffmpeg, pandoc) does not.
    if field == "system_packages" and gen and gen.get("library_check") and result:
        missing = result[2].replace("missing ", "").split()
        return bool(missing) and all(m.startswith("lib") for m in missing)
    return False


PYTHON = re.compile(r"^(python[0-9.]*|/.*/python[0-9.]*)$")
SHELLS = ("sh", "bash", "/bin/sh", "/bin/bash")


# Tools an image installs for its build or its users' shells, not libraries
# the app loads: not compared.
TOOLS = {"curl", "wget", "git", "git-lfs", "htop", "zip", "unzip", "gnupg", "ca-certificates",
         "vim", "nano", "sudo", "build-essential", "software-properties-common", "less", "procps",
         "tini", "dumb-init", "openssh-client", "gcc", "g++", "make", "cmake", "pkg-config"}


def runtime_packages(packages):
    """The packages an app needs at run time: no Python, pip or venv
    packages (gen installs its own Python), no -dev packages, no tools."""
    return [p for p in packages
            if p not in TOOLS and p != "pip" and not p.startswith("python") and
            not p.endswith("-dev")]


def command_target(cmd):
    """What a command runs, as 'program target': 'python main.py',
    'python -m pkg', 'uvicorn app.main:app', 'vllm serve'. None when it
    cannot be told: a wrapper script with no arguments (its command is in
    a file the tree does not hold)."""
    if not cmd:
        return None
    words = list(cmd)
    if words[0] in SHELLS and len(words) >= 3 and words[1] in ("-c", "-lc"):
        # The last command of a shell line ("umask 0002 && exec python x").
        line = re.split(r"&&|;", words[2])[-1]
        words = line.replace("exec ", "").split()
    while words and (words[0] in ("exec", "env") or "=" in words[0]):
        words = words[1:]
    # An entrypoint script that execs its arguments: what it is given.
    while words and (words[0].endswith(".sh") or
                     (words[0] in SHELLS and len(words) > 1 and words[1].endswith(".sh"))):
        words = words[2:] if words[0] in SHELLS else words[1:]
        if words and words[0].startswith("-"):
            return None  # a launcher script given options: its command is inside it
    if not words:
        return None
    program = os.path.basename(words[0])
    if PYTHON.match(words[0]) or program.startswith("python"):
        rest = [w for w in words[1:] if w not in ("-u", "-O", "-B")]
        if rest[:1] == ["-m"] and len(rest) > 1:
            return "python -m " + rest[1]
        return "python " + (rest[0].lstrip("./") if rest else "")
    # The first argument that is not an option, nor an option's number
    # (`--port 4000`): the app, or a subcommand.
    target = next((w for i, w in enumerate(words[1:], 1) if not w.startswith("-") and
                   not (w.isdigit() and words[i - 1].startswith("-"))), "")
    return (program + " " + target).strip()


def compare(expert, gen):
    """field -> (agree: bool, expert value, gen value) for the fields the
    expert states."""
    result = {}
    if expert.get("gpu") is not None:
        result["gpu"] = (bool(expert["gpu"]) == gen["gpu"], expert["gpu"], gen["gpu"])
    if expert.get("gpu") and gen["gpu"] and expert.get("cuda_major"):
        e = str(expert["cuda_major"])
        result["cuda_major"] = (e == gen["cuda_major"], e, gen["cuda_major"])
    if expert.get("flavor") in ("base", "runtime", "devel", "cpu"):
        result["flavor"] = (expert["flavor"] == gen["flavor"], expert["flavor"], gen["flavor"])
    if expert.get("python"):
        e = str(expert["python"])
        result["python"] = (e == gen["python"], e, gen["python"])
    wanted = runtime_packages(expert.get("system_packages") or [])
    if wanted:
        have = set(gen["system_packages"])
        # Ubuntu 24.04's t64 names are the same packages.
        missing = [p for p in wanted if p not in have and p + "t64" not in have]
        result["system_packages"] = (not missing, " ".join(wanted),
                                     "missing " + " ".join(missing) if missing else "all")
    if expert.get("cmd") and command_target(expert["cmd"]) is not None:
        e, g = command_target(expert["cmd"]), command_target(gen["cmd"]) or ""
        result["cmd"] = (e == g, e, g)
    if expert.get("port"):
        result["port"] = (int(expert["port"]) == gen["port"], expert["port"], gen["port"])
    return result


def main():
    args = sys.argv[1:]
    table_path = None
    if "--table" in args:
        i = args.index("--table")
        table_path = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    imgsmith, corpus = os.path.abspath(args[0]), os.path.abspath(args[1])
    known = set()
    known_path = os.path.join(corpus, "known-silent.tsv")
    if os.path.exists(known_path):
        for line in open(known_path, encoding="utf-8"):
            if line.strip() and not line.startswith("#"):
                slug, field = line.rstrip("\n").split("\t")[:2]
                known.add((slug, field))
    slugs = sorted(d for d in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, d, "case.json")))
    if not slugs:
        print(f"FAIL: no cases in {corpus}")
        return 1
    broken, silent_new, silent_known, stale = [], [], [], []
    agree = {f: 0 for f in FIELDS}
    compared = {f: 0 for f in FIELDS}
    refused = []
    rows = []
    env = dict(os.environ, NO_COLOR="1")
    for slug in slugs:
        case = json.load(open(os.path.join(corpus, slug, "case.json"), encoding="utf-8"))
        expert = case.get("expert") or {}
        tree = os.path.join(corpus, slug, "tree")
        with tempfile.TemporaryDirectory() as tmp:
            # gen reads the tree where it lies; --stdout writes nothing.
            run = subprocess.run([imgsmith, "gen", tree, "--stdout"], capture_output=True,
                                 text=True, env=env, cwd=tmp, timeout=120)
        if run.returncode != 0:
            first = (run.stderr.strip().splitlines() or ["(no message)"])[0]
            if run.returncode != 2:
                broken.append(f"{slug}: exit {run.returncode}: {first}")
            refused.append(slug)
            rows.append((slug, case.get("repo", ""), "refused: " + first[:120], {}))
            for f in FIELDS:
                if f in compare(expert, {"gpu": None, "cuda_major": None, "flavor": None,
                                         "python": None, "system_packages": [], "cmd": [],
                                         "port": None}):
                    compared[f] += 1
            continue
        gen = read_gen(run.stdout, run.stderr)
        result = compare(expert, gen)
        for f, (ok, _, _) in result.items():
            compared[f] += 1
            agree[f] += ok
            if not ok and f in FAIL_FIELDS and not warned(f, gen["warnings"], gen, result[f]):
                (silent_known if (slug, f) in known else silent_new).append((slug, f, result[f]))
        for f in FAIL_FIELDS:
            if (slug, f) in known and (f not in result or result[f][0] or
                                       warned(f, gen["warnings"], gen, result[f])):
                stale.append((slug, f))
        rows.append((slug, case.get("repo", ""), gen["image"], result, len(gen["warnings"])))

    total_agree = sum(agree.values())
    total = sum(compared.values())
    lines = ["| case | repository | gen's final image | " + " | ".join(FIELDS) + " | warnings |",
             "|---|---|---|" + "---|" * len(FIELDS) + "---:|"]
    for row in rows:
        slug, repo, image, result = row[:4]
        cells = []
        for f in FIELDS:
            if f not in result:
                cells.append("·")
            else:
                ok, e, g = result[f]
                cells.append("yes" if ok else f"**no**: {e} / {g}")
        warn = str(row[4]) if len(row) > 4 else "-"
        lines.append(f"| {slug} | {repo} | {image} | " + " | ".join(cells) + f" | {warn} |")
    lines.append("")
    lines.append("agreement per decision: " + ", ".join(
        f"{f} {agree[f]}/{compared[f]}" for f in FIELDS))
    lines.append(f"agreement over all decisions: {total_agree}/{total}"
                 f" ({100.0 * total_agree / total:.0f}%)" if total else "no decisions compared")
    lines.append(f"cases: {len(slugs)}, refused by gen: {len(refused)}"
                 + (f" ({', '.join(refused)})" if refused else ""))
    lines.append(f"silent-wrong decisions: {len(silent_new) + len(silent_known)}"
                 f" ({len(silent_known)} listed in known-silent.tsv)")
    report = "\n".join(lines)
    print(report)
    if table_path:
        with open(table_path, "w", encoding="utf-8") as out:
            out.write(report + "\n")
    for slug, f, (ok, e, g) in silent_known:
        print(f"known silent-wrong: {slug} {f}: expert {e}, gen {g}")
    for slug, f in stale:
        print(f"note: {slug} {f} is in known-silent.tsv but is no longer silent-wrong: delete its line")
    status = 0
    for line in broken:
        print(f"FAIL: gen failed on a case (fix the case or gen): {line}")
        status = 1
    for slug, f, (ok, e, g) in silent_new:
        print(f"FAIL: silent-wrong: {slug} {f}: the maintainers' answer is {e}, gen's {g}, "
              "and gen printed no warning")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
