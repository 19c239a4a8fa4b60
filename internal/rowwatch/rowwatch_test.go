package rowwatch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowwatch"
	"podium.dev/podium/internal/scheme"
)

// row is a row as the apiserver sends it once the operator has written its status:
// managed fields of two writers, the board's label and controller reference, values
// with a large integer and a float, trial links and both conditions.
func row() *hubv1alpha1.LeaderboardRow {
	t := true
	at := metav1.NewTime(time.Date(2026, 12, 1, 15, 58, 41, 0, time.UTC))
	r := &hubv1alpha1.LeaderboardRow{
		TypeMeta: metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "LeaderboardRow"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "main-539cd987-222sv", GenerateName: "main-539cd987-", Namespace: "abx",
			UID: "104e459c-b0d5-40fb-8fff-04287ec44a57", ResourceVersion: "4460", Generation: 1,
			CreationTimestamp: at,
			Labels:            map[string]string{hubv1alpha1.LabelLeaderboard: "main-539cd987"},
			Annotations:       map[string]string{hubv1alpha1.AnnotationUpdatedAt: "2026-12-01T15:58:41Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard",
				Name: "main-539cd987", UID: "70f6d0b6-70e9-4a9f-979e-1e4830ade18e", Controller: &t}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "podium-cli", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "hub.podium.dev/v1alpha1", Time: &at,
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{".":{},"f:leaderboard":{}}}`)},
				{Manager: "podium-operator", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "hub.podium.dev/v1alpha1", Time: &at,
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{".":{},"f:id":{}}}`), Subresource: "status"},
			},
		},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: "main-539cd987",
			Metadata:    &apiextensionsv1.JSON{Raw: []byte(`{"agent":"agent-45","seed":9007199254740993}`)},
			Metrics:     &apiextensionsv1.JSON{Raw: []byte(`{"reward":0.25,"tokens":12345678901234567}`)},
			TrialIDs:    []string{"00000000-0000-4000-8000-000000000045"},
		},
	}
	r.Status.ID = string(r.UID)
	r.Status.ObservedGeneration = 1
	meta.SetStatusCondition(&r.Status.Conditions, metav1.Condition{Type: hubv1alpha1.ConditionValid, Status: metav1.ConditionTrue,
		Reason: "ValuesValid", Message: "The values match the leaderboard's schemas", ObservedGeneration: 1, LastTransitionTime: at})
	meta.SetStatusCondition(&r.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
		Reason: "Ranked", Message: "ok", ObservedGeneration: 1, LastTransitionTime: at})
	return r
}

// line is one watch event as the apiserver writes it.
func line(t *testing.T, typ watch.EventType, obj any) string {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := json.Marshal(metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}})
	if err != nil {
		t.Fatal(err)
	}
	return string(ev) + "\n"
}

// clientGo decodes a stream as client-go's watch does (the JSON stream serializer's
// framer, the watch event decoder, then the object decoded without conversion).
func clientGo(body string) watch.Decoder {
	codecs := serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme.Scheme)}
	var info runtime.SerializerInfo
	for _, i := range codecs.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeJSON {
			info = i
		}
	}
	frames := info.StreamSerializer.NewFrameReader(io.NopCloser(strings.NewReader(body)))
	return restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer),
		codecs.DecoderToVersion(info.Serializer, hubv1alpha1.GroupVersion))
}

// TestDecodesAsClientGo: every kind of event a watch of rows carries comes out of the
// decoder as client-go's own decoder gives it, the informer's objects are the same.
func TestDecodesAsClientGo(t *testing.T) {
	bookmark := &hubv1alpha1.LeaderboardRow{
		TypeMeta:   metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "LeaderboardRow"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: "5000", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
	}
	fresh := row()
	fresh.ManagedFields, fresh.Status = fresh.ManagedFields[:1], hubv1alpha1.LeaderboardRowStatus{}
	gone := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Message: "too old resource version: 10 (4460)", Reason: metav1.StatusReasonExpired, Code: http.StatusGone}
	failed := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Message: "internal error", Reason: metav1.StatusReasonInternalError, Code: http.StatusInternalServerError,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "UnexpectedServerResponse", Message: "boom"}}}}
	cases := []struct {
		name string
		typ  watch.EventType
		obj  any
	}{
		{"a new row", watch.Added, fresh},
		{"its status written", watch.Modified, row()},
		{"deleted", watch.Deleted, row()},
		{"the end of the initial events", watch.Bookmark, bookmark},
		{"a resourceVersion too old", watch.Error, gone},
		{"a server error with details", watch.Error, failed},
	}
	var stream strings.Builder
	for _, c := range cases {
		stream.WriteString(line(t, c.typ, c.obj))
	}
	want, got := clientGo(stream.String()), rowwatch.NewDecoder(io.NopCloser(strings.NewReader(stream.String())))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wt, wo, werr := want.Decode()
			gt, gotObj, gerr := got.Decode()
			if werr != nil || gerr != nil {
				t.Fatalf("client-go: %v; rowwatch: %v", werr, gerr)
			}
			if gt != wt || gt != c.typ {
				t.Fatalf("type %q, client-go %q, sent %q", gt, wt, c.typ)
			}
			if !equality.Semantic.DeepEqual(gotObj, wo) {
				t.Fatalf("rowwatch decoded\n%#v\nclient-go decoded\n%#v", gotObj, wo)
			}
		})
	}
	if _, _, err := got.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}

// TestErrorEventIsTheApiserversStatus: a 410 in the stream reads as the error the
// reflector relists on.
func TestErrorEventIsTheApiserversStatus(t *testing.T) {
	gone := &metav1.Status{Status: metav1.StatusFailure, Message: "too old resource version", Reason: metav1.StatusReasonExpired, Code: http.StatusGone}
	d := rowwatch.NewDecoder(io.NopCloser(strings.NewReader(line(t, watch.Error, gone))))
	typ, obj, err := d.Decode()
	if err != nil || typ != watch.Error {
		t.Fatalf("%q, %v", typ, err)
	}
	if e := apierrors.FromObject(obj); !apierrors.IsResourceExpired(e) {
		t.Fatalf("%v is not a resource expired error", e)
	}
}

// TestBadStreams: what is not a watch event of rows is an error, never an object.
func TestBadStreams(t *testing.T) {
	cases := map[string]string{
		"not JSON":            "{\"type\":\"ADDED\",\"object\":{\"metadata\":\n",
		"an unknown type":     `{"type":"RENAMED","object":{"metadata":{"name":"a"}}}`,
		"a row of wrong type": `{"type":"ADDED","object":{"spec":{"trialIDs":"one"}}}`,
		"no type":             `{"object":{"metadata":{"name":"a"}}}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			d := rowwatch.NewDecoder(io.NopCloser(bytes.NewReader([]byte(body))))
			if typ, obj, err := d.Decode(); err == nil {
				t.Fatalf("decoded %q %#v from %q", typ, obj, body)
			}
		})
	}
}

// BenchmarkDecode compares a row's two watch events (its create, its status) decoded
// by client-go's watch decoder and by rowwatch (docs/performance.md, "Rows in").
func BenchmarkDecode(b *testing.B) {
	t := &testing.T{}
	fresh := row()
	fresh.ManagedFields, fresh.Status = fresh.ManagedFields[:1], hubv1alpha1.LeaderboardRowStatus{}
	stream := line(t, watch.Added, fresh) + line(t, watch.Modified, row())
	decode := func(b *testing.B, d watch.Decoder) {
		for range 2 {
			if _, _, err := d.Decode(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decode(b, clientGo(stream))
		}
	})
	b.Run("rowwatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decode(b, rowwatch.NewDecoder(io.NopCloser(strings.NewReader(stream))))
		}
	})
}
