#!/usr/bin/env bash
# The build-time check a generated Dockerfile runs in its final stage, run
# here as the build would run it, on files made to fail it: a Python
# extension that links a library the image lacks, and an entry module that
# imports a package nothing installs. The scripts are gen's .imgsmith/check
# files as written; only their roots (/opt/venv, /app) are moved to a
# scratch folder. Usage: gen_check_test.sh IMGSMITH
set -u
bin=$1
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"

project=$tmp/project
mkdir -p "$project"
printf 'fastapi==0.110\nuvicorn==0.29\n' >"$project/requirements.txt"
printf 'import json\nimport helpers\nfrom fastapi import FastAPI\napp = FastAPI()\n' >"$project/main.py"
printf 'import imgsmith_no_such_module\n' >"$project/helpers.py"
expect "gen writes the Dockerfile" 0 "$bin" gen "$project"
dockerfile=$project/Dockerfile
libraries=$project/.imgsmith/check/libraries.sh
imports=$project/.imgsmith/check/imports.py
check "gen writes the library check" test -s "$libraries"
check "gen writes the import check" test -s "$imports"
check "the final stage mounts and runs them" \
  grep -qF "RUN --mount=type=bind,source=.imgsmith/check,target=/tmp/imgsmith-check" "$dockerfile"
check "the checks run as the app user, after USER app" \
  sh -c "awk '/^USER app/{u=1} /imgsmith-check\/libraries.sh/{if(!u)exit 1; r=1} END{exit !(u && r)}' '$dockerfile'"
check "the .dockerignore lets them in" grep -qx '!.imgsmith/check' "$project/.dockerignore"

# A soname gen's table knows (with the package that ships it) and that this
# machine lacks, so that an extension linking it cannot resolve it here.
map=$(sed -n '/^packages=/,/"$/p' "$libraries" | tr -d '"' | sed 's/^packages=//')
missing="" package=""
for pair in $map; do
  lib=${pair%%=*}
  ldconfig -p | grep -q "^[[:space:]]*$lib " && continue
  missing=$lib package=${pair#*=}
  break
done
check "the table names a library this machine lacks" test -n "$missing"

# Stand-ins: an extension module linking $missing (built against a stub of
# that soname, then deleted) and one that needs nothing unusual.
root=$tmp/root
mkdir -p "$root/opt/venv/lib/site-packages" "$root/stub"
printf 'int stub(void) { return 0; }\n' >"$root/stub/stub.c"
cc -shared -fPIC -Wl,-soname,"$missing" -o "$root/stub/$missing" "$root/stub/stub.c"
printf 'extern int stub(void); int use(void) { return stub(); }\n' >"$root/stub/ext.c"
ext=$root/opt/venv/lib/site-packages/broken.cpython-311-x86_64-linux-gnu.so
cc -shared -fPIC -Wl,--no-as-needed -o "$ext" "$root/stub/ext.c" "$root/stub/$missing"
cc -shared -fPIC -o "$root/opt/venv/lib/site-packages/fine.abi3.so" "$root/stub/stub.c"
rm -rf "$root/stub"
sed "s#find /opt/venv /app #find $root/opt/venv $root/app #" "$libraries" >"$tmp/libraries.sh"
check "the roots were moved" grep -q "find $root/opt/venv" "$tmp/libraries.sh"
expect "a missing library fails the check" 1 bash "$tmp/libraries.sh"
check "the message names the file" grep -qF "$ext needs $missing" "$tmp/err"
check "the message names the package" grep -qF "install the package $package" "$tmp/err"
check "a module that resolves is not named" sh -c "! grep -q fine.abi3 '$tmp/err'"

# The driver's libraries are mounted at run time: allowed missing.
rm "$ext"
mkdir -p "$root/stub"
printf 'int cuInit(unsigned f) { return (int)f; }\n' >"$root/stub/cuda.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$root/stub/libcuda.so.1" "$root/stub/cuda.c"
printf 'extern int cuInit(unsigned); int use(void) { return cuInit(0); }\n' >"$root/stub/ext.c"
cc -shared -fPIC -Wl,--no-as-needed -o "$root/opt/venv/lib/site-packages/gpu.cpython-311-x86_64-linux-gnu.so" \
  "$root/stub/ext.c" "$root/stub/libcuda.so.1"
rm -rf "$root/stub"
expect "the driver's libcuda is allowed missing" 0 bash "$tmp/libraries.sh"

# Imports: what main.py imports, and what its local modules import.
mkdir -p "$root/app"
cp "$project/main.py" "$project/helpers.py" "$root/app/"
sed "s#^app = \"/app\"#app = \"$root/app\"#" "$imports" >"$tmp/imports.py"
check "the app's folder was moved" grep -q "^app = \"$root/app\"" "$tmp/imports.py"
mkdir -p "$root/site/fastapi"
printf 'class FastAPI:\n    pass\n' >"$root/site/fastapi/__init__.py"
expect "an import nothing installs fails the check" 1 env PYTHONPATH="$root/site" python3 "$tmp/imports.py"
check "the message names the importing line and the module" \
  grep -qF "helpers.py:1 imports imgsmith_no_such_module, which no installed package provides" "$tmp/err"
check "an installed package is not named" sh -c "! grep -q fastapi '$tmp/err'"
printf 'import json\n' >"$root/app/helpers.py"
expect "imports that resolve pass" 0 env PYTHONPATH="$root/site" python3 "$tmp/imports.py"
expect "a package missing from the image fails" 1 python3 "$tmp/imports.py"
check "it is named" grep -qF "main.py:3 imports fastapi" "$tmp/err"

# --no-verify leaves both checks out.
expect "gen --no-verify" 0 "$bin" gen "$project" --force --no-verify
check "no check in the Dockerfile" sh -c "! grep -q imgsmith-check '$dockerfile'"

# What exists is respected: --force names what it replaced, and a compose
# file of the project's own is not silently shadowed by compose.yaml.
expect "gen --force again" 0 "$bin" gen "$project" --force
check "--force names what it replaced" grep -q "replaced Dockerfile, .dockerignore (--force)" "$tmp/out"
printf 'services: {}\n' >"$project/docker-compose.yml"
expect "--compose beside docker-compose.yml, without --force" 2 sh -c "rm '$project/Dockerfile' '$project/.dockerignore'; '$bin' gen '$project' --compose"
check "it names the project's compose file" grep -q "docker-compose.yml exists, and Compose would read gen's compose.yaml" "$tmp/err"
check "and wrote nothing" test ! -e "$project/compose.yaml" -a ! -e "$project/Dockerfile"
expect "with --force it writes, and warns" 0 "$bin" gen "$project" --compose --force
check "the warning names it" grep -q "warning: docker-compose.yml exists" "$tmp/out"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
