#!/usr/bin/env bash
# scripts/check-layers passes on this tree and fails, naming the file and
# the rule, on copies of it that each break one rule: an include that goes
# up, a handler that writes through the store, core code on the SQL port.
#   tests/check_layers_test.sh SOURCE_DIR
set -euo pipefail
root=$1
check=$root/scripts/check-layers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$check" --root "$root" || { echo "FAIL: the tree itself crosses the layering"; exit 1; }

# a copy of src/ with one line added to file, which must make the check fail
# with a line that names file and holds want
broken() {
  local file=$1 line=$2 want=$3
  rm -rf "$tmp/src" && cp -r "$root/src" "$tmp/src"
  printf '%s\n' "$line" >>"$tmp/src/$file"
  local out rc=0
  out=$("$check" --root "$tmp" 2>&1) || rc=$?
  if [[ $rc -ne 1 ]] || ! grep -q "src/$file:.*$want" <<<"$out"; then
    echo "FAIL: $file + '$line': expected a crossing naming '$want', got ($rc):"
    echo "$out"
    exit 1
  fi
  echo "ok: $file + '$line' -> $(grep "src/$file" <<<"$out" | head -1 | sed 's/.*: //')"
}

broken http/http.h '#include "../api/api.h"' 'includes go down'
broken domain/roles.h '#include "../store/store.h"' 'includes go down'
broken store/store.h '#include "../core/app.h"' 'includes go down'
broken api/catalog.c 'void f(struct store *st, const struct barbero *b) { (void)store_barbero_add(st, b); }' 'store write'
broken cli/cli.c 'void g(struct store *st, const struct servicio *s) { (void)store_servicio_add(st, s); }' 'store write'
broken core/booking.c 'void h(void) { (void)db_text("x"); }' 'SQL port'
echo "check-layers: every rule holds on the tree and is caught when broken"
