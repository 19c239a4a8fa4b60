package operator

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/web"
)

// setupWeb mounts the leaderboard pages (GET /leaderboards, GET
// /leaderboards/{org}/{dataset}/{name}, GET /assets/{file}), read from the manager's
// cache and the rank index with the same authorization as the JSON read, in the processes
// that serve the public read (servesRead).
func setupWeb(mgr manager.Manager, o Options, c *components) error {
	if !servesRead(o) {
		return nil
	}
	pages, err := web.New(web.Options{
		Reader:   mgr.GetCache(),
		API:      mgr.GetAPIReader(),
		Ranking:  webRanking(c.Ranking),
		Sort:     webSort,
		Reviewer: c.Reviewer,
		Log:      mgr.GetLogger().WithName("web"),
	})
	if err != nil {
		return err
	}
	for pattern, h := range pages.Routes() {
		c.Routes[pattern] = h
	}
	return nil
}

// webRanking shows the rank index to the pages.
func webRanking(r *ranking.Registry) func(types.UID) web.Ranked {
	return func(uid types.UID) web.Ranked {
		if r == nil {
			return nil
		}
		b := r.Board(uid)
		if b == nil {
			return nil
		}
		return webBoard{b}
	}
}

// webBoard is a board's index as the pages see it (web.Entry is ranking.Entry).
type webBoard struct{ *ranking.Board }

// webSort orders rows by a column with the rank index's comparison.
func webSort(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow {
	entries := ranking.Sort(rules, rows)
	out := make([]*hubv1alpha1.LeaderboardRow, len(entries))
	for i, e := range entries {
		out[i] = e.Row
	}
	return out
}
