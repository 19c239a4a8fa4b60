// Package boardrestest is the table every consumer of board resolution runs: the
// leaderboard controller, the public read, the web pages and the CLI each decide, for
// the same claimants, which board owns the slug, and must all name Case.Owner. A
// consumer that grew its own ordering again would fail here.
package boardrestest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Slug parts shared by every claimant of every case.
const (
	Org     = "org"
	Dataset = "ds"
	Name    = "main"
	Package = Org + "/" + Dataset
	Slug    = Package + "/" + Name
)

// Claimant is one Leaderboard claiming Slug.
type Claimant struct {
	Object   string // metadata.name
	UID      types.UID
	Created  int // seconds after a fixed time
	Deleting bool
}

// Case is a set of claimants and the object name of the board that owns the slug.
type Case struct {
	Name      string
	Claimants []Claimant
	Owner     string
}

// Cases is the table. UIDs are chosen so that ordering ties by UID, or taking the first
// listed, picks another board than the rule in at least one case each.
func Cases() []Case {
	const lo, hi = "00000000-0000-4000-8000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff"
	const mid = "88888888-8888-4888-8888-888888888888"
	return []Case{
		{"a single board", []Claimant{{"main", lo, 0, false}}, "main"},
		{"the older board, whatever its name", []Claimant{{"a", lo, 5, false}, {"b", hi, 1, false}}, "b"},
		{"the same second: the object name, not the UID", []Claimant{{"b", lo, 3, false}, {"a", hi, 3, false}}, "a"},
		{"a board being deleted gives way", []Claimant{{"a", lo, 0, true}, {"b", hi, 9, false}}, "b"},
		{"only boards being deleted: the older", []Claimant{{"b", hi, 2, true}, {"a", lo, 4, true}}, "b"},
		{"three claimants", []Claimant{{"c", lo, 7, false}, {"b", mid, 2, false}, {"a", hi, 2, true}}, "b"},
	}
}

// Epoch is the time Claimant.Created counts from.
var Epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Boards returns the claimants as Leaderboards of Package in namespace Org, public,
// in the order the case lists them. A board being deleted carries a finalizer, as it
// must to exist with a deletionTimestamp.
func (c Case) Boards() []hubv1alpha1.Leaderboard {
	out := make([]hubv1alpha1.Leaderboard, len(c.Claimants))
	for i, cl := range c.Claimants {
		lb := hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:         Org,
				Name:              cl.Object,
				UID:               cl.UID,
				CreationTimestamp: metav1.NewTime(Epoch.Add(time.Duration(cl.Created) * time.Second)),
				Generation:        1,
			},
			Spec: hubv1alpha1.LeaderboardSpec{Package: Package, Name: Name, Title: cl.Object,
				Visibility: hubv1alpha1.VisibilityPublic},
		}
		if cl.Deleting {
			now := metav1.NewTime(Epoch.Add(time.Hour))
			lb.DeletionTimestamp = &now
			lb.Finalizers = []string{"test.podium.dev/keep"}
		}
		out[i] = lb
	}
	return out
}
