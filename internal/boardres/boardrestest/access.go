package boardrestest

import (
	"context"
	"errors"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/authn"
)

// The access table: every reader of a board (the JSON read by POST and GET, the CSV,
// the badge, the row history, the row read, the web board and history pages) runs
// AccessCases against its own handler and must answer what the rule (boardaccess.Access)
// answers, with as many access reviews. A reader that grew its own rule again, or
// answered a missing board sooner than a private one, would fail here.

// Callers of the access table: tokens a Reviewer authenticates, users it knows.
const (
	// Member may get leaderboards in namespace Org.
	Member = "member"
	// Outsider is authenticated and may get nothing.
	Outsider = "outsider"
	// OtherMember may get leaderboards in namespace OtherOrg.
	OtherMember = "other-member"
	// OtherOrg is another organization's namespace.
	OtherOrg = "other"
)

// Ids of the table's board and row.
const (
	BoardUID types.UID = "0c2a3f5e-7b1d-4e8a-9c6f-1a2b3c4d5e6f"
	RowUID   types.UID = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"
)

// AccessCase is one request of a caller for the board at Slug (or by id BoardUID), and
// for its row RowUID, and what the rule answers.
type AccessCase struct {
	Name string
	// Board returns the board in the cache, or nil when there is none.
	Board func() *hubv1alpha1.Leaderboard
	// Row is the state of RowUID on Board: RowRanked, RowHidden or RowMissing.
	Row RowState
	// Caller is a token: "" (anonymous), Member, Outsider or OtherMember.
	Caller string
	// Readable is whether the caller gets the board (or the row, for row readers).
	Readable bool
	// Reviews is how many access reviews the answer costs.
	Reviews int
}

// RowState is what the board holds under RowUID.
type RowState int

// Row states.
const (
	RowRanked  RowState = iota // a ranked row (display, valid)
	RowHidden                  // a row with visibility hide
	RowMissing                 // no row
)

// PublicBoard, PrivateBoard and ForeignBoard are the table's boards: "main" of Package
// in Org, public or private, and one in OtherOrg that names Org's dataset (a package of
// another org, which no reader serves).
func PublicBoard() *hubv1alpha1.Leaderboard { return accessBoard(Org, hubv1alpha1.VisibilityPublic) }

// PrivateBoard is PublicBoard, private.
func PrivateBoard() *hubv1alpha1.Leaderboard {
	return accessBoard(Org, hubv1alpha1.VisibilityPrivate)
}

// ForeignBoard is a public board in OtherOrg naming Org's dataset.
func ForeignBoard() *hubv1alpha1.Leaderboard {
	return accessBoard(OtherOrg, hubv1alpha1.VisibilityPublic)
}

func noBoard() *hubv1alpha1.Leaderboard { return nil }

func accessBoard(ns string, vis hubv1alpha1.Visibility) *hubv1alpha1.Leaderboard {
	return &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: Name, UID: BoardUID, ResourceVersion: "7", Generation: 1,
			CreationTimestamp: metav1.NewTime(Epoch)},
		Spec: hubv1alpha1.LeaderboardSpec{Package: Package, Name: Name, Title: "Access", Visibility: vis,
			Columns: []hubv1alpha1.Column{{ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber}},
			RankBy:  []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}}},
	}
}

// Row returns RowUID on lb in the given state, or nil for RowMissing: validated, so a
// RowRanked row is ranked (ranking.Ranked).
func Row(lb *hubv1alpha1.Leaderboard, s RowState) *hubv1alpha1.LeaderboardRow {
	if lb == nil || s == RowMissing {
		return nil
	}
	row := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: lb.Namespace, Name: "row", UID: RowUID, ResourceVersion: "9", Generation: 1,
			CreationTimestamp: metav1.NewTime(Epoch), Labels: map[string]string{hubv1alpha1.LabelLeaderboard: lb.Name}},
		Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name, Visibility: hubv1alpha1.RowDisplay},
	}
	if s == RowHidden {
		row.Spec.Visibility = hubv1alpha1.RowHide
	}
	row.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionValid, Status: metav1.ConditionTrue,
		ObservedGeneration: 1, Reason: "Valid", LastTransitionTime: metav1.NewTime(Epoch)}}
	return row
}

// AccessCases is the board table: every reader of a board runs it. Row readers run it
// too (with a ranked row on the board), and RowAccessCases besides.
func AccessCases() []AccessCase {
	return []AccessCase{
		{"a public board, anonymous", PublicBoard, RowRanked, "", true, 0},
		{"a public board, a member", PublicBoard, RowRanked, Member, true, 0},
		{"a missing board, anonymous", noBoard, RowMissing, "", false, 0},
		{"a missing board, authenticated", noBoard, RowMissing, Outsider, false, 1},
		{"a missing board, a member of its org", noBoard, RowMissing, Member, false, 1},
		{"a private board, anonymous", PrivateBoard, RowRanked, "", false, 0},
		{"a private board, a non-member", PrivateBoard, RowRanked, Outsider, false, 1},
		{"a private board, a member", PrivateBoard, RowRanked, Member, true, 1},
		{"another org's package, anonymous", ForeignBoard, RowRanked, "", false, 0},
		{"another org's package, a member of the board's namespace", ForeignBoard, RowRanked, OtherMember, false, 1},
	}
}

// RowAccessCases are the rows of a readable board that are not public: the row
// history, the row read and the web history page run them (the badge shows ranked rows
// only, and answers all of them 404 without a review). A hidden row and a missing one
// cost the same review.
func RowAccessCases() []AccessCase {
	return []AccessCase{
		{"a hidden row of a public board, anonymous", PublicBoard, RowHidden, "", false, 0},
		{"a hidden row of a public board, a non-member", PublicBoard, RowHidden, Outsider, false, 1},
		{"a missing row of a public board, a non-member", PublicBoard, RowMissing, Outsider, false, 1},
		{"a hidden row of a public board, a member", PublicBoard, RowHidden, Member, true, 1},
		{"a missing row of a public board, a member", PublicBoard, RowMissing, Member, false, 1},
		{"a hidden row of a private board, a member", PrivateBoard, RowHidden, Member, true, 1},
		{"a missing row of a private board, a member", PrivateBoard, RowMissing, Member, false, 1},
	}
}

// Reviewer authenticates the table's callers (the token is the user name) and allows
// Member in Org and OtherMember in OtherOrg to get leaderboards, counting reviews.
type Reviewer struct {
	mu      sync.Mutex
	reviews int
}

// Authenticate implements authn.Reviewer.
func (r *Reviewer) Authenticate(_ context.Context, token string) (*authn.Caller, error) {
	switch token {
	case Member, Outsider, OtherMember:
		return &authn.Caller{User: token}, nil
	}
	return nil, errors.New("unknown token")
}

// Allowed implements authn.Reviewer.
func (r *Reviewer) Allowed(_ context.Context, c *authn.Caller, a authn.Attributes) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reviews++
	if c.Anonymous || a.Verb != "get" || a.Resource != "leaderboards" {
		return false, nil
	}
	return (c.User == Member && a.Namespace == Org) || (c.User == OtherMember && a.Namespace == OtherOrg), nil
}

// Reviews returns the reviews counted since the last call, and starts again.
func (r *Reviewer) Reviews() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.reviews
	r.reviews = 0
	return n
}

// Caller returns the authn.Caller of a table token, anonymous for "".
func Caller(token string) *authn.Caller {
	if token == "" {
		return &authn.Caller{Anonymous: true}
	}
	return &authn.Caller{User: token}
}
