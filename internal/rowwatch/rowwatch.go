// Package rowwatch streams the apiserver's watch of LeaderboardRows into an informer
// with one JSON pass per event. client-go decodes every watch event in about seven
// passes over its bytes (the framer's scan, the envelope's kind sniffed and decoded
// with the object copied out, then the object's kind sniffed, validated and decoded),
// which was 42% of the operator's CPU while rows were written; here one streaming
// decoder, the same one client-go decodes objects with (sigs.k8s.io/json: case
// sensitive, integers kept), reads each event straight into a LeaderboardRow
// (docs/performance.md, "Rows in"). Only the watch changes: lists, and every other
// kind, are client-go's.
package rowwatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	kjson "sigs.k8s.io/json"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// NewInformerFunc is the shape of controller-runtime's cache.Options.NewInformer.
type NewInformerFunc func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// Wrap returns a NewInformer for a cluster-wide cache with no selector on rows (the
// operator's and the read tier's): the informer of LeaderboardRows watches through
// this package's decoder, every other informer is next's (nil: client-go's
// NewSharedIndexInformer). hc is the HTTP client to watch with (the cache's own).
func Wrap(cfg *rest.Config, hc *http.Client, next NewInformerFunc) (NewInformerFunc, error) {
	rc, err := apiutil.RESTClientForGVK(hubv1alpha1.GroupVersion.WithKind("LeaderboardRow"), false, false, cfg, serializer.NewCodecFactory(scheme.Scheme), hc)
	if err != nil {
		return nil, err
	}
	if next == nil {
		next = toolscache.NewSharedIndexInformer
	}
	w := &watcher{rest: rc}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if l, ok := lw.(*toolscache.ListWatch); ok && l.ListWithContextFunc != nil {
			if _, row := obj.(*hubv1alpha1.LeaderboardRow); row {
				lw = &toolscache.ListWatch{ListWithContextFunc: l.ListWithContextFunc, WatchFuncWithContext: w.Watch}
			}
		}
		return next(lw, obj, resync, indexers)
	}, nil
}

// watcher opens watches of every namespace's rows.
type watcher struct{ rest rest.Interface }

// Watch opens a watch of rows with opts (the reflector's resourceVersion, timeout,
// watch-list options), with bookmarks as controller-runtime asks for them. An error
// the apiserver answers (410 Gone, 403) comes back as its StatusError, as client-go's
// watch returns it. The stream is asked for as JSON, whatever the config prefers: the
// decoder reads JSON.
func (w *watcher) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	opts.AllowWatchBookmarks = true
	body, err := w.rest.Get().Resource("leaderboardrows").VersionedParams(&opts, metav1.ParameterCodec).
		SetHeader("Accept", runtime.ContentTypeJSON).Stream(ctx)
	if err != nil {
		return nil, err
	}
	return watch.NewStreamWatcher(NewDecoder(body), apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// event is one watch event as the apiserver writes it ({"type":..., "object":...}).
type event struct {
	Type   watch.EventType `json:"type"`
	Object eventObject     `json:"object"`
}

// eventObject holds the object of any event in one pass: a row (ADDED, MODIFIED,
// DELETED, BOOKMARK), or the metav1.Status of an ERROR event. A Status's fields are
// the row's plus code, reason, message and details, except its "status", a string
// where a row's is an object: decoding an ERROR event therefore reports a type error
// for that one field, and fills every other (encoding/json's rule), which Decode
// ignores for ERROR events only.
type eventObject struct {
	hubv1alpha1.LeaderboardRow `json:",inline"`

	Code    int32                 `json:"code,omitempty"`
	Reason  metav1.StatusReason   `json:"reason,omitempty"`
	Message string                `json:"message,omitempty"`
	Details *metav1.StatusDetails `json:"details,omitempty"`
}

// Decoder reads watch events of rows from a stream (a watch.Decoder).
type Decoder struct {
	body io.ReadCloser
	dec  kjson.Decoder
}

// NewDecoder decodes the watch events body carries; Close closes body.
func NewDecoder(body io.ReadCloser) *Decoder {
	return &Decoder{body: body, dec: kjson.NewDecoderCaseSensitivePreserveInts(body)}
}

// Decode returns the next event: a *LeaderboardRow with an empty type meta, as
// client-go's decoder leaves typed objects, or the *metav1.Status of an ERROR event.
// It returns the stream's end (io.EOF) and its errors as they are.
func (d *Decoder) Decode() (watch.EventType, runtime.Object, error) {
	var ev event
	err := d.dec.Decode(&ev)
	if ev.Type == watch.Error && (ev.Object.Code != 0 || ev.Object.Message != "") {
		return watch.Error, &metav1.Status{
			Status: metav1.StatusFailure, Code: ev.Object.Code, Reason: ev.Object.Reason,
			Message: ev.Object.Message, Details: ev.Object.Details,
		}, nil
	}
	if err != nil {
		return "", nil, err
	}
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		row := new(hubv1alpha1.LeaderboardRow)
		*row = ev.Object.LeaderboardRow
		row.SetGroupVersionKind(schema.GroupVersionKind{})
		return ev.Type, row, nil
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %q", ev.Type)
	}
}

// Close closes the stream.
func (d *Decoder) Close() { _ = d.body.Close() }
