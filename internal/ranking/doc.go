// Package ranking keeps each leaderboard's visible, valid rows in rank order in memory,
// fed by the manager's informers, so reads never sort and never call the apiserver.
package ranking

// Registry holds one rank index per leaderboard. (Filled in by issue 3.)
type Registry struct{}
