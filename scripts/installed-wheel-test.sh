#!/usr/bin/env bash
# What a user who pip-installs xlingua gets: build the xlingua wheel and every model wheel,
# install them into a fresh venv outside the checkout, and run the command line from a directory
# outside it, checking that every model loads from that venv. Run by `make test` after pytest.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/xlingua-wheels.XXXXXX")"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "installed-wheel-test: FAILED: $*" >&2; exit 1; }
case "$WORK/" in "$REPO"/*) fail "the temp dir $WORK is inside the checkout" ;; esac

VENV="$WORK/venv"
echo "installed-wheel-test: fresh venv in $VENV"
"$PYTHON" -m venv "$VENV"
PY="$VENV/bin/python"
"$PY" -m pip install -q --upgrade pip

# Build from an export of the checkout's files (hard links where possible): a build/ or egg-info
# left by an earlier build would put stale files into the wheel.
EXPORT="$WORK/export"
mkdir "$EXPORT"
(cd "$REPO" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
   [ -f "$f" ] && printf '%s\0' "$f"; done) > "$WORK/files"
if ! (cd "$REPO" && xargs -0 cp -l --parents -t "$EXPORT" < "$WORK/files" 2>/dev/null); then
  rm -rf "$EXPORT" && mkdir "$EXPORT"  # another file system: copy instead
  (cd "$REPO" && xargs -0 cp --parents -t "$EXPORT" < "$WORK/files")
fi
DIST="$WORK/dist"
"$PY" -m pip wheel -q --no-deps -w "$DIST" "$EXPORT" "$EXPORT"/packages/xlingua-models-*
rm -rf "$EXPORT"

echo "installed-wheel-test: wheels"
for wheel in "$DIST"/*.whl; do
  size=$(stat -c %s "$wheel")
  printf '  %-50s %7.1f MB\n' "$(basename "$wheel")" "$(echo "$size" | awk '{print $1 / 1e6}')"
  case "$(basename "$wheel")" in
    xlingua-[0-9]*) [ "$size" -le 5000000 ] || fail "the code wheel is over 5 MB" ;;
    *) [ "$size" -lt 100000000 ] || fail "$(basename "$wheel") is over 100 MB" ;;
  esac
done
WANT=$(( 1 + $(ls -d "$REPO"/packages/xlingua-models-*/ | wc -l) ))  # the code and each model package
[ "$(ls "$DIST"/*.whl | wc -l)" -eq "$WANT" ] || fail "expected $WANT wheels in $DIST"

# The CPU build of torch lies on this machine's disk; any other spec pulls a CUDA build.
"$PY" -m pip install -q torch==2.13.0
"$PY" -m pip install -q "$DIST"/*.whl

RUN="$WORK/run"
mkdir "$RUN"
cd "$RUN"
unset PYTHONPATH
export XLINGUA_HOME="$WORK/home"
XL="$VENV/bin/xlingua"

echo "installed-wheel-test: xlingua models"
"$XL" models > models.txt || fail "xlingua models exited $?"
# every model the package says it ships, each from the wheel that provides it, inside the venv
# (xlingua models shows xlingua-small's versions as one row, so the check asks the package)
"$PY" - "$VENV" <<'EOF' || { cat models.txt; fail "a shipped model is not installed in $VENV"; }
import sys
from xlingua.encoders.model_packages import installed, shipped_names
here = installed()
missing = [n for n in shipped_names() if n not in here]
outside = [n for n, d in here.items() if not str(d).startswith(sys.argv[1])]
assert not missing and not outside, (missing, outside)
EOF
grep -qF "  installed: $VENV/" models.txt || { cat models.txt; fail "xlingua models shows no model installed in $VENV"; }
if sed -n '/^shipped models/,$p' models.txt | grep -q "not installed"; then
  cat models.txt; fail "a shipped model is not installed"
fi
if grep -qF "$REPO" models.txt; then cat models.txt; fail "a model loads from the checkout"; fi
"$PY" - "$VENV" <<'EOF' || fail "xlingua or a model package imports from outside the venv"
import sys
import xlingua, xlingua_models_qe, xlingua_models_small, xlingua_models_static
for module in (xlingua, xlingua_models_qe, xlingua_models_small, xlingua_models_static):
    assert module.__file__.startswith(sys.argv[1]), module.__file__
EOF

echo "installed-wheel-test: xlingua demo"
"$XL" demo > demo.txt || fail "xlingua demo exited $?"
tail -n 3 demo.txt

echo "installed-wheel-test: xlingua embed"
printf 'The cat sleeps on the sofa.\nDie Katze schläft auf dem Sofa.\nLe chat dort sur le canapé.\n' > in.txt
"$XL" embed in.txt -o out.npy || fail "xlingua embed exited $?"
"$PY" -c "import numpy as np; x = np.load('out.npy'); assert x.shape == (3, 384), x.shape" ||
  fail "xlingua embed did not write 3 rows of 384"

echo "installed-wheel-test: xlingua score --qe"
printf 'Die Katze schläft auf dem Sofa.\nDas Parlament hat den Haushalt angenommen.\n' > src.de
printf 'The cat sleeps on the sofa.\nThe weather is nice today.\n' > tgt.en
"$XL" score --qe --src-lang de --tgt-lang en src.de tgt.en -o scores.tsv || fail "xlingua score --qe exited $?"
cat scores.tsv
[ "$(head -n 1 scores.tsv)" = "$(printf 'cosine\tqe')" ] || fail "xlingua score --qe header is not cosine<TAB>qe"
[ "$(wc -l < scores.tsv)" -eq 3 ] || fail "xlingua score wrote $(wc -l < scores.tsv) lines, expected a header and 2 rows"
awk -F'\t' 'NF != 2 { exit 1 }' scores.tsv || fail "xlingua score --qe rows are not cosine<TAB>qe"

echo "installed-wheel-test: xlingua serve"
PORT=$("$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$XL" serve --host 127.0.0.1 --port "$PORT" > serve.log 2>&1 &
SERVER=$!
"$PY" - "$PORT" "$SERVER" <<'EOF' || { cat serve.log; fail "xlingua serve did not answer as expected"; }
import json, os, sys, time, urllib.request

base = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 900  # loading the model on a busy machine
while True:
    try:
        urllib.request.urlopen(base + "/health", timeout=5)
        break
    except OSError:
        os.kill(int(sys.argv[2]), 0)  # the server still runs
        if time.monotonic() > deadline:
            sys.exit("no answer from /health")
        time.sleep(1)
body = json.dumps({"input": ["The cat sleeps.", "Die Katze schläft."], "model": "bundled"}).encode()
req = urllib.request.Request(base + "/v1/embeddings", body, {"Content-Type": "application/json"})
data = json.load(urllib.request.urlopen(req, timeout=300))["data"]
assert len(data) == 2 and len(data[0]["embedding"]) == 384, data
page = urllib.request.urlopen(base + "/", timeout=30).read().decode()
assert "/static/app.js" in page, page[:200]
for name in ("app.js", "style.css"):
    assert urllib.request.urlopen(f"{base}/static/{name}", timeout=30).status == 200
print("serve: 2 embeddings of 384, the page and its assets")
EOF
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
SERVER=""

echo "installed-wheel-test: passed"
