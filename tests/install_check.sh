#!/bin/sh
# install_check.sh - CTest's install/layout: installs a build into a
# temporary prefix, and again with DESTDIR, and checks what landed there.
#
#   install_check.sh BUILD_DIR CMAKE PREFIX BINDIR MANDIR UNITDIR DOCDIR
#
# BUILD_DIR is a configured and built tree; CMAKE the cmake it was configured
# with; PREFIX its CMAKE_INSTALL_PREFIX; the others the install directories
# (relative to the prefix). Checks:
#   - exactly the expected files are installed: the binary, the man page, the
#     two units and the documents; nothing from tests/, bench/ or fuzzers;
#   - the installed binary runs (--version, same as the build's);
#   - the units start the installed binary (ExecStart rewritten at install);
#   - the man page is the running version's and names every setting of
#     `serve --help` and every command of `--help` (so it cannot go stale);
#   - with groff: it renders without a warning;
#   - with systemd-analyze: both units verify.
# Exit status 0 passed, 1 failed, 77 skipped (install directories that are
# absolute would install outside the temporary folder). Takes a few seconds.
set -eu

build=$1 cmake=$2 prefix=$3 bindir=$4 mandir=$5 unitdir=$6 docdir=$7

for d in "$bindir" "$mandir" "$unitdir" "$docdir"; do
  case $d in
    /*) echo "skipped: $d is absolute; this check installs under a temporary prefix"
        exit 77 ;;
  esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/barberia-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
failed=0
fail() { echo "FAIL: $*"; failed=1; }

expected() { # the installed files, relative to the prefix, sorted
  printf '%s\n' "$bindir/barberia" "$mandir/man1/barberia.1" \
    "$unitdir/barberia.service" "$unitdir/barberia@.service" \
    "$docdir/barberia.env" "$docdir/deploy.md" "$docdir/nginx.conf" \
    "$docdir/operations.md" | LC_ALL=C sort
}

# check_tree ROOT EXEC_PREFIX: the files under ROOT are the expected ones,
# and the units start EXEC_PREFIX/BINDIR/barberia.
check_tree() {
  root=$1 exec_prefix=$2
  (cd "$root" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) >"$tmp/got"
  expected >"$tmp/want"
  if ! cmp -s "$tmp/want" "$tmp/got"; then
    fail "installed files under $root differ from the expected (-expected +installed):"
    diff "$tmp/want" "$tmp/got" | sed -n 's/^[<>]/  &/p'
  fi
  for u in barberia.service barberia@.service; do
    f="$root/$unitdir/$u"
    [ -f "$f" ] || continue
    grep -qx "ExecStart=$exec_prefix/$bindir/barberia serve" "$f" ||
      fail "$u: ExecStart is not $exec_prefix/$bindir/barberia serve: $(grep ExecStart "$f")"
  done
}

# 1. cmake --install --prefix
p=$tmp/prefix
if ! "$cmake" --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  fail "cmake --install --prefix $p"
  exit 1
fi
check_tree "$p" "$p"

bin=$p/$bindir/barberia
want_version=$("$build/barberia" --version)
got_version=$("$bin" --version) || fail "$bin --version exited $?"
[ "$got_version" = "$want_version" ] ||
  fail "installed --version says '$got_version', the build's '$want_version'"

# 2. the man page: this version, every setting, every command
man=$p/$mandir/man1/barberia.1
if [ -f "$man" ]; then
  grep -q "^\.TH BARBERIA 1 .*\"$want_version\"" "$man" ||
    fail "barberia.1: .TH does not name \"$want_version\""
  # the page as text: font changes dropped, \- as -
  sed 's/\\f[BIRP]//g; s/\\-/-/g' "$man" >"$tmp/man.txt"
  for v in $("$bin" serve --help | grep -o '(BARBERIA_[A-Z_]*)' | tr -d '()'); do
    grep -q "$v" "$tmp/man.txt" || fail "barberia.1 does not describe $v"
  done
  # the commands of --help: the lines from "Commands:" to the "--help" one,
  # up to two spaces (where the description starts)
  "$bin" --help | sed -n '/^Commands:/,/^  --help/p' | sed '1d;$d' |
    sed 's/^ *//; s/  .*//' >"$tmp/commands"
  [ -s "$tmp/commands" ] || fail "no commands found in barberia --help"
  while IFS= read -r c; do
    grep -qF "barberia $c" "$tmp/man.txt" || fail "barberia.1's SYNOPSIS lacks 'barberia $c'"
  done <"$tmp/commands"
  if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$man" >"$tmp/groff.log" 2>&1 || fail "groff exited $?"
    if [ -s "$tmp/groff.log" ]; then
      fail "barberia.1 renders with warnings:"
      cat "$tmp/groff.log"
    fi
  else
    echo "note: no groff, the man page's rendering is not checked"
  fi
fi

# 3. the units
if command -v systemd-analyze >/dev/null 2>&1; then
  u=$p/$unitdir
  # a template verifies as an instance of it, found beside it
  for unit in "$u/barberia.service" "$u/barberia@8081.service"; do
    if ! systemd-analyze verify --man=no "$unit" >"$tmp/verify.log" 2>&1 ||
      grep -v '^$' "$tmp/verify.log" | grep -q .; then
      fail "systemd-analyze verify $(basename "$unit"):"
      cat "$tmp/verify.log"
    fi
  done
else
  echo "note: no systemd-analyze, the units are not verified"
fi

# 4. DESTDIR: the configured prefix, staged under DESTDIR
d=$tmp/dest
if DESTDIR=$d "$cmake" --install "$build" >"$tmp/install.log" 2>&1; then
  check_tree "$d$prefix" "$prefix"
else
  cat "$tmp/install.log"
  fail "DESTDIR=$d cmake --install"
fi

[ $failed -eq 0 ] && echo "install layout: ok"
exit $failed
