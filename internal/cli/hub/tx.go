package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
)

// write is one object the CLI creates or updates as part of a command.
type write struct {
	// obj is what is written; after a create it holds what the apiserver returned.
	obj client.Object
	// old is the object as read, for an update: the precondition (its
	// resourceVersion) and what a rollback restores.
	old client.Object
	// index is the row's position in its file (-1 for the board).
	index int
	// what names the object in errors.
	what string
	done bool
	// row marks a row: its id is status.id, written by the controller (see
	// awaitRowIDs), not a label.
	row bool
}

func (w *write) create() bool { return w.old == nil }

// plan is every write of one command: the board (optional) first, then its rows.
type plan struct {
	board *write
	rows  []*write
	// beforeRows runs after the board is written, before the rows (to point new rows
	// at a board that has just been created).
	beforeRows func(board client.Object)
}

// parallel runs fn for 0..n-1 on at most workers goroutines and returns the errors by
// index. After the first failure, work not yet started is skipped (its error stays
// nil). Work already running is not cancelled: a write whose response is cut off may
// still have been made, and the rollback must know what was written.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if failed.Load() || ctx.Err() != nil {
					continue
				}
				if err := fn(ctx, i); err != nil {
					errs[i] = err
					failed.Store(true)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// firstError returns how many errors there are and the first non-nil one.
func firstError(errs []error) (int, error) {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if first == nil {
		for _, err := range errs {
			if err != nil {
				return 1, err
			}
		}
	}
	return n, first
}

// dryRun sends every write of the plan with dryRun=All, so the apiserver validates it
// (CRD schema, CEL rules, preconditions) without persisting it. Row failures come
// back as one rows_invalid error.
func (c *Client) dryRun(ctx context.Context, p *plan) error {
	if p.board != nil {
		if err := c.send(ctx, p.board, true); err != nil {
			return err
		}
	}
	errs := parallel(ctx, c.workers, len(p.rows), func(ctx context.Context, i int) error {
		return c.send(ctx, p.rows[i], true)
	})
	var details RowsInvalid
	var other error
	for i, err := range errs {
		if err == nil {
			continue
		}
		ae := apierr.As(err)
		var fields []apierr.FieldError
		if fe, ok := ae.Details.([]apierr.FieldError); ok && ae.Code == apierr.CodeValidationFailed {
			for _, f := range fe {
				if f.Field == "visibility" {
					f.Field = "status"
				}
				fields = append(fields, f)
			}
		} else if other == nil && !errors.Is(err, context.Canceled) {
			other = err
			continue
		} else {
			continue
		}
		idx := p.rows[i].index
		details.add(InvalidRow{Index: &idx, ID: idOf(p.rows[i]), Fields: fields})
	}
	if err := details.Err(); err != nil {
		return err
	}
	return other
}

func idOf(w *write) string {
	if w.old != nil {
		return string(w.old.GetUID())
	}
	return ""
}

// send creates or updates one object. A real create of a board also labels it with its
// id: the uid is only known from the create response, and the label is what finds a
// board by id without a scan. A row's id is status.id, written by the controller.
func (c *Client) send(ctx context.Context, w *write, dry bool) error {
	if w.create() {
		obj := w.obj
		if dry {
			obj = obj.DeepCopyObject().(client.Object)
			if err := c.c.Create(ctx, obj, client.DryRunAll); err != nil {
				return KubeError(err, w.what)
			}
			return nil
		}
		if w.row {
			if err := c.createRow(ctx, obj); err != nil {
				return KubeError(err, w.what)
			}
			w.done = true
			return nil
		}
		if err := c.c.Create(ctx, obj); err != nil {
			return KubeError(err, w.what)
		}
		w.done = true
		return c.labelID(ctx, obj)
	}
	obj := w.obj
	var opts []client.UpdateOption
	if dry {
		obj = obj.DeepCopyObject().(client.Object)
		opts = append(opts, client.DryRunAll)
	}
	if err := c.updateSpec(ctx, obj, w.old.GetGeneration(), opts...); err != nil {
		var se apierrors.APIStatus
		if !dry && !errors.As(err, &se) {
			// No answer from the apiserver: the update may have been made. Restoring
			// the old spec is harmless if it was not.
			w.done = true
		}
		return KubeError(err, w.what)
	}
	if !dry {
		w.done = true
	}
	return nil
}

// execute validates the plan with a server-side dry-run (when asked), then writes the
// board and the rows (concurrently). When a write fails, everything written is
// restored and one error says what failed and that nothing was left half-done.
func (c *Client) execute(ctx context.Context, p *plan, validate bool) error {
	if validate {
		if err := c.dryRun(ctx, p); err != nil {
			return err
		}
	}
	err := c.writeAll(ctx, p)
	if err == nil {
		return nil
	}
	if rbErr := c.rollback(p); rbErr != nil {
		ae := apierr.As(err)
		return apierr.New(ae.Status, ae.Code, "%s; restoring what was already written failed too, fix by hand: %v", ae.Message, rbErr)
	}
	ae := *apierr.As(err)
	if written(p) > 0 {
		ae.Message += "; what had been written was restored, nothing changed"
	} else {
		ae.Message += "; nothing was written"
	}
	return &ae
}

func written(p *plan) int {
	n := 0
	if p.board != nil && p.board.done {
		n++
	}
	for _, w := range p.rows {
		if w.done {
			n++
		}
	}
	return n
}

func (c *Client) writeAll(ctx context.Context, p *plan) error {
	if p.board != nil {
		if err := c.send(ctx, p.board, false); err != nil {
			return err
		}
	}
	if p.beforeRows != nil && p.board != nil {
		p.beforeRows(p.board.obj)
	}
	errs := parallel(ctx, c.workers, len(p.rows), func(ctx context.Context, i int) error {
		return c.send(ctx, p.rows[i], false)
	})
	n, err := firstError(errs)
	if err != nil && n > 1 {
		ae := *apierr.As(err)
		ae.Message += fmt.Sprintf(" (%d writes failed)", n)
		return &ae
	}
	return err
}

// rollback undoes the writes that were made: new objects are deleted, updated ones get
// their old spec back. It runs on a fresh context: the command's may be cancelled.
func (c *Client) rollback(p *plan) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var failed []string
	var mu sync.Mutex
	undo := func(ctx context.Context, w *write) error {
		if !w.done {
			return nil
		}
		var err error
		if w.create() {
			uid := w.obj.GetUID()
			err = client.IgnoreNotFound(c.c.Delete(ctx, w.obj, client.Preconditions{UID: &uid}))
		} else {
			err = c.restore(ctx, w.old)
		}
		if err != nil {
			mu.Lock()
			failed = append(failed, fmt.Sprintf("%s (%v)", w.what, err))
			mu.Unlock()
		}
		return nil
	}
	parallel(ctx, c.workers, len(p.rows), func(ctx context.Context, i int) error { return undo(ctx, p.rows[i]) })
	if p.board != nil {
		_ = undo(ctx, p.board)
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not restore %s", strings.Join(failed, ", "))
	}
	return nil
}

// restore puts an object's old spec and change time back, retrying on conflicts (the
// controller may be writing status meanwhile).
func (c *Client) restore(ctx context.Context, old client.Object) error {
	for attempt := range 10 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
		cur := old.DeepCopyObject().(client.Object)
		if err := c.c.Get(ctx, client.ObjectKeyFromObject(old), cur); err != nil {
			return err
		}
		switch o := old.(type) {
		case *hubv1alpha1.Leaderboard:
			cur.(*hubv1alpha1.Leaderboard).Spec = *o.Spec.DeepCopy()
		case *hubv1alpha1.LeaderboardRow:
			cur.(*hubv1alpha1.LeaderboardRow).Spec = *o.Spec.DeepCopy()
		}
		ann := cur.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if v, ok := old.GetAnnotations()[hubv1alpha1.AnnotationUpdatedAt]; ok {
			ann[hubv1alpha1.AnnotationUpdatedAt] = v
		} else {
			delete(ann, hubv1alpha1.AnnotationUpdatedAt)
		}
		cur.SetAnnotations(ann)
		err := c.c.Update(ctx, cur)
		if err == nil || !isConflict(err) {
			return err
		}
	}
	return fmt.Errorf("%s kept changing", old.GetName())
}

func isConflict(err error) bool { return apierrors.IsConflict(err) }

// ownRow points a new row at its board: spec, label and controller owner reference.
// blockOwnerDeletion is left unset: it would need update rights on the board's
// finalizers, which org members writing rows need not have.
func ownRow(row *hubv1alpha1.LeaderboardRow, lb client.Object) {
	row.Spec.Leaderboard = lb.GetName()
	labels := row.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[hubv1alpha1.LabelLeaderboard] = lb.GetName()
	row.SetLabels(labels)
	if lb.GetUID() != "" {
		t := true
		row.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard",
			Name: lb.GetName(), UID: lb.GetUID(), Controller: &t,
		}}
	}
}

// NewRow builds the row object the CLI creates for a board: the spec, the board's label
// and controller reference (ownRow), and the CLI's change time (touch). The write-ratio
// bench builds its floor's rows with it, so that the floor writes the bytes the CLI
// writes.
func NewRow(lb client.Object, spec hubv1alpha1.LeaderboardRowSpec, now time.Time) *hubv1alpha1.LeaderboardRow {
	row := &hubv1alpha1.LeaderboardRow{Spec: spec}
	row.Namespace = lb.GetNamespace()
	row.GenerateName = lb.GetName() + "-"
	ownRow(row, lb)
	touch(row, now)
	return row
}

// labelID sets the id label on a new object.
func (c *Client) labelID(ctx context.Context, obj client.Object) error {
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, hubv1alpha1.LabelID, obj.GetUID())
	if err := c.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return KubeError(err, obj.GetName())
	}
	return nil
}

// createRow creates a row and asks for only its metadata back (rowwrite): the command
// uses the apiserver's answer for the row's name, uid and annotations, never for its
// values, which are what it sent (the one default the schema adds, visibility display,
// reads the same unset). Without a row writer (tests), the client creates it.
func (c *Client) createRow(ctx context.Context, obj client.Object) error {
	row, ok := obj.(*hubv1alpha1.LeaderboardRow)
	if c.rows == nil || !ok {
		return c.c.Create(ctx, obj)
	}
	return c.rows.Create(ctx, row)
}

// idWait is how long awaitRowIDs waits for the controller.
const idWait = 5 * time.Second

// awaitRowIDs waits, at most idWait, until the controller has written the status (and
// so status.id, what finds a row by id) of the new rows, so that the ids a command
// prints work in the next command. It lists the board's rows still without an id
// (field selector status.id="", metadata only) once, then watches that selection from
// the list's resourceVersion: the apiserver reports each row leaving it (its id
// written) as it happens, so the command ends when the last id is written, not at the
// next try of a poll. No write. Should the watch fail or end early, it falls back to
// listing again, backing off from 20 ms. With no operator running it gives up after
// idWait: the rows exist either way, and are found by id once the controller has seen
// them.
func (c *Client) awaitRowIDs(ctx context.Context, board client.Object, rows []client.Object) {
	pending := map[types.UID]bool{}
	for _, r := range rows {
		pending[r.GetUID()] = true
	}
	ctx, cancel := context.WithTimeout(ctx, idWait)
	defer cancel()
	opts := []client.ListOption{client.InNamespace(board.GetNamespace()), client.MatchingFields{RowBoardField: board.GetName(), RowIDField: ""}}
	rv, ok := c.rowsWithoutID(ctx, pending, opts)
	if !ok || len(pending) == 0 {
		return
	}
	if w, err := c.c.Watch(ctx, rowMetadataList(), append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})...); err == nil {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if m, ok := ev.Object.(*metav1.PartialObjectMetadata); ok && ev.Type == watch.Deleted {
				delete(pending, m.UID) // its id was written (or it is gone)
			}
			if len(pending) == 0 {
				break
			}
		}
		w.Stop()
	}
	if len(pending) > 0 && ctx.Err() == nil {
		awaitState(ctx, func() bool {
			_, ok := c.rowsWithoutID(ctx, pending, opts)
			return !ok || len(pending) == 0
		})
	}
}

// rowsWithoutID lists (metadata only) the rows opts select, those without an id, and
// drops from pending every row not among them. It returns the list's resourceVersion
// and false when the list failed.
func (c *Client) rowsWithoutID(ctx context.Context, pending map[types.UID]bool, opts []client.ListOption) (string, bool) {
	list := rowMetadataList()
	if err := c.c.List(ctx, list, opts...); err != nil {
		return "", false
	}
	without := make(map[types.UID]bool, len(list.Items))
	for _, r := range list.Items {
		without[r.UID] = true
	}
	for uid := range pending {
		if !without[uid] {
			delete(pending, uid)
		}
	}
	return list.ResourceVersion, true
}

// rowMetadataList is an empty list of rows' metadata (what the apiserver sends instead
// of whole rows), for a List or a Watch.
func rowMetadataList() *metav1.PartialObjectMetadataList {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(hubv1alpha1.GroupVersion.WithKind("LeaderboardRowList"))
	return list
}

// awaitNewRowIDs waits for the ids of the rows a plan created (see awaitRowIDs).
func (c *Client) awaitNewRowIDs(ctx context.Context, board client.Object, p *plan) {
	var rows []client.Object
	for _, w := range p.rows {
		if w.create() && w.row && w.done {
			rows = append(rows, w.obj)
		}
	}
	if len(rows) > 0 {
		c.awaitRowIDs(ctx, board, rows)
	}
}

// updateSpec writes obj's spec over the object read at generation gen. The update
// carries the resourceVersion read, so nothing slips in between; when it conflicts
// because the controller wrote status or labels meanwhile (the resourceVersion moved,
// the generation did not), the write is retried on the newer object. A newer
// generation means someone changed the spec since it was read: that is refused as
// stale.
func (c *Client) updateSpec(ctx context.Context, obj client.Object, gen int64, opts ...client.UpdateOption) error {
	for attempt := 0; ; attempt++ {
		err := c.c.Update(ctx, obj, opts...)
		if err == nil || !apierrors.IsConflict(err) || attempt == 10 {
			return err
		}
		fresh := obj.DeepCopyObject().(client.Object)
		if gerr := c.c.Get(ctx, client.ObjectKeyFromObject(obj), fresh); gerr != nil {
			return gerr
		}
		if fresh.GetUID() != obj.GetUID() || fresh.GetGeneration() != gen {
			return err
		}
		// Only metadata the CLI does not change moved: take it from the newer object.
		obj.SetResourceVersion(fresh.GetResourceVersion())
		obj.SetLabels(fresh.GetLabels())
		obj.SetOwnerReferences(fresh.GetOwnerReferences())
		obj.SetFinalizers(fresh.GetFinalizers())
		ann := fresh.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if v, ok := obj.GetAnnotations()[hubv1alpha1.AnnotationUpdatedAt]; ok {
			ann[hubv1alpha1.AnnotationUpdatedAt] = v
		}
		obj.SetAnnotations(ann)
	}
}
