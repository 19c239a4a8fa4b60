package controllers

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// rowLedger records the identity of rows that lack one in their annotations (rows
// stored before Podium recorded identities, rows created while the row webhook could not
// be reached) in RowIdentityLedger objects of their namespace, gathered for a moment and
// written together: up to RowIdentityLedgerCapacity rows a write, never a write per row
// (docs/operations.md, "Backup and restore"; docs/performance.md, "Rows in").
type rowLedger struct {
	// cache reads ledgers (the manager's cache); api reads them before a write.
	cache ctrl.Reader
	api   ctrl.Reader
	write ctrl.Writer
	// every is how long entries are gathered before a write.
	every time.Duration

	mu      sync.Mutex
	pending map[string]map[string]hubv1alpha1.RowIdentity // namespace -> row name -> identity
	wake    chan struct{}
}

func newRowLedger(cache, api ctrl.Reader, write ctrl.Writer) *rowLedger {
	return &rowLedger{cache: cache, api: api, write: write, every: time.Second,
		pending: map[string]map[string]hubv1alpha1.RowIdentity{}, wake: make(chan struct{}, 1)}
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
			if err := l.flush(ctx, ns, rows); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
				// Back into the next batch, behind anything queued since.
				l.queue(ns, rows, false)
			}
		}
	}
}

// NeedLeaderElection: one writer.
func (l *rowLedger) NeedLeaderElection() bool { return true }

// flush writes rows into the namespace's ledgers: rows a ledger already names are
// skipped; the rest go into ledgers with room, then into new ones.
func (l *rowLedger) flush(ctx context.Context, namespace string, rows map[string]hubv1alpha1.RowIdentity) error {
	list := &hubv1alpha1.RowIdentityLedgerList{}
	if err := l.api.List(ctx, list, ctrl.InNamespace(namespace)); err != nil {
		return err
	}
	todo := map[string]hubv1alpha1.RowIdentity{}
	for name, e := range rows {
		if _, held := hubv1alpha1.LedgerIdentity(list.Items, name); !held {
			todo[name] = e
		}
	}
	for i := range list.Items {
		if len(todo) == 0 {
			return nil
		}
		ledger := &list.Items[i]
		if len(ledger.Rows) >= hubv1alpha1.RowIdentityLedgerCapacity {
			continue
		}
		added := fill(ledger, todo)
		if err := l.write.Update(ctx, ledger); err != nil {
			for name, e := range added {
				todo[name] = e
			}
			return err
		}
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
	}
	return nil
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
