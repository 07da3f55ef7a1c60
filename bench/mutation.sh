#!/usr/bin/env bash
# Mutation testing of the core packages with gremlins: each mutant (a flipped
# comparison, an off-by-one, a changed operator) is compiled into its package and the
# package's tests run against it; a mutant they do not notice survived. Prints each
# survivor's file:line, a line per package and, last,
# `mutation: K of N killed (P %), S survived` (bench/mutsum says how it counts).
# Usage: bench/mutation.sh [PKG[@I/K]...]   (default: every package of
# bench/mutation-groups, whole). PKG is the package alone, without the packages in
# folders below it (name those on their own). PKG@I/K runs only part I of the
# package's files dealt into K parts of about equal size (as MUTATION_SPLIT deals them).
# Environment: MUTATION_GROUP=N (1 to the number of groups) runs group N of
# bench/mutation-groups instead, MUTATION_GROUP=today the day's group: (day of the year
# modulo the number of groups) + 1, the rotation CI uses.
# MUTATION_MIN=PCT exits 1 below PCT killed; MUTATION_SPLIT (1) runs each
# package as that many gremlins processes side by side, its files dealt between them;
# MUTATION_FILES="a.go b.go" mutates only those files of each package named (the
# others' mutants are not made, so the figure is of those files alone);
# MUTATION_SELECT=file gives each file a gremlins process whose mutants run only the
# tests that run a line of the file (MUTATION_SPLIT of them at a time);
# MUTATION_SELECT=line runs each mutant of gremlins' list against only the tests that
# run its line, with bench/mutline (MUTATION_WORKERS of them at a time);
# MUTATION_WORKERS (1) and
# MUTATION_TIMEOUT_COEF (10, gremlins' multiple of the package's plain test time before
# a mutant's tests count as timed out) and MUTATION_MIN_TIMEOUT (60 s, the least such
# deadline) for a loaded machine.
# Gremlins' --test-cpu is not used: v0.6.0 passes "-cpu N" to go test as one argument,
# which fails every run and so would count every mutant as killed.
set -euo pipefail
cd "$(dirname "$0")/.."
GREMLINS_VERSION=v0.6.0
bin="$(go env GOPATH)/bin/gremlins"
if ! go version -m "$bin" 2>/dev/null | grep -q "github.com/go-gremlins/gremlins[[:space:]]*${GREMLINS_VERSION}"; then
  GOFLAGS= go install "github.com/go-gremlins/gremlins/cmd/gremlins@${GREMLINS_VERSION}"
fi
if [ $# -eq 0 ]; then
  mapfile -t groups < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' bench/mutation-groups)
  if [ -n "${MUTATION_GROUP:-}" ]; then
    g="$MUTATION_GROUP"
    # 10#: the day of the year is zero-padded (008 is not octal).
    [ "$g" = today ] && g=$((10#$(date -u +%j) % ${#groups[@]} + 1))
    if ! [[ "$g" =~ ^[0-9]+$ ]] || [ "$g" -lt 1 ] || [ "$g" -gt "${#groups[@]}" ]; then
      echo "MUTATION_GROUP=$MUTATION_GROUP: want today or a group from 1 to ${#groups[@]} (bench/mutation-groups)" >&2
      exit 2
    fi
    read -r -a pkgs <<<"${groups[g - 1]}"
    echo "mutation: group $g of ${#groups[@]}: ${pkgs[*]}"
  else
    # Every package named, whole, once.
    pkgs=()
    for line in "${groups[@]}"; do
      for p in $line; do
        p="${p%@*}"
        [[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
      done
    done
  fi
  set -- "${pkgs[@]}"
fi
# gremlins times a mutant's tests against its first, coverage run of the package:
# a cached test result there would make every mutant time out. go vet is left out of
# a mutant's test run: it costs a second or more per mutant, and a mutant that only
# upsets vet has not been noticed by a test. -ldflags=-w leaves DWARF out of the test
# binaries: a quarter less link time per mutant. -failfast ends a mutant's tests at
# the first failure: the same verdict, sooner, for every mutant that is killed.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1 -vet=off -ldflags=-w -failfast"
# action's act tests run the example workflows for minutes, once per mutant, and act
# runs perfbot as a process of its own, outside the coverage gremlins reads: they are
# left out, and action is measured by its Go tests (docs/mutation.md, "action").
export PERFBOT_TEST_NO_ACT=1
out="bench/out/mutation"
mkdir -p "$out"
go build -o "$out/mutsum" ./bench/mutsum
go build -o "$out/mutline" ./bench/mutline
# gremlins copies the module and runs the tests under TMPDIR (outside the module, or
# it would copy its own copies); on SIGINT/SIGTERM it goes on with the mutant at hand,
# so the script stops its whole process group.
# A tmpfs (/dev/shm) when there is one, MUTATION_TMPDIR to choose: the tests' git
# repositories and each mutant's build then write no disk, which on bot/publish takes
# a third of the CPU time of its tests away (the kernel's side of the writes).
base="${MUTATION_TMPDIR:-}"
if [ -z "$base" ]; then
  base="${TMPDIR:-/tmp}"
  [ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
fi
TMPDIR="$(mktemp -d "$base/perfbot-mutation.XXXXXX")"
export TMPDIR
gpids=()
trap 'rm -rf "$TMPDIR"' EXIT
# mutline stops its mutants' tests on SIGTERM; gremlins goes on with its mutant, and
# a second later the whole group is killed.
trap 'for g in "${gpids[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done; sleep 1
  for g in "${gpids[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done; exit 130' INT TERM
# MUTATION_SELECT=file: each file is mutated by a gremlins process of its own, and its
# mutants run only the tests that execute at least one line of that file, found by
# running each test alone once under coverage. A test that runs none of a file's lines
# cannot notice a change to it, so the verdicts are those of the whole package's tests,
# and each mutant runs fewer tests: on bot/publish about half the test time.
# MUTATION_SPLIT is then how many of those processes run at a time.
# MUTATION_SELECT=line: gremlins lists the mutants (a dry run) and bench/mutline runs
# each against the tests that run its line: on bot/publish about a quarter of the
# test time. MUTATION_WORKERS mutants run at a time.
select="${MUTATION_SELECT:-}"
case "$select" in
"" | file | line) ;;
*)
  echo "MUTATION_SELECT=$select: want file or line" >&2
  exit 2
  ;;
esac
# select_tests runs each test of the package alone under coverage, at_once at a time,
# leaving in $sel/map a line "file test" for each file a test runs a line of and in
# $sel/TEST.time the test's time in nanoseconds.
select_tests() {
  sel="$TMPDIR/select-$name"
  mkdir -p "$sel"
  GOFLAGS="$flags" go test -c -cover -o "$sel/pkg.test" "./$pkg"
  local binflags=
  [ "$pkg" = action ] && binflags=-test.parallel=8
  (cd "$pkg" && GOCOVERDIR="$sel" "$sel/pkg.test" -test.list .) | grep -E '^(Test|Example|Fuzz)' >"$sel/tests" || true
  # xargs runs in a process group of its own, so that a signal stops it and its tests.
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid xargs -P "$at_once" -I{} bash -c 'cd "$1" && s=$(date +%s%N) &&
    { "$2" -test.run "^$3\$" -test.count=1 -test.coverprofile="$4/$3.cov" $5 >/dev/null 2>&1 || true; } &&
    echo $(($(date +%s%N) - s)) >"$4/$3.time"' _ "$pkg" "$sel/pkg.test" {} "$sel" "$binflags" <"$sel/tests" &
  gpids=($!)
  wait $!
  gpids=()
  while read -r t; do
    [ -f "$sel/$t.cov" ] || continue
    awk -v t="$t" 'NR > 1 && $NF > 0 { f = $1; sub(/:.*/, "", f); sub(/.*\//, "", f); print f, t }' "$sel/$t.cov"
  done <"$sel/tests" | sort -u >"$sel/map"
  echo "mutation: $pkg: $(wc -l <"$sel/tests") tests, each run alone under coverage to choose a file's tests"
}
# select_for FILE prints the -run pattern of the tests that run a line of FILE (one
# that matches no test when there are none: its mutants are then not covered) and
# the timeout coefficient for their time.
select_for() {
  local run total=0 t
  run=$(awk -v f="$1" '$1 == f { printf "%s%s", (n++ ? "|" : ""), $2 }' "$sel/map")
  for t in $(awk -v f="$1" '$1 == f { print $2 }' "$sel/map"); do total=$((total + $(cat "$sel/$t.time"))); done
  [ "$total" -gt 0 ] || total=1000000000
  echo "^(${run:-\$})\$" "$(coef_for "$total")"
}
# coef_for NS prints gremlins' timeout coefficient for tests that take NS nanoseconds:
# MUTATION_TIMEOUT_COEF, raised so that the deadline is at least MUTATION_MIN_TIMEOUT.
coef_for() {
  awk -v ns="$1" -v c="${MUTATION_TIMEOUT_COEF:-10}" -v min="${MUTATION_MIN_TIMEOUT:-60}" \
    'BEGIN { k = int(min / (ns / 1e9)) + 1; print (k > c ? k : c) }'
}
# reap waits for one of the running gremlins processes and checks its report.
reap() {
  local status=0 done_pid part i
  wait -n -p done_pid "${running[@]%%:*}" || status=$?
  for i in "${!running[@]}"; do
    [ "${running[i]%%:*}" = "$done_pid" ] || continue
    part="${running[i]#*:}"
    unset 'running[i]'
    running=("${running[@]}")
    break
  done
  if [ "$status" -eq 0 ] && [ ! -s "$out/$part.json" ] && grep -q '^No results to report' "$out/$part.log"; then
    return 0 # a part whose files hold no mutant
  fi
  if [ "$status" -ne 0 ] || [ ! -s "$out/$part.json" ]; then
    cat "$out/$part.log" >&2
    echo "gremlins failed on $pkg ($part, log above)" >&2
    failed=1
  fi
}
reports=()
for spec in "$@"; do
  pkg="${spec%@*}"
  pkg="${pkg#./}"
  pkg="${pkg%/}"
  only=
  if [ "$spec" != "${spec%@*}" ]; then
    slice="${spec##*@}"
    if ! [[ "$slice" =~ ^([0-9]+)/([0-9]+)$ ]] || [ "${BASH_REMATCH[1]}" -lt 1 ] || [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
      echo "$spec: want PKG@I/K with 1 <= I <= K" >&2
      exit 2
    fi
    only=$((BASH_REMATCH[1] - 1))
  fi
  name="${pkg//\//_}"
  rm -f "$out/$name.json"
  # "lines file", largest first.
  mapfile -t sized < <(cd "$pkg" && go list -f '{{range .GoFiles}}{{.}}{{"\n"}}{{end}}' . | while read -r f; do echo "$(wc -l <"$f") $f"; done | sort -rn)
  # MUTATION_FILES: the package's other files are left out of every part.
  skip=()
  if [ -n "${MUTATION_FILES:-}" ]; then
    keep=()
    for entry in "${sized[@]}"; do
      if [[ " $MUTATION_FILES " == *" ${entry#* } "* ]]; then keep+=("$entry"); else skip+=("${entry#* }"); fi
    done
    for f in $MUTATION_FILES; do
      if ! printf '%s\n' "${keep[@]}" | grep -qx "[0-9]* ${f//./\\.}"; then
        echo "MUTATION_FILES: $pkg has no file $f" >&2
        exit 2
      fi
    done
    sized=("${keep[@]}")
  fi
  # gremlins' deadline for a mutant is its coefficient times the package's test time
  # with the build cached, but each mutant is built afresh: on a fast package a loaded
  # machine's build alone would pass it. The coefficient is raised so that the deadline
  # is at least MUTATION_MIN_TIMEOUT seconds.
  # The test binary is built first (running no test), so that the timed run is, as
  # gremlins' own, one with the build cached: timing a cold build made the deadline
  # fall short of MUTATION_MIN_TIMEOUT.
  # action's host-job tests spend most of their time waiting out the fake host's idle
  # windows, side by side: eight at a time rather than one a core.
  flags="$GOFLAGS"
  [ "$pkg" = action ] && flags="$flags -parallel=8"
  # With MUTATION_SELECT each file's coefficient comes from its own tests' times.
  coef=
  if [ -z "$select" ]; then
    GOFLAGS="$flags" go test -cover -run '^$' "./$pkg" >/dev/null 2>&1 || true
    t0=$(date +%s%N)
    GOFLAGS="$flags" go test -cover "./$pkg" >/dev/null 2>&1 || true
    coef=$(coef_for "$(($(date +%s%N) - t0))")
  fi
  # One package at a time, so a mutant is judged by its own package's tests. With
  # MUTATION_SPLIT=K the package's files are dealt into K parts of about equal size,
  # each run by its own gremlins process at the same time (the others' files excluded),
  # and their reports add up to the package (bench/mutsum).
  # With PKG@I/K the files are dealt into K parts the same way and part I alone runs.
  k="${MUTATION_SPLIT:-1}"
  [ -n "$select" ] && k=1
  [ -n "$only" ] && k="${spec##*/}"
  if [ "$k" -gt "${#sized[@]}" ]; then
    if [ -n "$only" ]; then
      echo "$spec: $pkg has only ${#sized[@]} files, too few for $k parts" >&2
      exit 2
    fi
    k=${#sized[@]}
  fi
  declare -a files=() part_of=() size=()
  for ((i = 0; i < k; i++)); do size[i]=0; done
  for entry in "${sized[@]}"; do
    best=0
    for ((i = 1; i < k; i++)); do [ "${size[i]}" -lt "${size[best]}" ] && best=$i; done
    files+=("${entry#* }")
    part_of+=("$best")
    size[best]=$((size[best] + ${entry%% *}))
  done
  # The gremlins processes of this package: "report name:the files it mutates".
  units=()
  if [ "$select" = line ]; then
    at_once="${MUTATION_WORKERS:-1}"
    select_tests
    part="$name"
    [ -n "$only" ] && part="$name.part$((only + 1))of$k"
    rm -f "$out/$part.json"
    excl=(-E /)
    for f in "${skip[@]}"; do excl+=(-E "^${f//./\\.}\$"); done
    for j in "${!files[@]}"; do
      [ -n "$only" ] && [ "${part_of[j]}" -ne "$only" ] && excl+=(-E "^${files[j]//./\\.}\$")
    done
    if ! GOFLAGS="$flags" "$bin" unleash --dry-run "${excl[@]}" -o "$sel/dry.json" "./$pkg" >"$out/$part.log" 2>&1; then
      cat "$out/$part.log" >&2
      echo "gremlins failed listing the mutants of $pkg ($part, log above)" >&2
      exit 1
    fi
    if [ ! -s "$sel/dry.json" ]; then
      grep -q '^No results to report' "$out/$part.log" && continue # no mutant in its files
      cat "$out/$part.log" >&2
      echo "gremlins listed no mutant of $pkg ($part, log above)" >&2
      exit 1
    fi
    GOFLAGS="$flags" setsid "$out/mutline" -dry "$sel/dry.json" -cover "$sel" -jobs "$at_once" \
      -coef "${MUTATION_TIMEOUT_COEF:-10}" -min-timeout "${MUTATION_MIN_TIMEOUT:-60}s" \
      -o "$out/$part.json" "$pkg" >>"$out/$part.log" 2>&1 &
    gpids=($!)
    if ! wait $!; then
      cat "$out/$part.log" >&2
      echo "mutline failed on $pkg ($part, log above)" >&2
      exit 1
    fi
    gpids=()
    reports+=("$pkg=$out/$part.json")
    continue
  elif [ -n "$select" ]; then
    for j in "${!files[@]}"; do
      [ -n "$only" ] && [ "${part_of[j]}" -ne "$only" ] && continue
      units+=("$name.${files[j]%.go}:${files[j]}")
    done
    at_once="${MUTATION_SPLIT:-1}"
    select_tests
  else
    for ((i = 0; i < k; i++)); do
      [ -n "$only" ] && [ "$i" -ne "$only" ] && continue
      part="$name"
      [ "$k" -gt 1 ] && part="$name.part$((i + 1))of$k"
      mine=
      for j in "${!files[@]}"; do [ "${part_of[j]}" -eq "$i" ] && mine="$mine ${files[j]}"; done
      units+=("$part:${mine# }")
    done
    at_once=${#units[@]}
  fi
  gpids=()
  running=()
  failed=
  for unit in "${units[@]}"; do
    part="${unit%%:*}"
    mine=" ${unit#*:} "
    rm -f "$out/$part.json"
    # gremlins mutates every .go file below the package's folder and matches these
    # patterns against the paths from that folder: "/" leaves out the files of the
    # packages below it (runner/patch/patchrun, bot/gate/gatetest), which are
    # measured by their own name, with their own tests; without it every part of a
    # split package would mutate them again.
    excl=(-E /)
    for f in "${skip[@]}"; do excl+=(-E "^${f//./\\.}\$"); done
    for f in "${files[@]}"; do
      [[ "$mine" == *" $f "* ]] || excl+=(-E "^${f//./\\.}\$")
    done
    uflags="$flags"
    ucoef="$coef"
    if [ -n "$select" ]; then
      read -r run ucoef < <(select_for "${unit#*:}")
      uflags="$flags -run=$run"
    fi
    while [ "${#running[@]}" -ge "$at_once" ]; do reap; done
    GOFLAGS="$uflags" setsid "$bin" unleash --workers "${MUTATION_WORKERS:-1}" --timeout-coefficient "$ucoef" "${excl[@]}" \
      -o "$out/$part.json" "./$pkg" >"$out/$part.log" 2>&1 &
    gpids+=($!)
    running+=("$!:$part")
  done
  while [ "${#running[@]}" -gt 0 ]; do reap; done
  gpids=()
  [ -z "$failed" ] || exit 1
  for unit in "${units[@]}"; do
    part="${unit%%:*}"
    if [ -s "$out/$part.json" ]; then reports+=("$pkg=$out/$part.json"); fi
  done
done
if [ "${#reports[@]}" -eq 0 ]; then
  echo "mutation: no mutant in what was named"
  exit 0
fi
"$out/mutsum" -min "${MUTATION_MIN:-0}" "${reports[@]}"
