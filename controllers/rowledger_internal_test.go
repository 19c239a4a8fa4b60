package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

func identities(prefix string, n int) map[string]hubv1alpha1.RowIdentity {
	out := map[string]hubv1alpha1.RowIdentity{}
	for i := range n {
		out[fmt.Sprintf("%s-%d", prefix, i)] = hubv1alpha1.RowIdentity{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			CreatedAt: metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))}
	}
	return out
}

func ledgerSizes(t *testing.T, c client.Client) map[string]int {
	t.Helper()
	list := &hubv1alpha1.RowIdentityLedgerList{}
	if err := c.List(context.Background(), list, client.InNamespace("org")); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range list.Items {
		out[l.Name] = len(l.Rows)
	}
	return out
}

// A batch goes into a ledger with fewer than ledgerOpenBelow rows, never into a fuller
// one (each append rewrites the whole object); else it starts a new ledger.
func TestLedgerAppendsOnlyToSmallLedgers(t *testing.T) {
	ctx := context.Background()
	full := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "full"}, Rows: identities("old", ledgerOpenBelow)}
	small := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "small"}, Rows: identities("older", 10)}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(full, small).Build()
	l := newRowLedger(c, c, c)

	if err := l.flush(ctx, "org", identities("a", 300)); err != nil {
		t.Fatal(err)
	}
	if got := ledgerSizes(t, c); len(got) != 2 || got["full"] != ledgerOpenBelow || got["small"] != 310 {
		t.Fatalf("after a batch of 300: %v, want the small ledger to take it", got)
	}
	if err := l.flush(ctx, "org", identities("b", 5)); err != nil {
		t.Fatal(err)
	}
	got := ledgerSizes(t, c)
	if len(got) != 3 || got["full"] != ledgerOpenBelow || got["small"] != 310 {
		t.Fatalf("after a batch of 5 with no small ledger left: %v, want a new ledger of 5", got)
	}
	// Rows a ledger holds are not written again.
	if err := l.flush(ctx, "org", identities("a", 300)); err != nil {
		t.Fatal(err)
	}
	if again := ledgerSizes(t, c); len(again) != 3 {
		t.Fatalf("held rows were written again: %v", again)
	}
}

// The writer builds on the ledgers it wrote itself while the cache has not caught up:
// no second ledger for the next batch, no row recorded twice.
func TestLedgerBuildsOnItsOwnWrites(t *testing.T) {
	ctx := context.Background()
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	staleCache := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build() // never sees a write
	l := newRowLedger(staleCache, api, api)

	if err := l.flush(ctx, "org", identities("a", 3)); err != nil {
		t.Fatal(err)
	}
	if err := l.flush(ctx, "org", identities("b", 4)); err != nil {
		t.Fatal(err)
	}
	if err := l.flush(ctx, "org", identities("a", 3)); err != nil {
		t.Fatal(err)
	}
	got := ledgerSizes(t, api)
	if len(got) != 1 {
		t.Fatalf("ledgers %v, want one ledger built on the writer's own write", got)
	}
	for _, n := range got {
		if n != 7 {
			t.Fatalf("ledgers %v, want 7 rows", got)
		}
	}
}

// A ledger the writer kept but that was deleted since: the batch fails with an error
// that puts its rows back into the next batch (not a NotFound, which drops them as a
// deleted namespace's), and the next batch starts a new ledger.
func TestLedgerRetriesTheRowsOfADeletedLedger(t *testing.T) {
	ctx := context.Background()
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	staleCache := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	l := newRowLedger(staleCache, api, api)
	if err := l.flush(ctx, "org", identities("a", 3)); err != nil {
		t.Fatal(err)
	}
	if err := api.DeleteAllOf(ctx, &hubv1alpha1.RowIdentityLedger{}, client.InNamespace("org")); err != nil {
		t.Fatal(err)
	}
	err := l.flush(ctx, "org", identities("b", 2))
	if err == nil || dropsRows(err) {
		t.Fatalf("flush into a deleted ledger: %v, want an error that retries", err)
	}
	if err := l.flush(ctx, "org", identities("b", 2)); err != nil {
		t.Fatal(err)
	}
	if got := ledgerSizes(t, api); len(got) != 1 {
		t.Fatalf("ledgers %v, want one new ledger", got)
	}
}

// A row queued while no ledger named it, whose name a ledger restored meanwhile holds
// with another id, is not written again: the batch has the row controller reconcile it,
// and it takes the restored identity. A row the ledger holds with its own id is not.
func TestLedgerRetakesARowALedgerNamesWithAnotherID(t *testing.T) {
	ctx := context.Background()
	restored := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "restored"}, Rows: identities("row", 2)}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(restored).Build()
	l := newRowLedger(c, c, c)
	l.retake = make(chan event.GenericEvent, 4)

	queued := map[string]hubv1alpha1.RowIdentity{
		"row-0": {ID: "11111111-1111-4111-8111-111111111111", CreatedAt: metav1.Now()}, // re-created: another UID
		"row-1": restored.Rows["row-1"],                                                // the row the ledger recorded
	}
	if err := l.flush(ctx, "org", queued); err != nil {
		t.Fatal(err)
	}
	if got := ledgerSizes(t, c); len(got) != 1 || got["restored"] != 2 {
		t.Fatalf("ledgers %v, want the restored one alone, unchanged", got)
	}
	if len(l.retake) != 1 {
		t.Fatalf("%d rows sent back to the controller, want 1 (row-0)", len(l.retake))
	}
	if e := <-l.retake; e.Object.GetName() != "row-0" || e.Object.GetNamespace() != "org" {
		t.Fatalf("sent back %s/%s, want org/row-0", e.Object.GetNamespace(), e.Object.GetName())
	}
}
