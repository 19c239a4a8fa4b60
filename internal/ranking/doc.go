// Package ranking keeps each leaderboard's visible, valid rows in rank order in memory,
// fed by the manager's informers, so reads never sort and never call the apiserver.
//
// A Registry holds one Board per Leaderboard. A Board is an order-statistic treap over
// the board's ranked rows, ordered by the board's rankBy rules (see compare.go), so
// that a changed row moves in O(log n) and a page at any depth is found in
// O(log n + limit). Each node holds the row's sort key, parsed once when the row
// enters the index, and a pointer to the informer's cached object, never a copy.
package ranking
