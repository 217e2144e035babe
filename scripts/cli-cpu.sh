#!/bin/bash
# CPU time (user + system, GNU time) of a warm CLI search against `node -e 0` and `rg -l -F`, the
# median of N interleaved runs of each (issue 30 item 3): steadier than wall time on a loaded
# machine. The cache is warmed by one search first. Needs `npm run build` and GNU time.
#   scripts/cli-cpu.sh STORE [NODE ...]     e.g. scripts/cli-cpu.sh /tmp/store node test/node-range/node_modules/node-lowest/bin/node
# N (default 7) sets the runs; XDG_CACHE_HOME (default a new temporary directory) the cache.
set -euo pipefail
store=${1:?usage: scripts/cli-cpu.sh STORE [NODE ...]}
shift
nodes=("${@:-node}")
cli=$(dirname "$0")/../dist/node/cli.js
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$(mktemp -d)}
out=$(mktemp)
word=quasarmuffin
names=(rg) cmds=("rg -l -F $word $store")
for node in "${nodes[@]}"; do
  version=$("$node" --version)
  names+=("node-e0@$version" "search@$version") cmds+=("$node -e 0" "$node $cli search $word --store $store")
  "$node" "$cli" search "$word" --store "$store" >/dev/null
done
declare -A cpu
for _ in $(seq "${N:-7}"); do
  for j in "${!names[@]}"; do
    /usr/bin/time -o "$out" -f '%U %S' ${cmds[$j]} >/dev/null 2>&1 || true
    cpu[${names[$j]}]+="$(tail -1 "$out" | awk '{ printf "%d", ($1 + $2) * 1000 }') "
  done
done
for name in "${names[@]}"; do
  echo "$name cpu_ms=$(tr ' ' '\n' <<<"${cpu[$name]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
done
rm -f "$out"
