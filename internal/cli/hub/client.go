// Package hub is the podium CLI's client of the Kubernetes API: it finds leaderboards
// and rows by id or slug without scanning, maps board and row files (docs/cli.md) onto Podium's objects,
// and writes them concurrently and all-or-nothing. The cobra layer (package cli) only
// parses flags and prints.
package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/rowwrite"
	"podium.dev/podium/internal/scheme"
)

// Options say which cluster and organization the client works with.
type Options struct {
	// Kubeconfig is the kubeconfig file ("" = KUBECONFIG or ~/.kube/config).
	Kubeconfig string
	// Context is the kubeconfig context ("" = its current context).
	Context string
	// Org is the organization (namespace) to look in. When empty, ids are looked up
	// in every namespace the user may list, falling back to the context's namespace.
	Org string
	// Workers bounds concurrent writes (default 16).
	Workers int
}

// Client talks to the Kubernetes API as the user of the kubeconfig.
type Client struct {
	c client.WithWatch
	// rows creates rows and reads back only their metadata (nil: c creates them).
	rows      *rowwrite.Client
	host      string
	org       string
	contextNS string
	workers   int
	// narrowed is set once an id search fell back to the context's namespace.
	narrowed   atomic.Bool
	ValidateFn RowValidator
}

// RESTConfig loads the kubeconfig the way kubectl does, with the context override.
func RESTConfig(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", apierr.New(http.StatusUnauthorized, apierr.CodeUnauthenticated, "no usable cluster configuration: %v (run `podium auth login`)", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	// Hundreds of rows are written concurrently, at most Workers at a time: that bounds
	// what the CLI asks of the apiserver, whose priority and fairness queues protect it
	// from many clients. A client-side rate limit on top (client-go's default is 5 a
	// second) only idles the command: a 500-row create waited for tokens once past a
	// burst (docs/performance.md, "Rows in").
	cfg.QPS = -1
	cfg.UserAgent = "podium-cli"
	return cfg, ns, nil
}

// New connects a client (lazily: nothing is sent until the first call).
func New(o Options) (*Client, error) {
	cfg, ns, err := RESTConfig(o)
	if err != nil {
		return nil, err
	}
	// A CLI reports errors itself; controller-runtime would otherwise warn on stderr
	// that no logger was set.
	logf.SetLogger(logr.Discard())
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	hc.CheckRedirect = refuseRedirect // the kubeconfig's credential goes to its server only
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	w := o.Workers
	if w <= 0 {
		w = 16
	}
	rows, err := rowwrite.New(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	return &Client{c: c, rows: rows, host: cfg.Host, org: o.Org, contextNS: ns, workers: w, ValidateFn: DefaultValidator}, nil
}

// findByID lists the objects whose id is id, in --org when given, else in every
// namespace (falling back to the context's namespace when the user may not list
// cluster-wide); callers check the UID of what is found, so a copied label never
// matches. Boards and datasets carry their id in the label hub.podium.dev/id; rows in
// status.id, a selectable field the controller writes with the row's status (no label
// write per row). A row written by an operator from before status.id is found by its
// label until the controller has written its status again.
func (c *Client) findByID(ctx context.Context, list client.ObjectList, id string) error {
	if rows, ok := list.(*hubv1alpha1.LeaderboardRowList); ok {
		if err := c.findIn(ctx, rows, client.MatchingFields{RowIDField: id}); err != nil || len(rows.Items) > 0 {
			return err
		}
	}
	return c.findIn(ctx, list, client.MatchingLabels{hubv1alpha1.LabelID: id})
}

func (c *Client) findIn(ctx context.Context, list client.ObjectList, sel client.ListOption) error {
	if c.org != "" {
		return c.c.List(ctx, list, sel, client.InNamespace(c.org))
	}
	err := c.c.List(ctx, list, sel)
	if apierrors.IsForbidden(err) {
		c.narrowed.Store(true)
		err = c.c.List(ctx, list, sel, client.InNamespace(c.contextNS))
		if apierrors.IsForbidden(err) {
			return apierr.Forbidden("%s: you may not search every namespace, nor namespace %s: pass --org or record one with `podium auth login --org`", searchedID(sel), c.contextNS)
		}
	}
	return err
}

// searchedID is the id a findIn selector looks for, for its error message.
func searchedID(sel client.ListOption) string {
	switch s := sel.(type) {
	case client.MatchingFields:
		return s[RowIDField]
	case client.MatchingLabels:
		return s[hubv1alpha1.LabelID]
	}
	return ""
}

// Selectable fields of LeaderboardRows (the CRD's selectableFields): the apiserver
// filters rows by them, as it does by labels.
const (
	// RowBoardField is a row's board object name.
	RowBoardField = "spec.leaderboard"
	// RowIDField is a row's id, written by the controller with the row's status.
	RowIDField = "status.id"
)

// notFound is the error of an id that was not found, with a hint when the search was
// narrowed to the context's namespace because the user may not list every namespace.
func (c *Client) notFound(what, id string) error {
	if c.narrowed.Load() {
		return apierr.NotFound("%s %s not found in namespace %s (you may not search every namespace: pass --org or record one with `podium auth login --org`)", what, id, c.contextNS)
	}
	return apierr.NotFound("%s %s not found", what, id)
}

// Board finds a leaderboard by UUID or "<org>/<dataset>/<leaderboard>".
func (c *Client) Board(ctx context.Context, ref string) (*hubv1alpha1.Leaderboard, error) {
	if hubv1alpha1.IsUUID(ref) {
		var list hubv1alpha1.LeaderboardList
		return byID[hubv1alpha1.Leaderboard](ctx, c, &list, func() []hubv1alpha1.Leaderboard { return list.Items }, "leaderboard", ref)
	}
	pkg, name, ok := boardres.SplitSlug(ref)
	if !ok {
		return nil, apierr.BadRequest("leaderboard", "%q is neither a UUID nor <org>/<dataset>/<leaderboard>", ref)
	}
	org, _, _ := strings.Cut(pkg, "/")
	// Boards per organization are few; rows are never listed to find one.
	var list hubv1alpha1.LeaderboardList
	if err := c.c.List(ctx, &list, client.InNamespace(org)); err != nil {
		return nil, KubeError(err, "leaderboard "+ref)
	}
	claimants := list.Items[:0]
	for i := range list.Items {
		if lb := &list.Items[i]; lb.Spec.Name == name && boardres.Slug(lb) == ref {
			claimants = append(claimants, *lb)
		}
	}
	// Two objects can claim a slug: the CLI acts on the one the controller keeps Ready.
	if owner := boardres.Owner(claimants); owner != nil {
		return owner, nil
	}
	return nil, apierr.NotFound("leaderboard %s not found", ref)
}

// Row finds a row by its UUID.
func (c *Client) Row(ctx context.Context, id string) (*hubv1alpha1.LeaderboardRow, error) {
	if !hubv1alpha1.IsUUID(id) {
		return nil, apierr.BadRequest("row-id", "%q is not a UUID", id)
	}
	var list hubv1alpha1.LeaderboardRowList
	return byID[hubv1alpha1.LeaderboardRow](ctx, c, &list, func() []hubv1alpha1.LeaderboardRow { return list.Items }, "row", id)
}

// byID finds the object (what names its kind) whose id is id: list is found by the id's
// selector (findByID) and items are its items; the id of the item found is checked, so
// a copied label does not make another object's id.
func byID[T any, P interface {
	*T
	metav1.Object
}](ctx context.Context, c *Client, list client.ObjectList, items func() []T, what, id string) (P, error) {
	if err := c.findByID(ctx, list, id); err != nil {
		return nil, KubeError(err, what+" "+id)
	}
	all := items()
	for i := range all {
		if p := P(&all[i]); hubv1alpha1.ID(p) == id {
			return p, nil
		}
	}
	return nil, c.notFound(what, id)
}

// BoardOf returns the leaderboard a row belongs to.
func (c *Client) BoardOf(ctx context.Context, r *hubv1alpha1.LeaderboardRow) (*hubv1alpha1.Leaderboard, error) {
	var lb hubv1alpha1.Leaderboard
	if err := c.c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Spec.Leaderboard}, &lb); err != nil {
		return nil, KubeError(err, "leaderboard of row "+hubv1alpha1.ID(r))
	}
	return &lb, nil
}

// Boards lists leaderboards: of one dataset (slug or UUID) when filter is set, of --org
// when set, else of every namespace the user may list.
func (c *Client) Boards(ctx context.Context, filter string) ([]hubv1alpha1.Leaderboard, error) {
	var opts []client.ListOption
	switch {
	case filter != "" && !hubv1alpha1.IsUUID(filter):
		org, ds, ok := strings.Cut(filter, "/")
		if !ok || org == "" || ds == "" || strings.Contains(ds, "/") {
			return nil, apierr.BadRequest("dataset", "%q is neither a UUID nor <org>/<dataset>", filter)
		}
		opts = append(opts, client.InNamespace(org))
	case c.org != "":
		opts = append(opts, client.InNamespace(c.org))
	}
	var list hubv1alpha1.LeaderboardList
	err := c.c.List(ctx, &list, opts...)
	if apierrors.IsForbidden(err) && len(opts) == 0 {
		err = c.c.List(ctx, &list, client.InNamespace(c.contextNS))
	}
	if err != nil {
		return nil, KubeError(err, "leaderboards")
	}
	if filter == "" {
		return list.Items, nil
	}
	var out []hubv1alpha1.Leaderboard
	for _, lb := range list.Items {
		pkg := cmp.Or(lb.Spec.Package, lb.Status.Package)
		pkgID := cmp.Or(lb.Spec.PackageID, lb.Status.PackageID)
		if pkg == filter || strings.EqualFold(pkgID, filter) {
			out = append(out, lb)
		}
	}
	return out, nil
}

// BoardRows lists every row of a board, a page of 500 at a time.
func (c *Client) BoardRows(ctx context.Context, lb *hubv1alpha1.Leaderboard) ([]hubv1alpha1.LeaderboardRow, error) {
	var rows []hubv1alpha1.LeaderboardRow
	cont := ""
	for {
		var list hubv1alpha1.LeaderboardRowList
		err := c.c.List(ctx, &list, client.InNamespace(lb.Namespace),
			client.MatchingFields{RowBoardField: lb.Name}, client.Limit(500), client.Continue(cont))
		if err != nil {
			return nil, KubeError(err, "rows of "+Slug(lb))
		}
		rows = append(rows, list.Items...)
		if cont = list.Continue; cont == "" {
			return rows, nil
		}
	}
}

// KubeError turns an apiserver error into the CLI's error envelope, naming what was
// being done. Field paths are written in the files' snake_case.
func KubeError(err error, what string) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "%s: %v", what, err)
		}
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "%s: the cluster could not be reached: %v", what, err)
	}
	msg := se.Status().Message
	switch {
	case apierrors.IsNotFound(err):
		return apierr.NotFound("%s not found", what)
	case apierrors.IsUnauthorized(err):
		return apierr.New(http.StatusUnauthorized, apierr.CodeUnauthenticated, "%s: the cluster refused the credentials (run `podium auth login`)", what)
	case apierrors.IsForbidden(err):
		if _, reason, ok := strings.Cut(msg, "is forbidden: "); ok {
			msg = reason
		}
		return apierr.Forbidden("%s: %s", what, strings.TrimPrefix(msg, ": "))
	case apierrors.IsConflict(err):
		return apierr.New(http.StatusConflict, apierr.CodeStale, "%s changed since it was read; read or export it again", what)
	case apierrors.IsAlreadyExists(err):
		return apierr.New(http.StatusConflict, apierr.CodeConflict, "%s already exists", what)
	case apierrors.IsInvalid(err):
		var fields []apierr.FieldError
		if d := se.Status().Details; d != nil {
			for _, c := range d.Causes {
				fields = append(fields, apierr.FieldError{Field: SnakePath(c.Field), Message: c.Message})
			}
		}
		if len(fields) == 0 {
			return apierr.New(http.StatusUnprocessableEntity, apierr.CodeValidationFailed, "%s: %s", what, msg)
		}
		e := apierr.Invalid(fields...)
		e.Message = what + ": " + e.Message
		return e
	}
	return apierr.New(int(se.Status().Code), apierr.CodeInternal, "%s: %s", what, msg)
}

// SnakePath writes a Kubernetes field path ("spec.rankBy[0].direction") as the files'
// ("rank_by[0].direction").
func SnakePath(p string) string {
	p = strings.TrimPrefix(p, "spec.")
	var b strings.Builder
	rs := []rune(p)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && unicode.IsLower(rs[i-1]) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
