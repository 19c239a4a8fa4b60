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

// mustFlush writes one batch of rows into namespace org's ledgers.
func mustFlush(t *testing.T, l *rowLedger, rows map[string]hubv1alpha1.RowIdentity) {
	t.Helper()
	if err := l.flush(context.Background(), "org", rows); err != nil {
		t.Fatal(err)
	}
}

// staleLedgerWriter is a ledger writer whose cache never sees a write: it writes to and
// re-reads from api.
func staleLedgerWriter() (*rowLedger, client.Client) {
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	staleCache := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	return newRowLedger(staleCache, api, api), api
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
	full := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "full"}, Rows: identities("old", ledgerOpenBelow)}
	small := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "small"}, Rows: identities("older", 10)}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(full, small).Build()
	l := newRowLedger(c, c, c)

	mustFlush(t, l, identities("a", 300))
	if got := ledgerSizes(t, c); len(got) != 2 || got["full"] != ledgerOpenBelow || got["small"] != 310 {
		t.Fatalf("after a batch of 300: %v, want the small ledger to take it", got)
	}
	mustFlush(t, l, identities("b", 5))
	got := ledgerSizes(t, c)
	if len(got) != 3 || got["full"] != ledgerOpenBelow || got["small"] != 310 {
		t.Fatalf("after a batch of 5 with no small ledger left: %v, want a new ledger of 5", got)
	}
	// Rows a ledger holds are not written again.
	mustFlush(t, l, identities("a", 300))
	if again := ledgerSizes(t, c); len(again) != 3 {
		t.Fatalf("held rows were written again: %v", again)
	}
}

// The writer builds on the ledgers it wrote itself while the cache has not caught up:
// no second ledger for the next batch, no row recorded twice.
func TestLedgerBuildsOnItsOwnWrites(t *testing.T) {
	l, api := staleLedgerWriter()
	mustFlush(t, l, identities("a", 3))
	mustFlush(t, l, identities("b", 4))
	mustFlush(t, l, identities("a", 3))
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
	l, api := staleLedgerWriter()
	mustFlush(t, l, identities("a", 3))
	if err := api.DeleteAllOf(ctx, &hubv1alpha1.RowIdentityLedger{}, client.InNamespace("org")); err != nil {
		t.Fatal(err)
	}
	err := l.flush(ctx, "org", identities("b", 2))
	if err == nil || dropsRows(err) {
		t.Fatalf("flush into a deleted ledger: %v, want an error that retries", err)
	}
	mustFlush(t, l, identities("b", 2))
	if got := ledgerSizes(t, api); len(got) != 1 {
		t.Fatalf("ledgers %v, want one new ledger", got)
	}
}

// A row queued while no ledger named it, whose name a ledger restored meanwhile holds
// with another id, is not written again: the batch has the row controller reconcile it,
// and it takes the restored identity. A row the ledger holds with its own id is not.
func TestLedgerRetakesARowALedgerNamesWithAnotherID(t *testing.T) {
	restored := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "restored"}, Rows: identities("row", 2)}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(restored).Build()
	l := newRowLedger(c, c, c)
	l.retake = make(chan event.GenericEvent, 4)

	queued := map[string]hubv1alpha1.RowIdentity{
		"row-0": {ID: "11111111-1111-4111-8111-111111111111", CreatedAt: metav1.Now()}, // re-created: another UID
		"row-1": restored.Rows["row-1"],                                                // the row the ledger recorded
	}
	mustFlush(t, l, queued)
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
