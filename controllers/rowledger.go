package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// rowLedger records the identity of rows that lack one in their annotations (rows
// stored before Podium recorded identities, rows created while the row webhook could not
// be reached) in RowIdentityLedger objects of their namespace, gathered for a moment and
// written together: up to RowIdentityLedgerCapacity rows a write, never a write per row
// (docs/operations.md, "Backup and restore"; docs/performance.md, "Rows in").
type rowLedger struct {
	// cache reads ledgers (the manager's cache); api reads one whose write conflicted.
	cache ctrl.Reader
	api   ctrl.Reader
	write ctrl.Writer
	// every is how long entries are gathered before a write.
	every time.Duration

	mu      sync.Mutex
	pending map[string]map[string]hubv1alpha1.RowIdentity // namespace -> row name -> identity
	wake    chan struct{}

	// retake receives the rows a batch skipped because a ledger already names them with
	// another id (restored after the row's reconcile read the ledgers): the row controller
	// reconciles them again, and they take the ledger's identity. Nil sends nothing.
	retake chan event.GenericEvent

	// written holds, by namespace and name, the ledgers as the writer last wrote (or,
	// after a conflict, read) them, until the cache holds that version or a newer one:
	// the next batch builds on them, not on a cache a write behind. Only the writer's
	// goroutine uses it.
	written map[string]map[string]*hubv1alpha1.RowIdentityLedger
}

// ledgerOpenBelow is how many rows a ledger may hold for a batch still to be appended
// to it; a fuller one is left as it is and the batch starts a new ledger. Appending
// rewrites the whole object (the apiserver decodes, validates, stores and sends every
// entry again), so a ledger is rewritten at most a few times, and a row's identity
// costs about one entry written, not one per batch that follows it into the same
// ledger (docs/performance.md, "Rows in").
const ledgerOpenBelow = hubv1alpha1.RowIdentityLedgerCapacity / 4

func newRowLedger(cache, api ctrl.Reader, write ctrl.Writer) *rowLedger {
	return &rowLedger{cache: cache, api: api, write: write, every: time.Second,
		pending: map[string]map[string]hubv1alpha1.RowIdentity{}, wake: make(chan struct{}, 1),
		written: map[string]map[string]*hubv1alpha1.RowIdentityLedger{}}
}

// lookup is the identity the namespace's ledgers hold for the row named name.
func (l *rowLedger) lookup(ctx context.Context, namespace, name string) (hubv1alpha1.RowIdentity, bool, error) {
	list := &hubv1alpha1.RowIdentityLedgerList{}
	if err := l.cache.List(ctx, list, ctrl.InNamespace(namespace), ctrl.UnsafeDisableDeepCopy); err != nil {
		return hubv1alpha1.RowIdentity{}, false, err
	}
	e, ok := hubv1alpha1.LedgerIdentity(list.Items, name)
	return e, ok, nil
}

// record queues row's identity as it is now (its UID and creationTimestamp).
func (l *rowLedger) record(row *hubv1alpha1.LeaderboardRow) {
	l.queue(row.Namespace, map[string]hubv1alpha1.RowIdentity{
		row.Name: {ID: string(row.UID), CreatedAt: row.CreationTimestamp},
	}, true)
}

// queue adds rows to what the next batch writes (replacing an entry queued for the same
// name when replace is set) and wakes the writer.
func (l *rowLedger) queue(namespace string, rows map[string]hubv1alpha1.RowIdentity, replace bool) {
	l.mu.Lock()
	ns := l.pending[namespace]
	if ns == nil {
		ns = map[string]hubv1alpha1.RowIdentity{}
		l.pending[namespace] = ns
	}
	for name, e := range rows {
		if _, queued := ns[name]; replace || !queued {
			ns[name] = e
		}
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Start writes what was queued, a namespace at a time, until ctx ends (a
// manager.Runnable: only the leader writes).
func (l *rowLedger) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-l.wake:
		}
		select { // gather for a moment: one write for many rows
		case <-ctx.Done():
			return nil
		case <-time.After(l.every):
		}
		l.mu.Lock()
		pending := l.pending
		l.pending = map[string]map[string]hubv1alpha1.RowIdentity{}
		l.mu.Unlock()
		for ns, rows := range pending {
			// A namespace gone or going takes its rows with it; any other error (a
			// conflict, the apiserver away) retries with the next batch.
			if err := l.flush(ctx, ns, rows); err != nil && !dropsRows(err) {
				// Back into the next batch, behind anything queued since.
				l.queue(ns, rows, false)
			}
		}
	}
}

// dropsRows says whether a failed batch's rows are given up: a NotFound or Forbidden
// means their namespace is gone or going, and its rows with it.
func dropsRows(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) }

// NeedLeaderElection: one writer.
func (l *rowLedger) NeedLeaderElection() bool { return true }

// flush writes rows into the namespace's ledgers: rows a ledger already names are
// skipped; the rest go into a ledger with fewer than ledgerOpenBelow rows, then into new
// ones. The ledgers are read from the cache, with the versions this writer wrote
// itself (l.written) where the cache has not caught up; a write on a stale one conflicts,
// and its rows go back into the next batch.
func (l *rowLedger) flush(ctx context.Context, namespace string, rows map[string]hubv1alpha1.RowIdentity) error {
	ledgers, err := l.ledgers(ctx, namespace)
	if err != nil {
		return err
	}
	todo := map[string]hubv1alpha1.RowIdentity{}
	for name, e := range rows {
		switch held, ok := hubv1alpha1.LedgerIdentity(ledgers, name); {
		case !ok:
			todo[name] = e
		case held.ID != e.ID:
			l.retakeRow(ctx, namespace, name)
		}
	}
	for i := range ledgers {
		if len(todo) == 0 {
			return nil
		}
		ledger := &ledgers[i]
		if len(ledger.Rows) >= ledgerOpenBelow {
			continue
		}
		added := fill(ledger, todo)
		if err := l.write.Update(ctx, ledger); err != nil {
			for name, e := range added {
				todo[name] = e
			}
			switch {
			case apierrors.IsConflict(err):
				l.reread(ctx, ledger)
			case apierrors.IsNotFound(err):
				// Deleted since it was read: the rows go into the next batch (a
				// NotFound from flush would drop them as the namespace's).
				delete(l.written[namespace], ledger.Name)
				return fmt.Errorf("row identity ledger %s/%s is gone; its rows go into the next batch", namespace, ledger.Name)
			}
			return err
		}
		l.wrote(ledger)
	}
	for len(todo) > 0 {
		ledger := &hubv1alpha1.RowIdentityLedger{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "podium-row-ids-"}}
		added := fill(ledger, todo)
		if err := l.write.Create(ctx, ledger); err != nil {
			for name, e := range added {
				todo[name] = e
			}
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return err
		}
		l.wrote(ledger)
	}
	return nil
}

// ledgers are the namespace's ledgers: the cache's, each replaced by the version this
// writer last wrote when that one is newer (a higher generation: every write of a ledger
// changes its rows). Written versions the cache has caught up with are forgotten.
func (l *rowLedger) ledgers(ctx context.Context, namespace string) ([]hubv1alpha1.RowIdentityLedger, error) {
	list := &hubv1alpha1.RowIdentityLedgerList{}
	if err := l.cache.List(ctx, list, ctrl.InNamespace(namespace)); err != nil {
		return nil, err
	}
	mine := l.written[namespace]
	seen := map[string]bool{}
	for i := range list.Items {
		name := list.Items[i].Name
		seen[name] = true
		w, ok := mine[name]
		switch {
		case !ok:
		case w.UID == list.Items[i].UID && w.Generation > list.Items[i].Generation:
			list.Items[i] = *w.DeepCopy()
		default:
			delete(mine, name)
		}
	}
	for name, w := range mine {
		if !seen[name] { // created by this writer, not in the cache yet
			list.Items = append(list.Items, *w.DeepCopy())
		}
	}
	if len(mine) == 0 {
		delete(l.written, namespace)
	}
	return list.Items, nil
}

// retakeRow has the row controller reconcile a row again (see l.retake).
func (l *rowLedger) retakeRow(ctx context.Context, namespace, name string) {
	if l.retake == nil {
		return
	}
	row := &hubv1alpha1.LeaderboardRow{}
	row.Namespace, row.Name = namespace, name
	select {
	case l.retake <- event.GenericEvent{Object: row}:
	case <-ctx.Done():
	}
}

// wrote keeps the version of a ledger a write returned (see l.written).
func (l *rowLedger) wrote(ledger *hubv1alpha1.RowIdentityLedger) {
	ns := l.written[ledger.Namespace]
	if ns == nil {
		ns = map[string]*hubv1alpha1.RowIdentityLedger{}
		l.written[ledger.Namespace] = ns
	}
	ns[ledger.Name] = ledger.DeepCopy()
}

// reread keeps the apiserver's version of a ledger whose write conflicted, so that the
// retry builds on it (the cache may still be behind).
func (l *rowLedger) reread(ctx context.Context, ledger *hubv1alpha1.RowIdentityLedger) {
	fresh := &hubv1alpha1.RowIdentityLedger{}
	if err := l.api.Get(ctx, ctrl.ObjectKeyFromObject(ledger), fresh); err == nil {
		l.wrote(fresh)
	}
}

// fill moves entries of todo into ledger up to its capacity and returns them.
func fill(ledger *hubv1alpha1.RowIdentityLedger, todo map[string]hubv1alpha1.RowIdentity) map[string]hubv1alpha1.RowIdentity {
	if ledger.Rows == nil {
		ledger.Rows = map[string]hubv1alpha1.RowIdentity{}
	}
	added := map[string]hubv1alpha1.RowIdentity{}
	for name, e := range todo {
		if len(ledger.Rows) >= hubv1alpha1.RowIdentityLedgerCapacity {
			break
		}
		ledger.Rows[name] = e
		added[name] = e
		delete(todo, name)
	}
	return added
}
