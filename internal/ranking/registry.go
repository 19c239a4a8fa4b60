package ranking

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// boardKey names a Leaderboard the way its rows do: namespace and object name.
type boardKey struct{ namespace, name string }

func keyOfBoard(lb *hubv1alpha1.Leaderboard) boardKey {
	return boardKey{lb.Namespace, lb.Name}
}

func keyOfRow(row *hubv1alpha1.LeaderboardRow) boardKey {
	return boardKey{row.Namespace, row.Spec.Leaderboard}
}

// Registry holds the rank index of every Leaderboard the manager's cache sees. The
// informer handlers are its writers, serialized by write, so each Board has one writer
// at a time; readers take mu and a Board's read lock only for a moment, so that not
// even a 100k-row re-sort makes them wait.
type Registry struct {
	// write serializes the writers; it guards pending and every Board's writer state.
	write sync.Mutex
	// pending holds the ranked rows whose board the cache has not seen (yet): they are
	// indexed when it appears.
	pending map[boardKey]map[types.UID]*hubv1alpha1.LeaderboardRow

	// mu guards the maps below for readers; writers also hold write to change them.
	mu     sync.RWMutex
	byUID  map[types.UID]*Board
	byKey  map[boardKey]*Board
	synced []toolscache.ResourceEventHandlerRegistration
}

// NewRegistry returns an empty registry; Feed fills it.
func NewRegistry() *Registry {
	return &Registry{
		byUID:   map[types.UID]*Board{},
		byKey:   map[boardKey]*Board{},
		pending: map[boardKey]map[types.UID]*hubv1alpha1.LeaderboardRow{},
	}
}

// Feed registers event handlers on the cache's Leaderboard and LeaderboardRow
// informers, which keep every board's index current. Call it once, before the cache
// starts.
//
// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboards;leaderboardrows,verbs=get;list;watch
func (r *Registry) Feed(ctx context.Context, c cache.Cache) error {
	boards, err := c.GetInformer(ctx, &hubv1alpha1.Leaderboard{})
	if err != nil {
		return fmt.Errorf("getting the Leaderboard informer: %w", err)
	}
	rows, err := c.GetInformer(ctx, &hubv1alpha1.LeaderboardRow{})
	if err != nil {
		return fmt.Errorf("getting the LeaderboardRow informer: %w", err)
	}
	boardReg, err := boards.AddEventHandler(handler(r.setBoard, r.deleteBoard))
	if err != nil {
		return fmt.Errorf("watching Leaderboards: %w", err)
	}
	rowHandler := handler(r.setRow, r.deleteRow)
	rowHandler.UpdateFunc = func(oldObj, obj any) {
		row, ok := obj.(*hubv1alpha1.LeaderboardRow)
		if !ok {
			return
		}
		// spec.leaderboard is immutable, but an index must not keep a row twice.
		if old, ok := oldObj.(*hubv1alpha1.LeaderboardRow); ok && keyOfRow(old) != keyOfRow(row) {
			r.deleteRow(old)
		}
		r.setRow(row)
	}
	rowReg, err := rows.AddEventHandler(rowHandler)
	if err != nil {
		return fmt.Errorf("watching LeaderboardRows: %w", err)
	}
	r.mu.Lock()
	r.synced = append(r.synced, boardReg, rowReg)
	r.mu.Unlock()
	return nil
}

// handler keeps the index of objects of type T: set on an add or an update, del on a
// delete (also of a tombstone).
func handler[T any](set, del func(T)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if t, ok := obj.(T); ok {
				set(t)
			}
		},
		UpdateFunc: func(_, obj any) {
			if t, ok := obj.(T); ok {
				set(t)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := tombstone(obj).(T); ok {
				del(t)
			}
		},
	}
}

// tombstone unwraps the last known state of an object whose deletion the informer
// missed.
func tombstone(obj any) any {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// HasSynced is true once the informers' initial lists have been applied to the index.
func (r *Registry) HasSynced() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.synced) == 0 {
		return false
	}
	for _, s := range r.synced {
		if !s.HasSynced() {
			return false
		}
	}
	return true
}

// Board returns the index of the Leaderboard with this UID, or nil when unknown.
func (r *Registry) Board(uid types.UID) *Board {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byUID[uid]
}

// Ranked reports whether a row is ranked on its board (when the board exists): it is
// displayed, and its Valid condition is True for its current generation.
func Ranked(row *hubv1alpha1.LeaderboardRow) bool {
	if row.Spec.Visibility != "" && row.Spec.Visibility != hubv1alpha1.RowDisplay {
		return false
	}
	c := meta.FindStatusCondition(row.Status.Conditions, hubv1alpha1.ConditionValid)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == row.Generation
}

// setBoard indexes a new board with the rows that waited for it, re-sorts a board
// whose rules changed, and marks any other change of the object.
func (r *Registry) setBoard(lb *hubv1alpha1.Leaderboard) {
	k := keyOfBoard(lb)
	r.write.Lock()
	defer r.write.Unlock()
	b := r.byKey[k]
	if b != nil && b.uid != lb.UID {
		// Deleted and created again while the informer looked away.
		r.dropLocked(b)
		b = nil
	}
	if b == nil {
		b = newBoard(lb, r.pending[k])
		delete(r.pending, k)
		r.mu.Lock()
		r.byKey[k], r.byUID[lb.UID] = b, b
		r.mu.Unlock()
		return
	}
	if b.revision == lb.ResourceVersion {
		return // a resync
	}
	b.revision = lb.ResourceVersion
	if !slices.Equal(b.tree.ord.rules, lb.Spec.RankBy) {
		b.setRules(lb.Spec.RankBy)
		return
	}
	b.touch()
}

// deleteBoard drops a board's index; its rows wait, should the board come back before
// the garbage collector removes them.
func (r *Registry) deleteBoard(lb *hubv1alpha1.Leaderboard) {
	r.write.Lock()
	defer r.write.Unlock()
	if b := r.byKey[keyOfBoard(lb)]; b != nil && b.uid == lb.UID {
		r.dropLocked(b)
	}
}

// dropLocked unlists a board and keeps its rows pending; r.write is held.
func (r *Registry) dropLocked(b *Board) {
	r.mu.Lock()
	delete(r.byKey, b.key)
	delete(r.byUID, b.uid)
	r.mu.Unlock()
	if rows := b.rows(); len(rows) > 0 {
		r.pending[b.key] = rows
	}
	b.clear()
}

// setRow ranks, moves or unranks a row after it was added or changed.
func (r *Registry) setRow(row *hubv1alpha1.LeaderboardRow) {
	k := keyOfRow(row)
	ranked := Ranked(row)
	r.write.Lock()
	defer r.write.Unlock()
	if b := r.byKey[k]; b != nil {
		if ranked {
			b.upsert(row)
		} else {
			b.remove(row.UID)
		}
		return
	}
	if ranked {
		if r.pending[k] == nil {
			r.pending[k] = map[types.UID]*hubv1alpha1.LeaderboardRow{}
		}
		r.pending[k][row.UID] = row
		return
	}
	r.forgetPendingLocked(k, row.UID)
}

// deleteRow removes a deleted row from its board or from the rows waiting for one.
func (r *Registry) deleteRow(row *hubv1alpha1.LeaderboardRow) {
	k := keyOfRow(row)
	r.write.Lock()
	defer r.write.Unlock()
	if b := r.byKey[k]; b != nil {
		b.remove(row.UID)
		return
	}
	r.forgetPendingLocked(k, row.UID)
}

// forgetPendingLocked drops a row that no longer waits; r.write is held.
func (r *Registry) forgetPendingLocked(k boardKey, uid types.UID) {
	if m := r.pending[k]; m != nil {
		delete(m, uid)
		if len(m) == 0 {
			delete(r.pending, k)
		}
	}
}
