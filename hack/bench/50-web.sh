#!/usr/bin/env bash
# The leaderboard pages (internal/web), served through their handlers:
#   BoardPage/page=N/rendered  a page of 50 rows of a 100,000-row board in rank order,
#                              decoded, formatted (markdown, links, numbers) and rendered
#   BoardPage/page=N/kept      the same page served from the kept rendered pages
#   SortedPage/cold            a page sorted by a column on a 20,000-row board (the sort
#                              limit): every row sorted, then the page rendered
#   SortedPage/warm            the next page of that order: the kept order paged, rendered
# Pure Go benchmarks: no control plane needed. PODIUM_BENCH_TIME sets -benchtime (1s).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(go test -run '^$' -bench . -benchmem -benchtime "${PODIUM_BENCH_TIME:-1s}" -count 1 ./internal/web/ 2>&1) || {
	echo "$out" >&2
	echo "web: benchmark failed" >&2
	exit 1
}
echo "$out" | awk '
/^Benchmark/ {
	name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	line = sprintf("web: %-28s", name)
	for (i = 3; i < NF; i += 2) {
		v = $i; u = $(i + 1)
		if (u == "ns/op" && v >= 1e6) { v = sprintf("%.1f", v / 1e6); u = "ms/op" }
		else if (u == "ns/op" && v >= 1e3) { v = sprintf("%.2f", v / 1e3); u = "µs/op" }
		line = line sprintf("  %s %s", v, u)
	}
	print line
}'
