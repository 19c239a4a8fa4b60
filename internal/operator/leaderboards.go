package operator

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/controllers"
	"podium.dev/podium/internal/ranking"
)

// setupLeaderboards registers the Dataset, Leaderboard and LeaderboardRow controllers,
// and the rank index when this operator serves the public read.
func setupLeaderboards(mgr manager.Manager, o Options, c *components) error {
	if o.PublicRead {
		if err := setupRanking(mgr, o, c); err != nil {
			return err
		}
	}
	if err := (&controllers.DatasetReconciler{Client: mgr.GetClient(), Events: mgr.GetEventRecorder("podium-dataset")}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&controllers.LeaderboardReconciler{Client: mgr.GetClient(), Events: mgr.GetEventRecorder("podium-leaderboard")}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&controllers.LeaderboardRowReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Events: mgr.GetEventRecorder("podium-leaderboardrow")}).SetupWithManager(mgr)
}

// setupRanking creates the rank index and feeds it from the manager's informers.
func setupRanking(mgr manager.Manager, _ Options, c *components) error {
	c.Ranking = ranking.NewRegistry()
	// Feed only registers informer handlers; the informers run with the manager.
	return c.Ranking.Feed(context.Background(), mgr.GetCache())
}
